// Two or more runs side by side: each figure's value per run and its difference from the first
// run in percent (what `llmwb report compare` prints and the app's comparison table shows).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/report/bench_report.h"

namespace llmwb {

struct CompareRow {
    std::string key;  // vLLM's key ("output_throughput", "p99_ttft_ms", ...) or llmwb's
    std::string unit; // "tok/s", "ms", "%", "" ...
    bool higher_is_better = true;
    std::vector<std::optional<double>> values;   // per run (nullopt: the run lacks it)
    std::vector<std::optional<double>> diff_pct; // per run vs the first ([0] is 0)
};

std::vector<CompareRow> compare_runs(const std::vector<const BenchRun*>& runs);
// A plain-text table of compare_runs (one column per run, headed by its name).
std::string compare_text(const std::vector<const BenchRun*>& runs);
// A run's summary as `llmwb report show` prints it (vLLM's result block plus llmwb's figures).
std::string run_summary_text(const BenchRun& run);

} // namespace llmwb
