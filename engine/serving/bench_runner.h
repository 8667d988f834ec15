// The workload runner behind `llmwb bench`: submits BenchRequests to an Engine (all at once or
// at their arrival times, under a concurrency cap), steps it until every request finished and
// reports the figures vLLM's benchmark reports, under the same names.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/serving/bench_workload.h"
#include "engine/serving/engine.h"

namespace llmwb {

struct BenchRunOptions {
    double request_rate = 0;     // requests/s; <= 0 or inf: all at once
    double burstiness = 1.0;     // gamma shape of the arrival gaps (1: Poisson; > 0)
    int32_t max_concurrency = 0; // 0: no cap
    uint64_t seed = 0;
    // Static batching: submit only when the engine is idle, a full batch (batch_size requests,
    // or all that remain) at a time.
    bool static_batches = false;
    int32_t batch_size = 0;
    // Static batching as a padded batch runs it (Hugging Face generate(), FasterTransformer): every
    // prompt of a batch is left-padded to the batch's longest prompt and every row keeps decoding
    // until the batch's longest output is done; the extra rows are computed and thrown away, and
    // a request's result is complete only when its batch is. Output counts include only the
    // requested tokens. Without padding, static batching only differs from continuous batching
    // by not admitting new requests while a batch runs.
    bool static_padding = true;
    int32_t pad_token_id = 0;
    // Called after every step (progress display); may be empty.
    std::function<void(const StepOutputs&, int32_t done, int32_t total)> on_step;
};

struct LatencyStats {
    double mean = 0, median = 0, p99 = 0, std = 0;
    // (q, value) for each percentile asked for (vLLM's --metric-percentiles), in that order.
    std::vector<std::pair<double, double>> percentiles;
};
// numpy's "linear" percentiles, as vLLM computes them.
LatencyStats latency_stats(std::vector<double> values_ms,
                           const std::vector<double>& percentiles = {99});

// Which engine-side figures a run has. An in-process run has all of them; a run against an HTTP
// endpoint has none of the engine's internals (block pool, steps, batch sizes, a request's
// preemptions and prefix hits) and KV usage, preemptions and prefix-cache counters only where
// the server's /metrics gave them. Report writers show a missing figure as null (JSON), an empty
// cell (CSV) or "n/a" (HTML, text, comparisons), never as 0.
struct BenchFigureAvailability {
    bool engine = true;       // num_blocks, block_size, kv_waste_*, contiguous_waste, steps,
                              // mean_batch_size; requests' preemptions and prefix_hit_tokens
    bool kv_usage = true;     // mean_kv_usage, peak_kv_usage
    bool preemptions = true;  // preemptions (the run's total)
    bool prefix_cache = true; // prefix_cache_queries, prefix_cache_hits, prefix_cache_hit_rate
    bool operator==(const BenchFigureAvailability&) const = default;
};

struct BenchResult {
    BenchFigureAvailability available;
    int32_t completed = 0;
    int32_t failed = 0; // requests that ended with an error or were cancelled
    // The load asked for (vLLM's request_rate, burstiness, max_concurrency): rate inf = all at
    // once.
    double request_rate = 0, burstiness = 1.0;
    int32_t max_concurrency = 0;
    // vLLM's peak figures: the most output tokens sampled in one whole second, and the most
    // requests in flight during one such second.
    double max_output_tokens_per_s = 0;
    int32_t max_concurrent_requests = 0;
    double duration_s = 0;
    int64_t total_input_tokens = 0, total_output_tokens = 0;
    double request_throughput = 0;     // requests/s
    double output_throughput = 0;      // output tokens/s
    double total_token_throughput = 0; // (input + output) tokens/s
    LatencyStats ttft_ms, tpot_ms, itl_ms, e2el_ms;
    // KV cache.
    int32_t num_blocks = 0, block_size = 0;
    double mean_kv_usage = 0, peak_kv_usage = 0; // fraction of blocks in use
    // Allocated minus used token slots, summed over steps, as a fraction of what contiguous
    // per-request preallocation to max length (prompt + max_tokens) would reserve, and as a
    // fraction of the allocated slots.
    double kv_waste_vs_contiguous = 0, kv_waste_vs_allocated = 0;
    double contiguous_waste = 0; // (reserved - used) / reserved for contiguous preallocation
    int64_t prefix_cache_queries = 0, prefix_cache_hits = 0;
    double prefix_cache_hit_rate = 0;
    int64_t preemptions = 0;
    int64_t steps = 0;
    double mean_batch_size = 0;
    std::vector<double> per_request_ttft_ms; // in submission order
    SpeculativeStats speculative;            // drafts verified during the run
};

// vLLM's request figures (benchmarks/serve.py, calculate_metrics) over the rows of a run, for
// the in-process session and for runs against an HTTP endpoint alike: input/output totals of the
// successful rows (finish_s >= 0, no error), TTFT, TPOT and E2EL per row, the ITLs given, the
// throughputs over res.duration_s, and the peak figures (token_s[i]: when row i's output tokens
// arrived, seconds from the run's start). Sets those fields of `res`, nothing else.
struct BenchRequestRow;
void put_request_figures(BenchResult& res, const std::vector<BenchRequestRow>& rows,
                         const std::vector<std::vector<double>>& token_s,
                         const std::vector<double>& itls_ms,
                         const std::vector<double>& percentiles);

// Runs every request greedily (temperature 0) with ignore_eos: exactly output_len tokens each
// (fewer only at the context limit). Errors: a request the engine rejects.
Result<BenchResult> run_bench(Engine& engine, const std::vector<BenchRequest>& requests,
                              const BenchRunOptions& options);

} // namespace llmwb
