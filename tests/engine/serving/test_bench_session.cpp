// BenchSession on a tiny model: per-request and per-step rows against the run's totals, the
// order of each request's times, waiting for a future arrival, cancel (the engine is idle and
// serves the next request), the chosen percentiles, vLLM's peak figures, and a session on an
// engine that served requests before (ids not from 0).
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "engine/serving/bench_session.h"
#include "engine/serving/generation.h"
#include "serving_test_engine.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

test::ServingTestModel& model() {
    return test::shared_serving_model();
}

EngineConfig small_config() {
    EngineConfig c;
    c.block_size = 8;
    c.max_num_batched_tokens = 64;
    c.memory.num_blocks = 200;
    return c;
}

std::vector<BenchRequest> workload(int32_t n, int32_t prefix_len, uint64_t seed = 1) {
    RandomWorkloadSpec s;
    s.num_prompts = n;
    s.input_len = 24;
    s.output_len = 10;
    s.range_ratio = 0.5;
    s.prefix_len = prefix_len;
    s.seed = seed;
    return make_random_workload(s, model().transformer->vocab_size());
}

// Runs the session to its end (sleeping as advance() asks); false on an advance() error.
bool run(BenchSession& s) {
    while (!s.done()) {
        auto w = s.advance();
        if (!w)
            return false;
        if (*w > 0)
            std::this_thread::sleep_for(std::chrono::duration<double>(std::min(*w, 0.05)));
    }
    return true;
}

// numpy.percentile(v, q) (linear), written out independently of latency_stats.
double np_percentile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double rank = q / 100.0 * static_cast<double>(v.size() - 1);
    const double lo = std::floor(rank), hi = std::ceil(rank);
    return v[static_cast<size_t>(lo)] +
           (v[static_cast<size_t>(hi)] - v[static_cast<size_t>(lo)]) * (rank - lo);
}

// The checks every completed run must pass: the rows against the totals and in time order.
void check_rows(const BenchSession& s, const std::vector<BenchRequest>& w, const BenchResult& r) {
    MT_REQUIRE_COMPARE(s.request_rows().size(), w.size());
    int64_t in = 0, out = 0, hits = 0, preempt = 0;
    for (size_t i = 0; i < w.size(); ++i) {
        MT_SCOPE("request %zu", i);
        const BenchRequestRow& row = s.request_rows()[i];
        MT_REQUIRE_COMPARE(row.index, static_cast<int32_t>(i));
        MT_REQUIRE_COMPARE(row.error, std::string());
        MT_REQUIRE_COMPARE(row.input_tokens, static_cast<int32_t>(w[i].prompt.size()));
        MT_REQUIRE_COMPARE(row.output_tokens, w[i].output_len);
        MT_REQUIRE(row.arrival_s >= 0);
        MT_REQUIRE(row.arrival_s <= row.first_token_s);
        MT_REQUIRE(row.first_token_s <= row.finish_s);
        MT_REQUIRE(row.finish_s <= r.duration_s);
        in += row.input_tokens;
        out += row.output_tokens;
        hits += row.prefix_hit_tokens;
        preempt += row.preemptions;
    }
    MT_REQUIRE_COMPARE(r.completed, static_cast<int32_t>(w.size()));
    MT_REQUIRE_COMPARE(r.failed, 0);
    MT_REQUIRE_COMPARE(r.total_input_tokens, in);
    MT_REQUIRE_COMPARE(r.total_output_tokens, out);
    MT_REQUIRE_COMPARE(r.per_request_ttft_ms.size(), w.size());
    // Steps: every request's first token comes from its prefill, the others from decode
    // steps; its prompt is prefilled except what the prefix cache served (no preemptions here).
    MT_REQUIRE_COMPARE(preempt, int64_t(0));
    int64_t prefill = 0, decode = 0;
    double t = 0;
    for (const BenchStepRow& st : s.step_rows()) {
        prefill += st.prefill_tokens;
        decode += st.decode_tokens;
        MT_REQUIRE(st.time_s >= t);
        t = st.time_s;
        MT_REQUIRE(st.kv_usage >= 0 && st.kv_usage <= 1);
        MT_REQUIRE(st.running >= 0 && st.waiting >= 0);
    }
    MT_REQUIRE_COMPARE(decode, out - static_cast<int64_t>(w.size()));
    MT_REQUIRE_COMPARE(prefill + hits, in);
    MT_REQUIRE_COMPARE(hits, r.prefix_cache_hits);
    MT_REQUIRE_COMPARE(static_cast<int64_t>(s.step_rows().size()), r.steps);
    // The last step finished every request: nothing runs or waits after it.
    MT_REQUIRE_COMPARE(s.step_rows().back().running, 0);
    MT_REQUIRE_COMPARE(s.step_rows().back().waiting, 0);
}

} // namespace

