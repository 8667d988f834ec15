#include "app/report/report_html.h"

#include "app/report/report_text.h"

namespace llmwb {

std::string report_html(const BenchReport& report) {
    return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" +
           report_detail::html_escape(report.title) + "</title></head><body></body></html>\n";
}

} // namespace llmwb
