// The options of `llmwb bench`, parsed once. Besides its own names, bench takes the names of
// vLLM's `vllm bench serve` where they mean the same thing here (--random-input-len,
// --random-output-len, --random-range-ratio, --random-prefix-len, --dataset-name random,
// --request-rate, --burstiness, --max-concurrency, --num-prompts, --seed, --ignore-eos,
// --disable-tqdm, --label, --save-result, --save-detailed, --result-dir, --result-filename,
// --percentile-metrics, --metric-percentiles), and refuses every other `vllm bench serve` option
// by name, with the reason (never ignored). With --endpoint (or vLLM's --base-url) the workload
// goes to an OpenAI-compatible server; the engine and device options are then refused.
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

// `llmwb bench --endpoint URL`: the workload sent to an OpenAI-compatible endpoint instead of
// the in-process engine. vLLM's spelling works too: --base-url URL --endpoint /v1/completions
// (or /v1/chat/completions), --backend openai|vllm|openai-chat, --served-model-name.
struct BenchEndpoint {
    std::string base_url; // scheme://host:port[/prefix] (a trailing /v1 is fine)
    std::string type;     // "completions" | "chat"
    std::string model;    // the name sent as "model" (--served-model-name, else --model)
    std::string api_key;  // --api-key, else $OPENAI_API_KEY, else none
    // A local model (GGUF file or HF folder) whose tokenizer turns the workload's token ids into
    // text and counts output tokens when the server sends no usage: --tokenizer, else --model
    // when it names an existing path; nullopt: text prompts of random words.
    std::optional<std::string> tokenizer;
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
    // vLLM's --percentile-metrics (which latencies get percentiles, in vLLM's order of the
    // list given) and --metric-percentiles (which percentiles): they choose the printed lines and
    // the p{q}_{metric}_ms keys of --save-result and of the report.
    std::vector<std::string> percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
    std::vector<double> metric_percentiles = {99};
    // --report OUT: the benchmark report, a zip when OUT ends in .zip, else a folder.
    std::optional<std::string> report;
    DeviceOptions device;
    EngineOptions engine;
    std::optional<BenchEndpoint> endpoint; // --endpoint: a remote run
};

const OptionNames& bench_option_names();
extern const char* kBenchHelp;

// `vllm bench serve` options llmwb bench does not support: the reason, or nullopt when `name`
// (without "--") is not one of them.
std::optional<std::string> unsupported_vllm_option(std::string_view name);

// A percentile as vLLM writes it in keys and labels: "99", "99.9", "50" (Python's
// str(int(q)) when q is whole, else str(q)).
std::string vllm_percentile_name(double q);
// "ttft,tpot" -> {"ttft", "tpot"}; errors name the option and the bad item.
Result<std::vector<std::string>> parse_percentile_metrics(const std::string& list);
// "50,90,99" -> {50, 90, 99}: numbers in [0, 100], no duplicates, at most 32.
Result<std::vector<double>> parse_metric_percentiles(const std::string& list);

// Parses bench's arguments (without --help). Errors name the option.
Result<BenchOptions> parse_bench_options(const std::vector<std::string>& argv);

} // namespace llmwb::cli