MT_TEST(rows_sum_to_the_totals) {
    auto w = workload(10, 16);
    auto e = test::serving_engine(small_config());
    BenchRunOptions o;
    o.max_concurrency = 4;
    BenchSession s(*e, w, o);
    MT_REQUIRE(!s.done());
    MT_REQUIRE_COMPARE(s.total(), 10);
    MT_REQUIRE(run(s));
    MT_REQUIRE(s.done() && !s.cancelled());
    const BenchResult r = s.result();
    check_rows(s, w, r);
    MT_REQUIRE(r.prefix_cache_hits > 0); // the shared 16-token prefix (2 blocks)
    MT_REQUIRE(std::isinf(r.request_rate));
    MT_REQUIRE_COMPARE(r.max_concurrency, 4);
    // The cap held: never more than 4 requests running at once.
    for (const BenchStepRow& st : s.step_rows())
        MT_REQUIRE(st.running + st.waiting <= 4);
    MT_REQUIRE(r.mean_batch_size > 1 && r.mean_batch_size <= 4);
    // vLLM's peaks over a run far shorter than a second: every token falls into one bucket and
    // every request into it.
    if (r.duration_s < 0.9) {
        MT_REQUIRE_COMPARE(r.max_output_tokens_per_s, static_cast<double>(r.total_output_tokens));
        MT_REQUIRE_COMPARE(r.max_concurrent_requests, 10);
    } else {
        MT_REQUIRE(r.max_output_tokens_per_s > 0 && r.max_concurrent_requests >= 1);
    }
    MT_REQUIRE_COMPARE(e->num_unfinished(), 0);
    MT_REQUIRE(e->check_consistency().ok());
    // advance() after the end changes nothing.
    auto again = s.advance();
    MT_REQUIRE(again.ok() && *again == 0.0);
    MT_REQUIRE_COMPARE(s.result().completed, 10);
}

MT_TEST(run_bench_is_the_loop_over_the_session) {
    auto w = workload(6, 0, 5);
    auto e = test::serving_engine(small_config());
    int32_t calls = 0, last_done = -1;
    BenchRunOptions o;
    o.on_step = [&](const StepOutputs&, int32_t done, int32_t total) {
        ++calls;
        MT_CHECK(total == 6 && done >= last_done);
        last_done = done;
    };
    auto r = run_bench(*e, w, o);
    MT_REQUIRE(r.ok());
    MT_REQUIRE_COMPARE(r->completed, 6);
    MT_REQUIRE_COMPARE(last_done, 6);
    MT_REQUIRE_COMPARE(static_cast<int64_t>(calls), r->steps);
}

MT_TEST(padded_static_batches_count_requested_tokens) {
    auto w = workload(6, 0, 7);
    EngineConfig c = small_config();
    c.policy = SchedulerPolicy::Static;
    c.max_num_seqs = 3;
    c.max_num_batched_tokens = 256; // a batch's prompts prefill in one step
    auto e = test::serving_engine(c);
    BenchRunOptions o;
    o.static_batches = true;
    o.batch_size = 3;
    BenchSession s(*e, w, o);
    MT_REQUIRE(run(s));
    const BenchResult r = s.result();
    MT_REQUIRE_COMPARE(r.completed, 6);
    int64_t out = 0;
    for (const BenchRequestRow& row : s.request_rows())
        out += row.output_tokens;
    MT_REQUIRE_COMPARE(r.total_output_tokens, out);
    // A padded batch runs in lockstep (one prefill step, then equal decode steps): its
    // requests finish at one time.
    for (int b = 0; b < 2; ++b) {
        const auto& rows = s.request_rows();
        MT_REQUIRE_COMPARE(rows[b * 3].finish_s, rows[b * 3 + 1].finish_s);
        MT_REQUIRE_COMPARE(rows[b * 3].finish_s, rows[b * 3 + 2].finish_s);
    }
    // The second batch was submitted only once the first had finished.
    MT_REQUIRE(s.request_rows()[3].arrival_s >= s.request_rows()[0].finish_s);
    // The padded rows decode more than the requested tokens.
    int64_t decode = 0;
    for (const BenchStepRow& st : s.step_rows())
        decode += st.decode_tokens;
    MT_REQUIRE(decode > out - 6);
}

