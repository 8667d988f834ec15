// num_speculative_tokens auto: the SpeculationTuner's choices against its cost model (drafts
// where they pay, none where they do not, probes, the step-time fit), and whole engine runs with
// a proposer of known quality: greedy outputs equal those without speculation, a proposer that
// is always right gets long runs accepted, one that is always wrong is turned off.
#include <map>
#include <memory>
#include <random>

#include "engine/serving/engine.h"
#include "engine/serving/speculative_tuner.h"
#include "serving_test_engine.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

// Steps of several sizes costing a + b per token (each with its logits row).
void train_cost(SpeculationTuner& t, double a, double b) {
    for (int i = 0; i < 200; ++i) {
        const int n = 1 + (i * 7) % 23;
        t.observe_step(n, n, a + b * n);
    }
}

int total(const std::vector<SpeculationTuner::Candidate>& c) {
    int n = 0;
    for (const auto& x : c)
        n += x.chosen;
    return n;
}

} // namespace

// Prefill chunks (tokens without logits rows), decodes and verifies (a row per token): the fit
// separates the cost of a token from that of a logits row (the lm_head), so a draft's price is
// their sum.
MT_TEST(step_cost_fit_separates_tokens_and_logits_rows) {
    SpeculationTuner t;
    for (int i = 0; i < 300; ++i) {
        const int tokens = 1 + (i * 37) % 200, rows = 1 + (i * 11) % std::min(tokens, 40);
        t.observe_step(tokens, rows, 10.0 + 0.2 * tokens + 1.5 * rows);
    }
    MT_CHECK(std::fabs(t.cost_intercept_ms() - 10.0) < 0.1);
    MT_CHECK(std::fabs(t.cost_per_token_ms() - 0.2) < 0.01);
    MT_CHECK(std::fabs(t.cost_per_logits_row_ms() - 1.5) < 0.02);
    MT_CHECK(std::fabs(t.cost_per_draft_ms() - 1.7) < 0.02);
}

MT_TEST(acceptance_estimate_follows_outcomes) {
    SpeculationTuner t;
    SpecTrack good, bad;
    for (int i = 0; i < 40; ++i) {
        t.observe_verify(good, 4, 4); // every draft accepted
        t.observe_verify(bad, 4, 0);  // the first draft rejected
    }
    MT_CHECK(t.alpha(good) > 0.9);
    MT_CHECK(t.alpha(bad) < 0.4);
    // A fresh request starts from the engine-wide rate.
    SpecTrack fresh;
    MT_CHECK(std::fabs(t.alpha(fresh) - t.global_alpha()) < 1e-12);
}

// With cheap extra tokens (a memory-bound step) good drafts are all taken; with expensive ones
// (a compute-bound step) fewer; with bad drafts none, except a probe every kProbeEvery steps.
MT_TEST(chooses_drafts_where_they_pay) {
    auto choose_steady = [](double b, int accepted_of_4, int steps) {
        SpeculationTuner t;
        train_cost(t, 10.0, b);
        SpecTrack tr;
        for (int i = 0; i < 30; ++i)
            t.observe_verify(tr, 4, accepted_of_4);
        std::vector<int> chosen;
        for (int s = 0; s < steps; ++s) { // as the engine does: ask, then choose
            const int32_t ask = t.drafts_to_ask(tr, 8);
            std::vector<SpeculationTuner::Candidate> c{{&tr, ask, 0}};
            if (ask > 0)
                t.choose(c, 1, 1);
            chosen.push_back(c[0].chosen);
        }
        return chosen;
    };
    // alpha ~ 0.97, cheap tokens: the most drafts offered, up to the jitter.
    auto cheap = choose_steady(0.05, 4, 8);
    for (int c : cheap)
        MT_CHECK(c >= 6);
    // Two of four drafts accepted (alpha = 2/3): many drafts while an extra token is cheap, two
    // when it costs half a step (gains 2/3, 4/9 pay; 8/27 x 25 ms < 2.11 x 5 ms does not).
    auto half_cheap = choose_steady(0.05, 2, 8);
    auto half_dear = choose_steady(5.0, 2, 8);
    for (size_t i = 0; i < half_cheap.size(); ++i) {
        MT_CHECK(half_cheap[i] >= 4);
        MT_CHECK(half_dear[i] <= 2 + SpeculationTuner::kJitter);
    }
    MT_COMPARE(half_dear[1], 2); // the second choice is not jittered
    // alpha ~ 0: nothing but probes (and the jitter never adds drafts that do not pay); without
    // verify outcomes fed back they come every kProbeEvery steps.
    auto bad = choose_steady(0.5, 0, 64);
    int probes = 0;
    for (int c : bad) {
        MT_CHECK(c <= 1);
        probes += c;
    }
    MT_CHECK(probes >= 64 / SpeculationTuner::kProbeEvery - 1);
    MT_CHECK(probes <= 64 / SpeculationTuner::kProbeEvery + 1);
}

