// The benchmark workload (vLLM random dataset lengths, shared prefix, Poisson arrivals) and the
// runner's figures on a tiny model: counts, token totals, latency statistics, KV accounting,
// prefix-cache hit rate, static batching.
#include <cmath>

#include "engine/serving/bench_runner.h"
#include "serving_test_engine.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

test::ServingTestModel& model() {
    return test::shared_serving_model();
}

std::unique_ptr<Engine> engine(const EngineConfig& c) {
    return test::serving_engine(c);
}

} // namespace

MT_TEST(random_workload_lengths_and_prefix) {
    RandomWorkloadSpec s;
    s.num_prompts = 200;
    s.input_len = 100;
    s.output_len = 50;
    s.range_ratio = 0.5;
    s.prefix_len = 7;
    s.seed = 3;
    auto w = make_random_workload(s, 500);
    MT_REQUIRE_COMPARE(w.size(), size_t(200));
    int32_t in_min = 1 << 30, in_max = 0, out_min = 1 << 30, out_max = 0;
    for (const BenchRequest& r : w) {
        const auto in = static_cast<int32_t>(r.prompt.size()) - 7;
        in_min = std::min(in_min, in);
        in_max = std::max(in_max, in);
        out_min = std::min(out_min, r.output_len);
        out_max = std::max(out_max, r.output_len);
        MT_REQUIRE(std::equal(w[0].prompt.begin(), w[0].prompt.begin() + 7, r.prompt.begin()));
        for (int32_t t : r.prompt)
            MT_REQUIRE(t >= 0 && t < 500);
    }
    MT_REQUIRE(in_min >= 50 && in_max <= 150 && in_max - in_min > 60);
    MT_REQUIRE(out_min >= 25 && out_max <= 75 && out_max - out_min > 30);
    auto again = make_random_workload(s, 500);
    MT_REQUIRE_COMPARE(again[17].prompt, w[17].prompt);
    s.seed = 4;
    MT_REQUIRE(make_random_workload(s, 500)[17].prompt != w[17].prompt);
}

MT_TEST(poisson_arrivals) {
    auto inf = make_arrival_times(5, std::numeric_limits<double>::infinity(), 1);
    for (double t : inf)
        MT_REQUIRE_COMPARE(t, 0.0);
    auto t = make_arrival_times(2000, 10.0, 1);
    for (size_t i = 1; i < t.size(); ++i)
        MT_REQUIRE(t[i] >= t[i - 1]);
    const double mean_gap = t.back() / (t.size() - 1);
    MT_REQUIRE(std::abs(mean_gap - 0.1) < 0.01);
    // Burstiness (vLLM's gamma shape): the same mean gap; the gaps' coefficient of
    // variation is 1 / sqrt(shape) (Poisson: 1), constant gaps for an infinite shape.
    for (double shape : {0.25, 1.0, 4.0}) {
        MT_SCOPE("burstiness %g", shape);
        auto g = make_arrival_times(4000, 10.0, 3, shape);
        std::vector<double> gaps;
        for (size_t i = 1; i < g.size(); ++i)
            gaps.push_back(g[i] - g[i - 1]);
        double mean = 0, var = 0;
        for (double x : gaps)
            mean += x / gaps.size();
        for (double x : gaps)
            var += (x - mean) * (x - mean) / gaps.size();
        MT_CHECK_MSG(std::abs(mean - 0.1) < 0.012, "mean gap %g", mean);
        const double cv = std::sqrt(var) / mean;
        MT_CHECK_MSG(std::abs(cv - 1.0 / std::sqrt(shape)) < 0.15 / std::sqrt(shape),
                     "coefficient of variation %g", cv);
    }
    MT_REQUIRE(make_arrival_times(2000, 10.0, 1, 1.0) == t); // Poisson runs keep their times
    auto even = make_arrival_times(5, 4.0, 1, std::numeric_limits<double>::infinity());
    for (size_t i = 0; i < even.size(); ++i)
        MT_CHECK(std::abs(even[i] - 0.25 * i) < 1e-12);
}

MT_TEST(latency_stats_match_numpy) {
    LatencyStats s = latency_stats({4, 1, 3, 2, 10});
    MT_REQUIRE_COMPARE(s.mean, 4.0);
    MT_REQUIRE_COMPARE(s.median, 3.0);
    MT_REQUIRE(std::abs(s.p99 - 9.76) < 1e-9); // numpy.percentile(..., 99)
    MT_REQUIRE(std::abs(s.std - std::sqrt(10.0)) < 1e-9);
}

