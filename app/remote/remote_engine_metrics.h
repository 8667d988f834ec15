// What a remote engine's /metrics tells the app's charts: requests running and waiting, KV cache
// usage, prompt and generation throughput (counter differences between two scrapes), TTFT (mean
// and approximate percentiles of the histogram), preemptions and the prefix-cache hit rate. From
// vLLM's names (vllm:num_requests_running, vllm:num_requests_waiting, vllm:kv_cache_usage_perc or
// the older vllm:gpu_cache_usage_perc, vllm:prompt_tokens_total, vllm:generation_tokens_total,
// vllm:time_to_first_token_seconds, vllm:num_preemptions_total, vllm:prefix_cache_queries_total /
// _hits_total; SGLang and `llmwb serve` use the same) and llama.cpp's server started with
// --metrics (llamacpp:requests_processing, llamacpp:requests_deferred,
// llamacpp:kv_cache_usage_ratio, llamacpp:prompt_tokens_total, llamacpp:tokens_predicted_total).
// What a server does not expose stays unavailable (nullopt), never 0; a non-finite value (NaN,
// Inf) is unavailable too. Several engines behind one endpoint (data-parallel ranks, label
// "engine") add up; KV usage is their mean.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/remote/prometheus_text.h"

namespace llmwb::remote {

// One scrape's figures, with rates against the previous scrape.
struct RemoteMetricsSample {
    double time_s = 0;       // when the scrape was taken (the caller's clock)
    std::string server_kind; // "vllm" | "llama.cpp" | "" (neither family found)
    std::optional<double> running, waiting;
    std::optional<double> kv_usage; // fraction 0..1
    std::optional<double> prompt_tokens_total, generation_tokens_total;
    // tokens/s between the previous scrape and this one (a counter that went down — a server
    // restart — gives no rate for that interval)
    std::optional<double> prompt_throughput, generation_throughput;
    // TTFT over the requests that finished their first token since the previous scrape (nullopt
    // when none did), from the histogram: mean = Δsum / Δcount; percentiles interpolated within
    // buckets as Prometheus's histogram_quantile.
    std::optional<double> ttft_mean_s, ttft_p50_s, ttft_p90_s, ttft_p99_s;
    // ... and over the server's whole life.
    std::optional<double> ttft_mean_all_s;
    std::optional<double> preemptions_total;
    std::optional<double> prefix_cache_queries_total, prefix_cache_hits_total; // tokens
    std::optional<double> prefix_cache_hit_rate; // hits / queries over the server's life
};

// A histogram's cumulative buckets (upper bound, count), ascending, +Inf last.
using HistogramBuckets = std::vector<std::pair<double, double>>;
// Prometheus's histogram_quantile: linear inside the bucket that holds rank q x count; nullopt
// without observations or buckets; the highest finite bound when the rank lands in +Inf.
std::optional<double> histogram_quantile(double q, const HistogramBuckets& buckets);

class RemoteEngineMetrics {
  public:
    // Only samples with this model_name label (or without one) count; "" = all.
    explicit RemoteEngineMetrics(std::string model_name = "") : model_(std::move(model_name)) {}

    // Takes one scrape made at time_s (seconds, steady) and returns its figures.
    RemoteMetricsSample update(const PromScrape& scrape, double time_s);
    const std::optional<RemoteMetricsSample>& last() const { return last_; }

  private:
    std::string model_;
    std::optional<RemoteMetricsSample> last_;
    // The TTFT histogram of the previous scrape (differences give the interval's).
    HistogramBuckets prev_ttft_;
    double prev_ttft_sum_ = 0, prev_ttft_count_ = 0;
    bool have_prev_ttft_ = false;
};

class OpenAiClient;

// Fetches `client`'s /metrics, parses it and feeds `metrics` (time_s: the caller's clock).
// Errors: the fetch (a server without /metrics answers 404: its figures are unavailable) or the
// parse, naming the endpoint.
Result<RemoteMetricsSample> scrape_metrics(OpenAiClient& client, RemoteEngineMetrics& metrics,
                                           double time_s);

} // namespace llmwb::remote