// Rejected probes double the wait for the next one (up to kMaxProbeEvery); an accepted one
// resets it.
MT_TEST(rejected_probes_back_off) {
    SpeculationTuner t;
    train_cost(t, 10.0, 0.5);
    SpecTrack tr;
    for (int i = 0; i < 30; ++i)
        t.observe_verify(tr, 4, 0);
    int probes = 0;
    for (int s = 0; s < 1000; ++s) {
        const int32_t ask = t.drafts_to_ask(tr, 8);
        std::vector<SpeculationTuner::Candidate> c{{&tr, ask, 0}};
        if (ask > 0)
            t.choose(c, 1, 1);
        if (c[0].chosen > 0) {
            ++probes;
            t.observe_verify(tr, c[0].chosen, 0); // rejected
        }
    }
    // 16 + 32 + 64 + 128 + 256 + 256 + 256 steps: 7 probes in 1,000 (63 without backing off).
    MT_CHECK(probes >= 5 && probes <= 8);
    MT_COMPARE(tr.probe_every, SpeculationTuner::kMaxProbeEvery);
    t.observe_verify(tr, 1, 1);
    MT_COMPARE(tr.probe_every, SpeculationTuner::kProbeEvery);
}

// Under load the same per-token cost buys less: one more draft slows 32 requests, not one.
MT_TEST(fewer_drafts_per_request_under_load) {
    SpeculationTuner t;
    train_cost(t, 10.0, 0.6);
    std::vector<SpecTrack> tracks(32);
    for (auto& tr : tracks)
        for (int i = 0; i < 30; ++i)
            t.observe_verify(tr, 4, 3);
    std::vector<SpeculationTuner::Candidate> one{{&tracks[0], 8, 0}};
    t.choose(one, 1, 1);
    t.choose(one, 1, 1); // phase 2: no jitter
    std::vector<SpeculationTuner::Candidate> many;
    for (auto& tr : tracks)
        many.push_back({&tr, 8, 0});
    t.choose(many, 32, 32); // phase 3
    t.choose(many, 32, 32); // phase 0: no jitter
    MT_CHECK(one[0].chosen > 0);
    MT_CHECK(total(many) < 32 * one[0].chosen);
}

// ---- whole engine runs -------------------------------------------------------------------

namespace {

SamplingParams greedy(int max_tokens) {
    SamplingParams p;
    p.temperature = 0;
    p.max_tokens = max_tokens;
    p.ignore_eos = true;
    return p;
}

// Proposes the reference continuation (always right) or random other tokens (always wrong).
class KnownProposer final : public DraftProposer {
  public:
    KnownProposer(std::map<RequestId, std::vector<int32_t>> ref, bool right, int32_t vocab)
        : ref_(std::move(ref)), right_(right), vocab_(vocab) {}
    void propose(int64_t id, std::span<const int32_t> tokens, int32_t, int32_t k,
                 std::vector<int32_t>& out) override {
        out.clear();
        ++calls;
        const auto& r = ref_.at(id);
        for (int32_t j = 0; j < k; ++j) {
            const size_t pos = tokens.size() + static_cast<size_t>(j);
            const int32_t want = pos < r.size() ? r[pos] : 0;
            out.push_back(right_ ? want : (want + 1 + j) % vocab_);
        }
    }
    int64_t calls = 0;

  private:
    std::map<RequestId, std::vector<int32_t>> ref_;
    bool right_;
    int32_t vocab_;
};

std::vector<std::vector<int32_t>> prompts() {
    std::mt19937 rng(9);
    const int32_t vocab = test::shared_serving_model().transformer->vocab_size();
    std::vector<std::vector<int32_t>> out;
    for (int n : {5, 12, 30, 8}) {
        std::vector<int32_t> p;
        for (int i = 0; i < n; ++i)
            p.push_back(static_cast<int32_t>(rng() % vocab));
        out.push_back(p);
    }
    return out;
}

// Every request to the end; returns prompt + output per request id.
std::map<RequestId, std::vector<int32_t>> run_all(Engine& e, int max_tokens) {
    std::map<RequestId, std::vector<int32_t>> seq;
    for (const auto& p : prompts()) {
        auto id = e.add_request(p, greedy(max_tokens));
        MT_REQUIRE(id.ok());
        seq[*id] = p;
    }
    StepOutputs so;
    for (int i = 0; e.has_unfinished() && i < 10000; ++i) {
        e.step(so);
        for (const RequestOutput& o : so.outputs)
            seq[o.id].insert(seq[o.id].end(), o.new_token_ids.begin(), o.new_token_ids.end());
        const Status st = e.check_consistency();
        MT_REQUIRE_MSG(st.ok(), "%s", st.ok() ? "" : st.message().c_str());
    }
    MT_REQUIRE(!e.has_unfinished());
    return seq;
}

SpeculativeConfig auto_spec() {
    SpeculativeConfig s;
    s.method = SpeculativeMethod::Ngram;
    s.num_speculative_tokens = kAutoSpeculativeTokens;
    s.auto_k = true;
    return s;
}

} // namespace