MT_TEST(waits_for_a_future_arrival) {
    auto w = workload(3, 0, 3);
    auto e = test::serving_engine(small_config());
    BenchRunOptions o;
    o.request_rate = 0.5; // mean gap 2 s: the first arrival is in the future (seed chosen below)
    o.burstiness = std::numeric_limits<double>::infinity(); // constant gaps: 0, 2, 4 s
    BenchSession s(*e, w, o);
    // The first request arrives at 0: submitted and stepped at once.
    auto w0 = s.advance();
    MT_REQUIRE(w0.ok());
    MT_REQUIRE_COMPARE(*w0, 0.0);
    while (!s.done() && s.completed() < 1) {
        auto wt = s.advance();
        MT_REQUIRE(wt.ok());
        if (*wt > 0)
            break;
    }
    // Request 0 is done; the next arrival is ~2 s away and nothing runs: advance() asks to wait.
    MT_REQUIRE_COMPARE(s.completed(), 1);
    auto wt = s.advance();
    MT_REQUIRE(wt.ok());
    MT_REQUIRE_MSG(*wt > 0.5 && *wt <= 2.0, "wait %g", *wt);
    MT_REQUIRE_COMPARE(e->num_unfinished(), 0);
    MT_REQUIRE_COMPARE(s.request_rows()[1].arrival_s, -1.0); // not submitted yet
    // Cancelling while waiting: the unsubmitted requests are cancelled too.
    s.cancel("stopped");
    MT_REQUIRE(s.done() && s.cancelled());
    const BenchResult r = s.result();
    MT_REQUIRE_COMPARE(r.completed, 1);
    MT_REQUIRE_COMPARE(r.failed, 2);
    MT_REQUIRE_COMPARE(r.request_rate, 0.5);
    MT_REQUIRE_COMPARE(s.request_rows()[2].error, std::string("stopped"));
    MT_REQUIRE_COMPARE(s.request_rows()[0].error, std::string());
}

MT_TEST(cancel_mid_run_leaves_the_engine_usable) {
    auto w = workload(8, 0, 11);
    for (BenchRequest& r : w)
        r.output_len = 40;
    auto e = test::serving_engine(small_config());
    BenchRunOptions o;
    o.max_concurrency = 3;
    BenchSession s(*e, w, o);
    while (s.completed() < 2) {
        auto wt = s.advance();
        MT_REQUIRE(wt.ok());
        MT_REQUIRE(!s.done());
    }
    MT_REQUIRE(e->num_unfinished() > 0);
    s.cancel("cancelled by the user");
    MT_REQUIRE(s.done() && s.cancelled());
    MT_REQUIRE_COMPARE(e->num_unfinished(), 0);
    MT_REQUIRE(!e->has_unfinished());
    MT_REQUIRE(e->check_consistency().ok());
    const BenchResult r = s.result();
    MT_REQUIRE(r.completed >= 2 && r.completed < 8);
    MT_REQUIRE_COMPARE(r.completed + r.failed, 8);
    int64_t out = 0, partial = 0;
    for (const BenchRequestRow& row : s.request_rows()) {
        if (row.error.empty()) {
            MT_REQUIRE(row.finish_s >= row.first_token_s && row.first_token_s >= row.arrival_s);
            out += row.output_tokens;
        } else {
            MT_REQUIRE_COMPARE(row.error, std::string("cancelled by the user"));
            MT_REQUIRE_COMPARE(row.finish_s, -1.0);
            partial += row.output_tokens; // kept what they got
        }
    }
    MT_REQUIRE_COMPARE(r.total_output_tokens, out);
    MT_REQUIRE(partial > 0); // the cancelled running requests had sampled tokens
    // advance() after cancel does nothing.
    auto wt = s.advance();
    MT_REQUIRE(wt.ok() && *wt == 0.0);
    // The engine serves a new request to its end.
    SamplingParams p;
    p.temperature = 0;
    p.max_tokens = 5;
    p.ignore_eos = true;
    auto id = e->add_request(w[0].prompt, p);
    MT_REQUIRE(id.ok());
    int32_t got = 0;
    bool finished = false;
    for (int k = 0; k < 200 && !finished; ++k) {
        StepOutputs so = e->step();
        for (const RequestOutput& out2 : so.outputs)
            if (out2.id == *id) {
                got += static_cast<int32_t>(out2.new_token_ids.size());
                finished = out2.finished;
                MT_REQUIRE(out2.finish != FinishReason::Aborted);
            }
    }
    MT_REQUIRE(finished);
    MT_REQUIRE_COMPARE(got, 5);
}

