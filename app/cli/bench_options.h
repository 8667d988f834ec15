// The options of `llmwb bench`, parsed once. Besides its own names, bench takes the names of
// vLLM's `vllm bench serve` where they mean the same thing here (--random-input-len,
// --random-output-len, --random-range-ratio, --random-prefix-len, --dataset-name random,
// --request-rate, --burstiness, --max-concurrency, --num-prompts, --seed, --ignore-eos,
// --disable-tqdm, --label, --save-result, --save-detailed, --result-dir, --result-filename), and
// refuses every other `vllm bench serve` option by name, with the reason (never ignored).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli/cli_options.h"
#include "engine/serving/bench_workload.h"
#include "engine/serving/scheduler.h"

namespace llmwb::cli {

struct BenchPolicy {
    std::string name; // continuous | static | sequential
    SchedulerPolicy policy;
};

struct BenchOptions {
    std::optional<std::string> model; // --model (nullopt: the demo model)
    RandomWorkloadSpec spec;
    std::optional<std::string> dataset; // --dataset FILE.jsonl (else the random dataset)
    double request_rate = 0;            // requests/s; inf: all at once
    double burstiness = 1.0;            // gamma shape of the inter-arrival times (1: Poisson)
    int32_t max_concurrency = 0;        // 0: no cap
    int32_t baseline_prompts = 0;       // 'sequential' runs only the first N (0: all)
    std::vector<BenchPolicy> policies;
    bool static_padding = true;
    bool progress = true;                 // --quiet / --disable-tqdm: none
    std::optional<std::string> json_path; // --json FILE: llmwb's report of every policy
    // vLLM's result file: --save-result [--result-dir D] [--result-filename F] [--save-detailed]
    bool save_result = false, save_detailed = false;
    std::string result_dir, result_filename, label;
    DeviceOptions device;
    EngineOptions engine;
};

const OptionNames& bench_option_names();
extern const char* kBenchHelp;

// `vllm bench serve` options llmwb bench does not support: the reason, or nullopt when `name`
// (without "--") is not one of them.
std::optional<std::string> unsupported_vllm_option(std::string_view name);

// Parses bench's arguments (without --help). Errors name the option.
Result<BenchOptions> parse_bench_options(const std::vector<std::string>& argv);

} // namespace llmwb::cli
