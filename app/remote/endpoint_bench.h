// `llmwb bench --endpoint`: the bench workload sent to an OpenAI-compatible endpoint over HTTP,
// with vLLM's `vllm bench serve` semantics. Requests are released at their arrival times
// (make_arrival_times: rate, burstiness, seed) to a pool of worker connections, one per request in
// flight: max_concurrency workers when capped (vLLM's semaphore: a request's clock starts when it
// gets a worker), else max_clients. Each request streams (stream_options.include_usage), greedy
// (temperature 0) with ignore_eos, and is measured on the client side (openai_client.h). The
// figures are BenchResult's, computed by the same put_request_figures as in-process runs. The
// engine-side ones come from the server's /metrics where it has one (scraped before the run,
// every scrape_interval_s during it and after it: KV usage mean and peak over the scrapes made
// while requests ran, preemptions and prefix-cache counters as differences); what it does not
// expose stays unavailable (ServerFigures' nullopts), never 0.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "app/remote/openai_client.h"
#include "app/remote/remote_engine_metrics.h"
#include "engine/serving/bench_runner.h"
#include "engine/serving/bench_session.h"

namespace llmwb::remote {

struct EndpointBenchRequest {
    std::string prompt;
    int32_t input_tokens = 0; // the workload's count (the server's usage.prompt_tokens wins)
    int32_t output_len = 0;   // max_tokens
};

struct EndpointBenchOptions {
    EndpointConfig endpoint;
    EndpointType type = EndpointType::Completions;
    double request_rate = std::numeric_limits<double>::infinity();
    double burstiness = 1.0;
    int32_t max_concurrency = 0; // 0: no cap (max_clients connections at most)
    int32_t max_clients = 256;
    uint64_t seed = 0;
    std::vector<double> percentiles = {99};
    // Output tokens of a request whose server sent no usage (vLLM re-tokenizes the generated
    // text); empty: the number of token chunks.
    std::function<int32_t(const std::string&)> count_tokens;
    std::function<void(int32_t done, int32_t total)> on_progress; // from worker threads, locked
    bool scrape_metrics = true;
    double scrape_interval_s = 1.0;
};

// The server's own figures over the run, from its /metrics.
struct ServerFigures {
    std::string server_kind; // "vllm" | "llama.cpp" | ""
    int32_t scrapes = 0;     // taken while requests ran
    std::optional<double> mean_kv_usage, peak_kv_usage;
    std::optional<int64_t> preemptions, prefix_cache_queries, prefix_cache_hits;
};

struct EndpointRequestRecord {
    CompletionResult out; // text, usage, ttft/itl/latency
    std::string error;    // "" when it succeeded
    // How the output tokens were counted: "usage", "tokenizer" or "chunks".
    std::string output_count_source;
};

struct EndpointBenchRun {
    BenchResult result;
    std::vector<BenchRequestRow> rows;          // arrival_s = when the request was sent
    std::vector<EndpointRequestRecord> records; // per request, in the workload's order
    std::vector<std::vector<double>> token_s;   // token chunk arrivals, from the run's start
    std::optional<ServerFigures> server;        // nullopt: no /metrics (metrics_error says why)
    std::string metrics_error;
};

// Sets res's engine-side figures from what the server's /metrics gave (nullopt: no /metrics) and
// marks the rest unavailable (res.available): an endpoint run never reports them as 0.
void put_server_figures(BenchResult& res, const std::optional<ServerFigures>& server);

// Errors: a bad endpoint URL. Failed requests are rows with an error (vLLM's "failed").
Result<EndpointBenchRun> run_endpoint_bench(const std::vector<EndpointBenchRequest>& requests,
                                            const EndpointBenchOptions& options);

} // namespace llmwb::remote