MT_TEST(preemptions_in_rows_and_steps) {
    // A pool too small for every request at once: the newest running ones are preempted.
    auto w = workload(8, 0, 29);
    for (BenchRequest& r : w)
        r.output_len = 30;
    EngineConfig c = small_config();
    c.memory.num_blocks = 24; // 192 token slots for 8 x (~24 + 30)
    auto e = test::serving_engine(c);
    BenchSession s(*e, w, BenchRunOptions{});
    MT_REQUIRE(run(s));
    const BenchResult r = s.result();
    MT_REQUIRE_COMPARE(r.completed, 8);
    MT_REQUIRE(r.preemptions > 0);
    int64_t in_rows = 0, in_steps = 0, out = 0;
    for (const BenchRequestRow& row : s.request_rows()) {
        in_rows += row.preemptions;
        out += row.output_tokens;
        MT_REQUIRE_COMPARE(row.output_tokens, 30);
    }
    for (const BenchStepRow& st : s.step_rows())
        in_steps += st.preempted;
    MT_REQUIRE_COMPARE(in_rows, r.preemptions);
    MT_REQUIRE_COMPARE(in_steps, r.preemptions);
    MT_REQUIRE_COMPARE(r.total_output_tokens, out);
    MT_REQUIRE(r.peak_kv_usage > 0.9);
}

MT_TEST(speculative_tokens_per_step_sum_to_the_run) {
    // Repetitive prompts give prompt lookup (ngram) drafts to verify.
    std::vector<BenchRequest> w(4);
    for (size_t i = 0; i < w.size(); ++i) {
        for (int rep = 0; rep < 6; ++rep)
            for (int32_t t = 0; t < 5; ++t)
                w[i].prompt.push_back(10 + t + static_cast<int32_t>(i));
        w[i].output_len = 24;
    }
    EngineConfig c = small_config();
    c.speculative.method = SpeculativeMethod::Ngram;
    c.speculative.num_speculative_tokens = 3;
    auto e = test::serving_engine(c);
    BenchSession s(*e, w, BenchRunOptions{});
    MT_REQUIRE(run(s));
    const BenchResult r = s.result();
    MT_REQUIRE_COMPARE(r.completed, 4);
    MT_REQUIRE(r.speculative.num_draft_tokens > 0);
    int64_t drafts = 0, accepted = 0;
    for (const BenchStepRow& st : s.step_rows()) {
        MT_REQUIRE(st.accepted_tokens <= st.draft_tokens);
        drafts += st.draft_tokens;
        accepted += st.accepted_tokens;
    }
    MT_REQUIRE_COMPARE(drafts, r.speculative.num_draft_tokens);
    MT_REQUIRE_COMPARE(accepted, r.speculative.num_accepted_tokens);
    MT_REQUIRE_COMPARE(r.total_output_tokens, int64_t(4 * 24));
}

MT_TEST(cancel_before_the_first_advance) {
    auto e = test::serving_engine(small_config());
    auto w = workload(3, 0, 23);
    BenchRunOptions o;
    {
        BenchSession warm(*e, w, o); // the engine has served a run: its counters are not 0
        MT_REQUIRE(run(warm));
    }
    BenchSession s(*e, w, o);
    s.cancel("never mind");
    MT_REQUIRE(s.done() && s.cancelled());
    MT_REQUIRE_COMPARE(s.elapsed_s(), 0.0);
    const BenchResult r = s.result();
    MT_REQUIRE_COMPARE(r.completed, 0);
    MT_REQUIRE_COMPARE(r.failed, 3);
    MT_REQUIRE_COMPARE(r.steps, int64_t(0));
    MT_REQUIRE_COMPARE(r.prefix_cache_queries, int64_t(0));
    MT_REQUIRE_COMPARE(r.total_output_tokens, int64_t(0));
    for (const BenchRequestRow& row : s.request_rows()) {
        MT_REQUIRE_COMPARE(row.error, std::string("never mind"));
        MT_REQUIRE_COMPARE(row.arrival_s, -1.0);
    }
    MT_REQUIRE(s.step_rows().empty());
    MT_REQUIRE_COMPARE(e->num_unfinished(), 0);
}

