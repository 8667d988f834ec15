// libFuzzer target: benchmark report files as File > Import benchmark report and `llmwb
// report` read them (parse_report_files over results.json, requests.csv, steps.csv,
// environment.json). The input holds the files one after another, each after a line
// "@@ NAME" (make_fuzz_corpus writes real reports that way). A report that parses is written
// back with report_files and must parse again (the writer and the reader agree).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "app/report/report_files.h"

namespace {

llmwb::ReportFiles split(std::string_view in) {
    llmwb::ReportFiles files;
    size_t pos = 0;
    while (pos < in.size()) {
        size_t eol = in.find('\n', pos);
        const size_t end = eol == std::string_view::npos ? in.size() : eol + 1;
        const std::string_view line = in.substr(pos, end - pos);
        if (line.substr(0, 3) == "@@ ") {
            std::string_view name = line.substr(3);
            if (!name.empty() && name.back() == '\n')
                name.remove_suffix(1);
            files.emplace_back(std::string(name), std::string());
        } else if (!files.empty()) {
            files.back().second.append(line);
        }
        pos = end;
    }
    return files;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto files = split(std::string_view(reinterpret_cast<const char*>(data), size));
    auto report = llmwb::parse_report_files(files);
    if (!report)
        return 0;
    llmwb::ReportFiles again = llmwb::report_files(*report);
    auto reread = llmwb::parse_report_files(again);
    if (!reread)
        __builtin_trap(); // the writer wrote what the reader refuses
    return 0;
}