MT_TEST(runs_every_request_and_reports_figures) {
    RandomWorkloadSpec s;
    s.num_prompts = 12;
    s.input_len = 40;
    s.output_len = 12;
    s.range_ratio = 0.5;
    s.prefix_len = 32;
    s.seed = 1;
    auto w = make_random_workload(s, model().transformer->vocab_size());
    int64_t want_out = 0, want_in = 0;
    for (const BenchRequest& r : w) {
        want_out += r.output_len;
        want_in += static_cast<int64_t>(r.prompt.size());
    }
    EngineConfig c;
    c.block_size = 8;
    c.max_num_batched_tokens = 64;
    c.memory.num_blocks = 200;
    auto e = engine(c);
    BenchRunOptions o;
    o.max_concurrency = 4;
    auto r = run_bench(*e, w, o);
    MT_REQUIRE(r.ok());
    MT_REQUIRE_COMPARE(r->completed, 12);
    MT_REQUIRE_COMPARE(r->total_output_tokens, want_out);
    MT_REQUIRE_COMPARE(r->total_input_tokens, want_in);
    MT_REQUIRE(r->output_throughput > 0 && r->total_token_throughput > r->output_throughput);
    MT_REQUIRE(r->ttft_ms.mean > 0 && r->e2el_ms.mean >= r->ttft_ms.mean);
    MT_REQUIRE(r->tpot_ms.mean > 0 && r->itl_ms.p99 >= r->itl_ms.median);
    MT_REQUIRE_COMPARE(r->per_request_ttft_ms.size(), size_t(12));
    MT_REQUIRE(r->mean_batch_size > 1.0 && r->mean_batch_size <= 4.0);
    // Later requests reuse the 32-token prefix (4 full blocks of 8).
    MT_REQUIRE(r->prefix_cache_hits >= 8 * 32);
    MT_REQUIRE(r->prefix_cache_hit_rate > 0 && r->prefix_cache_hit_rate < 1);
    // Paging wastes at most part of one block per request; contiguous reserves far more.
    MT_REQUIRE(r->kv_waste_vs_allocated >= 0 && r->kv_waste_vs_allocated < 0.2);
    MT_REQUIRE(r->kv_waste_vs_contiguous < r->contiguous_waste);
    MT_REQUIRE(r->peak_kv_usage > 0 && r->peak_kv_usage <= 1);
    MT_REQUIRE_COMPARE(e->snapshot().num_used_blocks, 0);

    // Static batches: same tokens, whole-length reservations, batches of 4.
    c.policy = SchedulerPolicy::Static;
    c.max_num_seqs = 4;
    auto st = engine(c);
    o.static_batches = true;
    o.batch_size = 4;
    o.max_concurrency = 0;
    o.static_padding = false;
    auto rs = run_bench(*st, w, o);
    MT_REQUIRE(rs.ok());
    MT_REQUIRE_COMPARE(rs->completed, 12);
    MT_REQUIRE_COMPARE(rs->total_output_tokens, want_out);
    MT_REQUIRE_COMPARE(rs->total_input_tokens, want_in);
    MT_REQUIRE(rs->kv_waste_vs_allocated > r->kv_waste_vs_allocated);

    // Padded static batches (generate()-style): the same useful tokens are reported, but
    // every row of a batch runs to the batch's longest prompt + output, so the engine does
    // more row-steps, and the requests of a batch complete together.
    auto sp = engine(c);
    o.static_padding = true;
    auto rp = run_bench(*sp, w, o);
    MT_REQUIRE(rp.ok());
    MT_REQUIRE_COMPARE(rp->completed, 12);
    MT_REQUIRE_COMPARE(rp->total_output_tokens, want_out);
    MT_REQUIRE_COMPARE(rp->total_input_tokens, want_in);
    const double rows_unpadded = rs->mean_batch_size * static_cast<double>(rs->steps);
    const double rows_padded = rp->mean_batch_size * static_cast<double>(rp->steps);
    MT_REQUIRE_MSG(rows_padded > rows_unpadded, "%g vs %g", rows_padded, rows_unpadded);
    MT_REQUIRE_COMPARE(sp->snapshot().num_used_blocks, 0);
}

MINI_TEST_MAIN()