MT_TEST(percentiles_match_a_direct_computation) {
    auto w = workload(12, 0, 13);
    auto e = test::serving_engine(small_config());
    BenchRunOptions o;
    o.max_concurrency = 5;
    BenchSession s(*e, w, o);
    MT_REQUIRE(run(s));
    const BenchResult r = s.result({50, 90, 99});
    std::vector<double> ttft, e2el, tpot;
    for (const BenchRequestRow& row : s.request_rows()) {
        const double first = (row.first_token_s - row.arrival_s) * 1000;
        const double e2e = (row.finish_s - row.arrival_s) * 1000;
        ttft.push_back(first);
        e2el.push_back(e2e);
        tpot.push_back((e2e - first) / (row.output_tokens - 1));
    }
    const std::pair<const LatencyStats*, std::vector<double>*> cases[] = {
        {&r.ttft_ms, &ttft}, {&r.e2el_ms, &e2el}, {&r.tpot_ms, &tpot}};
    for (const auto& [stats, values] : cases) {
        MT_REQUIRE_COMPARE(stats->percentiles.size(), size_t(3));
        const double qs[] = {50, 90, 99};
        for (size_t k = 0; k < 3; ++k) {
            MT_SCOPE("q %g", qs[k]);
            MT_REQUIRE_COMPARE(stats->percentiles[k].first, qs[k]);
            MT_REQUIRE(std::abs(stats->percentiles[k].second - np_percentile(*values, qs[k])) <
                       1e-9);
        }
        MT_REQUIRE(std::abs(stats->median - stats->percentiles[0].second) < 1e-9);
        MT_REQUIRE(std::abs(stats->p99 - stats->percentiles[2].second) < 1e-9);
    }
    MT_REQUIRE_COMPARE(r.itl_ms.percentiles.size(), size_t(3));
    MT_REQUIRE(r.itl_ms.percentiles[0].second <= r.itl_ms.percentiles[2].second);
    // The default: p99 only.
    MT_REQUIRE_COMPARE(s.result().ttft_ms.percentiles.size(), size_t(1));
    // latency_stats against numpy (values by hand): [1, 2, 3, 4, 10].
    LatencyStats ls = latency_stats({4, 1, 3, 2, 10}, {0, 25, 90, 100});
    MT_REQUIRE(std::abs(ls.percentiles[0].second - 1.0) < 1e-12);
    MT_REQUIRE(std::abs(ls.percentiles[1].second - 2.0) < 1e-12);
    MT_REQUIRE(std::abs(ls.percentiles[2].second - 7.6) < 1e-12);
    MT_REQUIRE(std::abs(ls.percentiles[3].second - 10.0) < 1e-12);
}

MT_TEST(a_session_on_an_engine_that_served_before) {
    auto e = test::serving_engine(small_config());
    // Earlier work (a chat, another run): ids 0..4 are used, one is still half-done and aborted.
    auto first = workload(5, 0, 17);
    {
        BenchRunOptions o;
        BenchSession s(*e, first, o);
        MT_REQUIRE(run(s));
    }
    SamplingParams p;
    p.temperature = 0;
    p.max_tokens = 30;
    p.ignore_eos = true;
    auto stray = e->add_request(first[0].prompt, p);
    MT_REQUIRE(stray.ok());
    (void)e->step();
    MT_REQUIRE(e->abort(*stray));
    MT_REQUIRE(!e->has_unfinished());

    auto w = workload(7, 8, 19);
    BenchRunOptions o;
    o.max_concurrency = 3;
    BenchSession s(*e, w, o);
    MT_REQUIRE(run(s));
    const BenchResult r = s.result();
    check_rows(s, w, r);
    // The figures are this run's: its own steps and prefix-cache queries only.
    MT_REQUIRE_COMPARE(r.prefix_cache_queries, r.total_input_tokens);
    MT_REQUIRE(r.steps < e->steps());
}

MINI_TEST_MAIN()