MT_TEST(auto_with_a_right_proposer_accepts_long_runs) {
    EngineConfig c;
    c.memory.num_blocks = 128;
    auto plain = test::serving_engine(c);
    const auto want = run_all(*plain, 60);
    c.speculative = auto_spec();
    auto e = test::serving_engine(c);
    e->speculation_tuner().fix_cost(10.0, 0.5); // a memory-bound step: extra tokens are cheap
    KnownProposer right(want, true, e->executor().vocab_size());
    e->set_draft_proposer(&right);
    const auto got = run_all(*e, 60);
    MT_COMPARE(got, want);
    const SpeculativeStats& st = e->speculative_stats();
    std::printf("  right proposer: %lld steps (without: %lld), acceptance %.3f, mean length %.2f\n",
                static_cast<long long>(e->steps()), static_cast<long long>(plain->steps()),
                st.acceptance_rate(), st.mean_acceptance_length());
    MT_CHECK(right.calls > 0);
    MT_CHECK(st.acceptance_rate() > 0.95);
    MT_CHECK(st.mean_acceptance_length() > 3.0);
    MT_CHECK(e->steps() * 2 < plain->steps());
}

// Each request's own drafted and accepted counts reach its metrics (the app's "accepted a/b").
MT_TEST(per_request_counts_in_the_metrics) {
    EngineConfig c;
    c.memory.num_blocks = 128;
    auto plain = test::serving_engine(c);
    const auto want = run_all(*plain, 20);
    SpeculativeConfig s;
    s.method = SpeculativeMethod::Ngram;
    s.num_speculative_tokens = 3;
    c.speculative = s;
    auto e = test::serving_engine(c);
    KnownProposer right(want, true, e->executor().vocab_size());
    e->set_draft_proposer(&right);
    for (const auto& p : prompts())
        MT_REQUIRE(e->add_request(p, greedy(20)).ok());
    int64_t drafted = 0, accepted = 0;
    StepOutputs so;
    while (e->has_unfinished()) {
        e->step(so);
        for (const RequestOutput& o : so.outputs)
            if (o.finished) {
                MT_CHECK(o.metrics.draft_tokens > 0);
                MT_COMPARE(o.metrics.accepted_tokens, o.metrics.draft_tokens); // always right
                drafted += o.metrics.draft_tokens;
                accepted += o.metrics.accepted_tokens;
            }
    }
    MT_COMPARE(drafted, e->speculative_stats().num_draft_tokens);
    MT_COMPARE(accepted, e->speculative_stats().num_accepted_tokens);
}

MT_TEST(auto_turns_a_wrong_proposer_off) {
    EngineConfig c;
    c.memory.num_blocks = 128;
    auto plain = test::serving_engine(c);
    const auto want = run_all(*plain, 80);
    c.speculative = auto_spec();
    auto e = test::serving_engine(c);
    e->speculation_tuner().fix_cost(10.0, 0.5);
    KnownProposer wrong(want, false, e->executor().vocab_size());
    e->set_draft_proposer(&wrong);
    const auto got = run_all(*e, 80);
    MT_COMPARE(got, want);
    const SpeculativeStats& st = e->speculative_stats();
    std::printf("  wrong proposer: %lld draft tokens over %lld steps\n",
                static_cast<long long>(st.num_draft_tokens), static_cast<long long>(e->steps()));
    MT_COMPARE(st.num_accepted_tokens, 0);
    // A fixed k would verify 8 drafts per request and step (4 x 80 x 8 = 2560): auto stops
    // after the first evidence and then only probes.
    MT_CHECK(st.num_draft_tokens < 4 * 80 * 8 / 10);
}

// A proposer that returns too many drafts or ids outside the vocabulary cannot break a step.
MT_TEST(bad_proposals_are_clipped) {
    class Wild final : public DraftProposer {
      public:
        void propose(int64_t, std::span<const int32_t>, int32_t, int32_t k,
                     std::vector<int32_t>& out) override {
            out.assign(static_cast<size_t>(k) + 5, 3);
            out[2] = -7;
        }
    } wild;
    EngineConfig c;
    c.memory.num_blocks = 128;
    auto plain = test::serving_engine(c);
    const auto want = run_all(*plain, 30);
    SpeculativeConfig s;
    s.method = SpeculativeMethod::Ngram;
    s.num_speculative_tokens = 4;
    c.speculative = s;
    auto e = test::serving_engine(c);
    e->set_draft_proposer(&wild);
    MT_COMPARE(run_all(*e, 30), want);
    MT_CHECK(e->speculative_stats().num_drafts > 0);
    // Only the two valid drafts before the bad id are verified.
    MT_CHECK(e->speculative_stats().num_draft_tokens <= 2 * e->speculative_stats().num_drafts);
}

MINI_TEST_MAIN()
