#include "engine/serving/serving_metrics.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <mutex>

#include "engine/serving/prometheus_histogram.h"
#include "engine/serving/prometheus_writer.h"

namespace llmwb {

namespace {

using metrics::Histogram;
using metrics::Label;

// vLLM's buckets (vllm/v1/metrics/loggers.py).
constexpr double kTtftBounds[] = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                  0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                  20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
constexpr double kTokenLatencyBounds[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                          0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
constexpr double kRequestLatencyBounds[] = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                            5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                            60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
constexpr double kIterationTokenBounds[] = {1,   8,    16,   32,   64,   128,  256,
                                            512, 1024, 2048, 4096, 8192, 16384};

// request_success's finished_reason values, in the order they are written.
constexpr const char* kReasons[] = {"stop", "length", "abort"};
enum Reason { kStop, kLength, kAbort, kNumReasons };

Reason reason_of(FinishReason r) {
    switch (r) {
    case FinishReason::Stop:
        return kStop;
    case FinishReason::Length:
    case FinishReason::Context:
    case FinishReason::KvPool:
        return kLength;
    case FinishReason::None:
    case FinishReason::Aborted:
    case FinishReason::Error:
        return kAbort;
    }
    return kAbort;
}

double seconds(double ms) {
    return ms / 1000.0;
}

// A counter's delta from a total that only grows while the engine lives; a total below the last
// one means the engine was rebuilt (it starts from zero).
uint64_t delta(int64_t now, int64_t& last) {
    const int64_t d = now >= last ? now - last : now;
    last = now;
    return static_cast<uint64_t>(d > 0 ? d : 0);
}

} // namespace

// Everything a scrape shows: plain values, copied out whole under the lock by a reader. In a
// named namespace: ServingMetrics::State holds one (GCC warns about a member whose type has
// internal linkage once a unity build includes this file into another).
namespace serving_metrics_detail {

using metrics::Histogram;

struct ServingValues {
    double running = 0, waiting = 0, kv_usage = 0;
    uint64_t prefix_queries = 0, prefix_hits = 0, preemptions = 0;
    uint64_t prompt_tokens = 0, generation_tokens = 0;
    std::array<uint64_t, kNumReasons> success{};
    uint64_t spec_drafts = 0, spec_draft_tokens = 0, spec_accepted = 0;
    std::array<uint64_t, kMaxSpeculativeTokens> accepted_per_pos{};
    int32_t num_positions = 0; // positions that have carried a draft

    Histogram prompt_tokens_req, generation_tokens_req, max_tokens_req, iteration_tokens;
    Histogram ttft, itl, tpot_per_output, tpot_per_request;
    Histogram e2e, queue, inference, prefill, decode;
    bool token_bounds_set = false;
};

} // namespace serving_metrics_detail

using serving_metrics_detail::ServingValues;

struct ServingMetrics::State {
    std::string model_name;

    mutable std::mutex mu;
    ServingValues v; // guarded by mu

    // Engine thread only: the engine's totals at the last step, for the counters' deltas.
    const Engine* engine = nullptr; // identity only, never dereferenced outside observe_step
    int64_t engine_steps = 0;
    int64_t prefix_queries = 0, prefix_hits = 0;
    int64_t spec_drafts = 0, spec_draft_tokens = 0, spec_accepted = 0;
    std::array<int64_t, kMaxSpeculativeTokens> accepted_per_pos{};

    void set_token_bounds(int64_t max_model_len) {
        const auto b = metrics::buckets_1_2_5(static_cast<double>(max_model_len));
        v.prompt_tokens_req.set_bounds(b);
        v.generation_tokens_req.set_bounds(b);
        v.max_tokens_req.set_bounds(b);
        v.token_bounds_set = true;
    }

