// report.html: one self-contained page (inline CSS and SVG charts; no scripts, fonts or images
// from anywhere) that reads well in any browser and prints: summary, settings, environment,
// vLLM's figures per run, throughput over time, KV usage over time, batch size per step,
// latency histograms, and for a sweep the figures over the swept setting. Every text from the
// report is HTML-escaped (model names and labels come from strangers too).
#pragma once

#include <string>

#include "app/report/bench_report.h"

namespace llmwb {

std::string report_html(const BenchReport& report);

} // namespace llmwb
