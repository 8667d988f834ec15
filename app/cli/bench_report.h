// What `llmwb bench` prints and saves: vLLM's result block on stdout (plus the KV cache and
// prefix-cache figures), llmwb's JSON report of every policy (--json FILE) and vLLM's result
// file (--save-result, with --save-detailed its per-request arrays) under vLLM's keys.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/bench_options.h"
#include "app/cli/bench_records.h"
#include "engine/serving/bench_runner.h"
#include "engine/tokenizer/tokenizer.h"

namespace llmwb::cli {

// vLLM's block: for each latency of `metrics` (ttft, tpot, itl, e2el) its mean, median and the
// percentiles of its LatencyStats ("P99 TTFT (ms):", "P99.9 TTFT (ms):").
// engine_figures false (a remote endpoint): the KV block, step and speculative figures are not
// measurable from a client; one line says so instead, and the block is left open (no closing
// line) for the server's /metrics figures.
void print_bench_result(const std::string& title, const BenchResult& r,
                        const std::vector<std::string>& metrics = {"ttft", "tpot", "itl", "e2el"},
                        bool engine_figures = true);

// One policy's figures in llmwb's report (vLLM's names where vLLM has the figure).
nlohmann::json bench_result_json(const BenchResult& r);
// The engine-side keys of bench_result_json (KV cache, prefix cache, preemptions, steps): for a
// remote endpoint they are present with null values (unavailable, not 0).
void null_engine_keys(nlohmann::json& j);

// vLLM's --save-detailed arrays, one entry per request.
struct VllmDetails {
    nlohmann::ordered_json input_lens = nlohmann::ordered_json::array(),
                           output_lens = nlohmann::ordered_json::array(),
                           ttfts = nlohmann::ordered_json::array(),
                           itls = nlohmann::ordered_json::array(),
                           generated_texts = nlohmann::ordered_json::array(),
                           errors = nlohmann::ordered_json::array();
    std::optional<nlohmann::ordered_json> output_ids; // llmwb's, in-process runs only
};

// Who ran the requests, as vLLM's result file names it: endpoint_type / backend ("llmwb" for
// in-process runs; "openai" or "openai-chat" for an endpoint, with its base_url).
struct ResultSource {
    std::string endpoint_type = "llmwb", backend = "llmwb";
    std::string base_url; // "" in-process
};

// The load keys as vLLM writes them: request_rate ("inf" for all at once), burstiness,
// max_concurrency (null without a cap).
void put_load_keys(nlohmann::ordered_json& j, const BenchOptions& o);

// vLLM's result file for one run: its keys (date, backend, model_id, num_prompts,
// request_rate, burstiness, max_concurrency, duration, completed, failed, total_input_tokens,
// total_output_tokens, *_throughput, max_output_tokens_per_s, max_concurrent_requests, mean/
// median/std and p{q} (o.metric_percentiles) of every latency in o.percentile_metrics, in ms);
// detailed: input_lens, output_lens, ttfts and itls (in seconds, as vLLM), generated_texts,
// errors, and output_ids (llmwb's: runs can be compared token for token).
nlohmann::ordered_json vllm_result_json(const BenchOptions& o, const std::string& model_id,
                                        const BenchResult& r, const BenchRecorder& records,
                                        const Tokenizer& tokenizer, bool detailed);

// Where --save-result writes: result_dir / (result_filename, or
// "<label>-<rate>qps[-concurrency<N>]-<model>-<YYYYmmdd-HHMMSS>.json" as vLLM names it).
// The same from the parts: num_prompts requests, `details` when detailed.
nlohmann::ordered_json vllm_result_json(const BenchOptions& o, const std::string& model_id,
                                        const BenchResult& r, size_t num_prompts,
                                        const ResultSource& source, const VllmDetails* details);

std::string vllm_result_path(const BenchOptions& o, const std::string& model_name);

// Now, local time, as vLLM stamps a run: "%Y%m%d-%H%M%S".
std::string now_stamp();

} // namespace llmwb::cli