    void observe_finished(const SnapshotRequest& m) {
        v.e2e.observe(seconds(m.e2e_ms));
        v.queue.observe(seconds(m.queue_ms));
        v.prefill.observe(seconds(m.prefill_ms));
        v.decode.observe(seconds(m.decode_ms));
        v.inference.observe(seconds(m.prefill_ms + m.decode_ms));
        v.prompt_tokens_req.observe(m.prompt_tokens);
        v.generation_tokens_req.observe(m.output_tokens);
        v.max_tokens_req.observe(m.max_tokens);
        // vLLM's mean time per output token of a request (0 with fewer than two tokens).
        v.tpot_per_request.observe(
            m.output_tokens > 1 ? seconds(m.decode_ms) / (m.output_tokens - 1) : 0.0);
    }
};

ServingMetrics::ServingMetrics(std::string model_name) : state_(std::make_unique<State>()) {
    state_->model_name = std::move(model_name);
    ServingValues& v = state_->v;
    v.iteration_tokens.set_bounds(kIterationTokenBounds);
    v.ttft.set_bounds(kTtftBounds);
    v.itl.set_bounds(kTokenLatencyBounds);
    v.tpot_per_output.set_bounds(kTokenLatencyBounds);
    v.tpot_per_request.set_bounds(kTokenLatencyBounds);
    for (Histogram* h : {&v.e2e, &v.queue, &v.inference, &v.prefill, &v.decode})
        h->set_bounds(kRequestLatencyBounds);
}

ServingMetrics::ServingMetrics(std::string model_name, int64_t max_model_len)
    : ServingMetrics(std::move(model_name)) {
    if (max_model_len > 0)
        state_->set_token_bounds(max_model_len);
}

ServingMetrics::~ServingMetrics() = default;

void ServingMetrics::observe_step(const StepOutputs& out, const Engine& engine) {
    State& s = *state_;
    // Another engine (a reload; one built where the last one was has fewer steps): its totals
    // start from zero.
    const bool new_engine = &engine != s.engine || engine.steps() < s.engine_steps;
    s.engine_steps = engine.steps();
    if (new_engine) {
        s.engine = &engine;
        s.prefix_queries = s.prefix_hits = 0;
        s.spec_drafts = s.spec_draft_tokens = s.spec_accepted = 0;
        s.accepted_per_pos.fill(0);
    }
    // Engine totals -> counter deltas, before the lock.
    const KvCacheManager& kv = engine.kv_manager();
    const uint64_t d_queries = delta(kv.prefix_queries(), s.prefix_queries);
    const uint64_t d_hits = delta(kv.prefix_hits(), s.prefix_hits);
    const SpeculativeStats& spec = engine.speculative_stats();
    const uint64_t d_drafts = delta(spec.num_drafts, s.spec_drafts);
    const uint64_t d_draft_tokens = delta(spec.num_draft_tokens, s.spec_draft_tokens);
    const uint64_t d_accepted = delta(spec.num_accepted_tokens, s.spec_accepted);
    std::array<uint64_t, kMaxSpeculativeTokens> d_pos{};
    const auto positions =
        static_cast<int32_t>(std::min<size_t>(spec.accepted_per_pos.size(), kMaxSpeculativeTokens));
    for (int32_t p = 0; p < positions; ++p)
        d_pos[p] = delta(spec.accepted_per_pos[p], s.accepted_per_pos[p]);
    const BlockPool& pool = kv.pool();
    const double kv_usage =
        pool.num_blocks() > 0 ? static_cast<double>(pool.num_used()) / pool.num_blocks() : 0.0;
    const auto running = static_cast<double>(engine.scheduler().running().size());
    const auto waiting = static_cast<double>(engine.scheduler().waiting().size());

    std::lock_guard lock(s.mu);
    ServingValues& v = s.v;
    if (!v.token_bounds_set) {
        const int64_t max_position = engine.executor().config().max_position;
        s.set_token_bounds(max_position > 0 ? max_position : engine.context_limit());
    }
    v.running = running;
    v.waiting = waiting;
    v.kv_usage = kv_usage;
    v.prefix_queries += d_queries;
    v.prefix_hits += d_hits;
    v.spec_drafts += d_drafts;
    v.spec_draft_tokens += d_draft_tokens;
    v.spec_accepted += d_accepted;
    for (int32_t p = 0; p < positions; ++p)
        v.accepted_per_pos[p] += d_pos[p];
    v.num_positions = std::max(v.num_positions, positions);
    v.preemptions += out.preempted.size();
    if (out.step_index >= 0)
        v.iteration_tokens.observe(out.num_prefill_tokens + out.num_decode_tokens);

    for (const RequestOutput& o : out.outputs) {
        const SnapshotRequest& m = o.metrics;
        const auto n = static_cast<int32_t>(o.new_token_ids.size());
        if (n > 0) {
            v.generation_tokens += static_cast<uint64_t>(n);
            if (m.output_tokens == n) { // its first output: the prompt is done
                v.prompt_tokens += static_cast<uint64_t>(m.prompt_tokens);
                v.ttft.observe(seconds(m.ttft_ms));
            } else {
                v.itl.observe(seconds(m.output_gap_ms));
                v.tpot_per_output.observe(seconds(m.output_gap_ms));
            }
        }
        if (o.finished) {
            ++v.success[reason_of(o.finish)];
            s.observe_finished(m);
        }
    }
    // Aborted between steps: observe_aborted counted them; their figures come with this step.
    for (const SnapshotRequest& m : out.aborted)
        s.observe_finished(m);
}

void ServingMetrics::observe_aborted(RequestId /*id*/) {
    std::lock_guard lock(state_->mu);
    ++state_->v.success[kAbort];
}

std::string ServingMetrics::render_prometheus() const {
    ServingValues v;
    {
        std::lock_guard lock(state_->mu);
        v = state_->v; // plain values: no allocation under the lock
    }
    std::string out;
    out.reserve(16384);
    metrics::TextWriter w(out);
    const Label labels[] = {{"model_name", state_->model_name}, {"engine", "0"}};

    auto gauge = [&](const char* name, const char* help, double value) {
        w.family(name, "gauge", help);
        w.sample(name, labels, value);
    };
    // Counters: the family and its samples carry the _total suffix, as Prometheus' Python
    // client (and so vLLM) writes them in this format.
    auto counter = [&](const char* name, const char* help, uint64_t value) {
        w.family(name, "counter", help);
        w.sample(name, labels, static_cast<double>(value));
    };

    gauge("vllm:num_requests_running", "Requests in the engine's running batch.", v.running);
    gauge("vllm:num_requests_waiting", "Requests waiting to be scheduled.", v.waiting);
    gauge("vllm:gpu_cache_usage_perc",
          "Fraction of KV-cache blocks in use (0 to 1); older name of vllm:kv_cache_usage_perc.",
          v.kv_usage);
    gauge("vllm:kv_cache_usage_perc", "Fraction of KV-cache blocks in use (0 to 1).", v.kv_usage);

    counter("vllm:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.",
            v.prefix_queries);
    counter("vllm:prefix_cache_hits_total", "Prompt tokens served by the prefix cache.",
            v.prefix_hits);
    counter("vllm:num_preemptions_total", "Requests preempted (blocks freed, recomputed later).",
            v.preemptions);
    counter("vllm:prompt_tokens_total",
            "Prompt tokens of requests that produced their first token.", v.prompt_tokens);
    counter("vllm:generation_tokens_total", "Tokens generated.", v.generation_tokens);
    w.family("vllm:request_success_total", "counter", "Finished requests by finish reason.");
    for (int r = 0; r < kNumReasons; ++r) {
        const Label reason{"finished_reason", kReasons[r]};
        w.sample("vllm:request_success_total", labels, static_cast<double>(v.success[r]),
                 std::span<const Label>(&reason, 1));
    }
    counter("vllm:spec_decode_num_drafts_total",
            "Request-steps that verified speculative draft tokens.", v.spec_drafts);
    counter("vllm:spec_decode_num_draft_tokens_total", "Speculative draft tokens verified.",
            v.spec_draft_tokens);
    counter("vllm:spec_decode_num_accepted_tokens_total", "Speculative draft tokens accepted.",
            v.spec_accepted);
    w.family("vllm:spec_decode_num_accepted_tokens_per_pos_total", "counter",
             "Accepted speculative draft tokens by position in the draft.");
    for (int32_t p = 0; p < v.num_positions; ++p) {
        char pos[8];
        const auto res = std::to_chars(pos, pos + sizeof pos, p);
        const Label position{"position", std::string_view(pos, static_cast<size_t>(res.ptr - pos))};
        w.sample("vllm:spec_decode_num_accepted_tokens_per_pos_total", labels,
                 static_cast<double>(v.accepted_per_pos[p]), std::span<const Label>(&position, 1));
    }

    w.histogram("vllm:request_prompt_tokens", "Prompt tokens per finished request.", labels,
                v.prompt_tokens_req);
    w.histogram("vllm:request_generation_tokens", "Generated tokens per finished request.", labels,
                v.generation_tokens_req);
    w.histogram("vllm:iteration_tokens_total",
                "Tokens computed per engine step (prefill and decode).", labels,
                v.iteration_tokens);
    w.histogram("vllm:request_params_max_tokens", "The max_tokens parameter of finished requests.",
                labels, v.max_tokens_req);
    w.histogram("vllm:time_to_first_token_seconds", "Arrival to first token, in seconds.", labels,
                v.ttft);
    w.histogram("vllm:inter_token_latency_seconds",
                "Between consecutive outputs of a request, in seconds.", labels, v.itl);
    w.histogram("vllm:time_per_output_token_seconds",
                "Older name of vllm:inter_token_latency_seconds (the same observations), "
                "in seconds.",
                labels, v.tpot_per_output);
    w.histogram("vllm:request_time_per_output_token_seconds",
                "Mean time per output token of a finished request, in seconds.", labels,
                v.tpot_per_request);
    w.histogram("vllm:e2e_request_latency_seconds", "Arrival to finish, in seconds.", labels,
                v.e2e);
    w.histogram("vllm:request_queue_time_seconds", "Arrival to first scheduled, in seconds.",
                labels, v.queue);
    w.histogram("vllm:request_inference_time_seconds", "First scheduled to last token, in seconds.",
                labels, v.inference);
    w.histogram("vllm:request_prefill_time_seconds", "First scheduled to first token, in seconds.",
                labels, v.prefill);
    w.histogram("vllm:request_decode_time_seconds", "First token to last token, in seconds.",
                labels, v.decode);
    return out;
}

} // namespace llmwb
