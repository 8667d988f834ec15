// A benchmark report as values: one or more runs (a policy comparison, a sweep over one setting,
// or a single run), each with what ran (workload and every engine setting), what came out
// (vLLM's figures and llmwb's), one row per request and one per engine step, and the machine
// it ran on. The GUI stores runs in SQLite, the CLI and the GUI write reports (a zip: report.html,
// results.json, requests.csv, steps.csv, environment.json) and an imported report gives the same
// values back. Qt-free: the CLI builds on machines without Qt.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/serving/bench_runner.h"
#include "engine/serving/bench_session.h"
#include "engine/util/result.h"

namespace llmwb {

// The report format's version, written into results.json (every line) and environment.json.
// A reader refuses any other version by name.
inline constexpr int kBenchReportVersion = 1;

// The files of a report, by name.
inline constexpr const char* kReportHtml = "report.html";
inline constexpr const char* kReportResults = "results.json";
inline constexpr const char* kReportRequests = "requests.csv";
inline constexpr const char* kReportSteps = "steps.csv";
inline constexpr const char* kReportEnvironment = "environment.json";
// Think harder runs (issue 20), when the report has any: think.json (the runs, an array of
// think_types.h's objects) and think.csv (one row per rung).
inline constexpr const char* kReportThink = "think.json";
inline constexpr const char* kReportThinkCsv = "think.csv";

enum class BenchRunStatus { Completed, Cancelled, Failed };
const char* bench_run_status_name(BenchRunStatus s); // "completed" | "cancelled" | "failed"
bool parse_bench_run_status(std::string_view name, BenchRunStatus* out);

struct BenchRun {
    std::string name;   // "continuous", "max_num_seqs=8", a user's label
    std::string policy; // continuous | static | sequential
    BenchRunStatus status = BenchRunStatus::Completed;
    std::string error;    // why it failed or was cancelled ("" when completed)
    std::string date;     // local start time, vLLM's format "YYYYmmdd-HHMMSS"
    std::string model_id; // the model's name as the user knows it (file or folder name)
    std::string backend = "llmwb";
    // A sweep point: the swept setting (vLLM's name: "max_num_seqs", "gpu_memory_utilization",
    // "max_num_batched_tokens", "block_size", "num_speculative_tokens", "kv_cache_dtype") and
    // its value here; "" when the run is not part of a sweep.
    std::string sweep_setting;
    double sweep_value = 0;
    // vLLM's --percentile-metrics (a subset of ttft,tpot,itl,e2el); the percentiles themselves
    // are in the figures' LatencyStats::percentiles (vLLM's --metric-percentiles).
    std::string percentile_metrics = "ttft,tpot,itl,e2el";
    // {"workload": {num_prompts, input_len, output_len, range_ratio, prefix_len, request_rate,
    //  burstiness, max_concurrency, seed, dataset}, "engine": {every engine setting by vLLM's
    //  name}}
    nlohmann::ordered_json settings = nlohmann::ordered_json::object();
    BenchResult figures;
    std::vector<BenchRequestRow> requests;
    std::vector<BenchStepRow> steps;
};

struct BenchReport {
    std::string title;
    // environment.json: CPU model and SIMD level, cores, RAM, GPU/driver/compute capability,
    // OS, app version and commit, model file name/size/SHA-256, weight and KV dtypes, the
    // engine settings of the first run.
    nlohmann::ordered_json environment = nlohmann::ordered_json::object();
    std::vector<BenchRun> runs;
    // Think harder runs exported with the benchmark runs (an array; empty: no think files).
    nlohmann::ordered_json think = nlohmann::ordered_json::array();
};

// Cost of 1M tokens at `price_per_hour` for a run producing `tokens_per_s`:
// price / (tokens/s x 3,600) x 1,000,000. 0 when there is no throughput.
inline double cost_per_million_tokens(double price_per_hour, double tokens_per_s) {
    return tokens_per_s > 0 ? price_per_hour / (tokens_per_s * 3600.0) * 1e6 : 0;
}

} // namespace llmwb
