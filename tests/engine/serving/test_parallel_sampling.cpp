// Parallel sampling (n > 1, Engine::add_request_group): the n choices of one prompt with seeds
// s..s+n-1 are token-identical to n single requests with those seeds (whole prompt and chunked
// prefill, greedy on the device path too); n = 8 over a 1,000-token prompt holds one prompt's
// blocks plus eight tails (the figure is printed); aborting a choice before and after the fork;
// a bad choice is refused naming it.
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "engine/serving/engine.h"
#include "engine/serving/generation.h"
#include "engine/serving/parallel_sampling.h"
#include "serving_test_engine.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::mini_test;

namespace {

struct Collected {
    std::vector<int32_t> ids;
    std::string text;
    FinishReason finish = FinishReason::None;
    int finished_events = 0;
};

std::vector<int32_t> random_prompt(int n, uint32_t seed) {
    std::mt19937 rng(seed);
    const int32_t vocab = test::shared_serving_model().transformer->vocab_size();
    std::vector<int32_t> v;
    for (int i = 0; i < n; ++i)
        v.push_back(static_cast<int32_t>(rng() % static_cast<uint32_t>(vocab)));
    return v;
}

SamplingParams sampled(int max_tokens, uint64_t seed) {
    SamplingParams p;
    p.temperature = 0.9f;
    p.top_p = 0.95f;
    p.max_tokens = max_tokens;
    p.ignore_eos = true;
    p.seed = seed;
    return p;
}

// One step: its outputs appended to `out`; consistency checked.
void step(Engine& e, std::map<RequestId, Collected>& out) {
    StepOutputs so = e.step();
    for (const RequestOutput& o : so.outputs) {
        Collected& c = out[o.id];
        c.ids.insert(c.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
        c.text += o.text;
        if (o.finished) {
            c.finish = o.finish;
            ++c.finished_events;
        }
    }
    Status st = e.check_consistency();
    MT_REQUIRE_MSG(st.ok(), "consistency: %s", st.ok() ? "" : st.message().c_str());
}

void run(Engine& e, std::map<RequestId, Collected>& out) {
    for (int i = 0; e.has_unfinished() && i < 5000; ++i)
        step(e, out);
}

// The reference: one request alone in an engine of its own.
GenerationResult alone(const std::vector<int32_t>& prompt, const SamplingParams& p) {
    EngineConfig c;
    c.memory.num_blocks = 128;
    c.max_num_batched_tokens = 1024;
    c.enable_prefix_caching = false;
    auto e = test::serving_engine(c);
    auto r = generate(*e, prompt, p);
    MT_REQUIRE_MSG(r.ok(), "generate: %s", r.ok() ? "" : r.message().c_str());
    return std::move(r.value());
}

} // namespace

MT_TEST(choices_get_seeds_s_to_s_plus_n_minus_1) {
    const auto c = parallel_sampling_choices(sampled(4, 100), 3);
    MT_REQUIRE_COMPARE(c.size(), size_t(3));
    for (size_t i = 0; i < c.size(); ++i)
        MT_REQUIRE_COMPARE(*c[i].seed, uint64_t(100 + i));
    SamplingParams unseeded = sampled(4, 0);
    unseeded.seed.reset();
    for (const SamplingParams& p : parallel_sampling_choices(unseeded, 2))
        MT_REQUIRE(!p.seed.has_value());
}

struct Row {
    const char* name;
    int prompt_tokens, block_size, budget, n;
    bool greedy;
    int num_blocks = 96;
};

// Whole prompt in one step; chunked prefill (the fork happens at the last chunk); a prompt
// that ends on a block boundary; greedy (the device-argmax path on backends that have it).
MT_TEST_TABLE(n_choices_equal_n_single_requests, Row,
              (std::vector<Row>{{"whole", 37, 16, 512, 4, false},
                                {"chunked", 70, 8, 24, 5, false},
                                {"block_edge", 32, 16, 512, 3, false},
                                {"greedy", 29, 16, 512, 3, true},
                                // 4 x 7 blocks wanted, 10 in the pool: forks are preempted
                                // and recomputed.
                                {"preempted", 37, 8, 512, 4, false, 10}})) {
    const auto prompt = random_prompt(row.prompt_tokens, 11);
    SamplingParams p = sampled(12, 500);
    if (row.greedy)
        p.temperature = 0;
    EngineConfig c;
    c.block_size = row.block_size;
    c.max_num_batched_tokens = row.budget;
    c.memory.num_blocks = row.num_blocks;
    auto e = test::serving_engine(c);
    const auto choices = parallel_sampling_choices(p, row.n);
    auto ids = e->add_request_group(prompt, choices);
    MT_REQUIRE_MSG(ids.ok(), "%s", ids.ok() ? "" : ids.message().c_str());
    MT_REQUIRE_COMPARE(ids->size(), static_cast<size_t>(row.n));
    std::map<RequestId, Collected> got;
    int preemptions = 0;
    for (int i = 0; e->has_unfinished() && i < 5000; ++i) {
        StepOutputs so = e->step();
        preemptions += static_cast<int>(so.preempted.size());
        for (const RequestOutput& o : so.outputs) {
            Collected& g = got[o.id];
            g.ids.insert(g.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
            g.text += o.text;
            if (o.finished) {
                g.finish = o.finish;
                ++g.finished_events;
            }
        }
        Status st = e->check_consistency();
        MT_REQUIRE_MSG(st.ok(), "consistency: %s", st.ok() ? "" : st.message().c_str());
    }
    if (row.num_blocks < 96)
        MT_REQUIRE(preemptions > 0);
    int distinct = 0;
    for (int i = 0; i < row.n; ++i) {
        const GenerationResult ref = alone(prompt, choices[static_cast<size_t>(i)]);
        const Collected& g = got[(*ids)[static_cast<size_t>(i)]];
        MT_REQUIRE_COMPARE(g.ids, ref.ids);
        MT_REQUIRE_COMPARE(g.text, ref.text);
        MT_REQUIRE_COMPARE(g.finished_events, 1);
        MT_REQUIRE(g.finish == FinishReason::Length);
        if (i > 0 && g.ids != got[(*ids)[0]].ids)
            ++distinct;
    }
    if (!row.greedy) // the seeds differ: so do the samples (else the test proves nothing)
        MT_REQUIRE(distinct > 0);
    // Only the choices produced outputs (the prefill request is no one's).
    MT_REQUIRE_COMPARE(got.size(), static_cast<size_t>(row.n));
    MT_REQUIRE_COMPARE(e->snapshot().num_used_blocks, 0);
}

// n = 8 over a 1,000-token prompt: the prompt's blocks once, then a tail per choice (its copy
// of the shared partial block and what it generates), against 8 times the prompt for separate
// requests.
MT_TEST(n8_over_1000_tokens_holds_one_prompt_and_eight_tails) {
    const int prompt_tokens = 1000, max_tokens = 16, n = 8, bs = 16;
    const auto prompt = random_prompt(prompt_tokens, 3);
    EngineConfig c;
    c.block_size = bs;
    c.max_num_batched_tokens = 512;
    c.memory.num_blocks = 600;
    c.enable_prefix_caching = false; // separate requests share nothing either
    auto e = test::serving_engine(c);
    auto ids = e->add_request_group(prompt, parallel_sampling_choices(sampled(max_tokens, 1), n));
    MT_REQUIRE(ids.ok());
    std::map<RequestId, Collected> got;
    int64_t peak = 0;
    for (int i = 0; e->has_unfinished() && i < 1000; ++i) {
        step(*e, got);
        peak = std::max<int64_t>(peak, e->kv_manager().pool().num_used());
    }
    for (RequestId id : *ids)
        MT_REQUIRE_COMPARE(got[id].ids.size(), static_cast<size_t>(max_tokens));
    const int64_t prompt_blocks = (prompt_tokens + bs - 1) / bs;
    const int64_t tail_blocks = ((prompt_tokens % bs) + max_tokens + bs - 1) / bs;
    const int64_t bound = prompt_blocks + n * tail_blocks;
    const int64_t separate = n * ((prompt_tokens + max_tokens + bs - 1) / bs);
    std::printf("n=8 over a 1000-token prompt: peak %lld blocks (bound: prompt %lld + 8 tails "
                "x %lld = %lld; 8 separate requests: %lld); copy-on-write copies %lld\n",
                static_cast<long long>(peak), static_cast<long long>(prompt_blocks),
                static_cast<long long>(tail_blocks), static_cast<long long>(bound),
                static_cast<long long>(separate),
                static_cast<long long>(e->kv_manager().cow_copies()));
    MT_REQUIRE(peak <= bound);
    MT_REQUIRE(peak >= prompt_blocks);
    MT_REQUIRE(e->kv_manager().cow_copies() >= n - 1); // the partial block was shared
    MT_REQUIRE_COMPARE(e->snapshot().num_used_blocks, 0);
}

MT_TEST(abort_choices_before_and_after_the_fork) {
    const auto prompt = random_prompt(60, 5);
    EngineConfig c;
    c.block_size = 8;
    c.max_num_batched_tokens = 16; // four prefill steps
    c.memory.num_blocks = 64;
    auto e = test::serving_engine(c);
    const auto choices = parallel_sampling_choices(sampled(6, 9), 3);
    auto ids = *e->add_request_group(prompt, choices);
    std::map<RequestId, Collected> got;
    step(*e, got); // a prefill chunk: nothing forked yet
    MT_REQUIRE(got.empty());
    MT_REQUIRE(e->abort(ids[1])); // before the fork: dropped from the group
    MT_REQUIRE(!e->abort(ids[1]));
    run(*e, got);
    MT_REQUIRE(got.count(ids[1]) == 0);
    MT_REQUIRE_COMPARE(got[ids[0]].ids, alone(prompt, choices[0]).ids);
    MT_REQUIRE_COMPARE(got[ids[2]].ids, alone(prompt, choices[2]).ids);
    MT_REQUIRE_COMPARE(e->snapshot().num_used_blocks, 0);

    // Every choice aborted before the fork: the prefill goes too.
    auto ids2 = *e->add_request_group(prompt, choices);
    step(*e, got);
    for (RequestId id : ids2)
        MT_REQUIRE(e->abort(id));
    MT_REQUIRE(!e->has_unfinished());
    MT_REQUIRE_COMPARE(e->snapshot().num_used_blocks, 0);

    // After the fork a choice is a request like any other.
    auto ids3 = *e->add_request_group(prompt, choices);
    for (int i = 0; i < 8 && got.count(ids3[0]) == 0; ++i)
        step(*e, got);
    MT_REQUIRE(got.count(ids3[0]) == 1);
    MT_REQUIRE(e->abort(ids3[0]));
    run(*e, got);
    MT_REQUIRE_COMPARE(got[ids3[2]].ids, alone(prompt, choices[2]).ids);
    MT_REQUIRE_COMPARE(e->snapshot().num_used_blocks, 0);
}

// best_of's ranking on constructed samples: the sum of logprobs prefers the short sample, the
// mean the long one; equal scores keep the sample order; at most n are kept.
MT_TEST(best_of_ranks_by_sum_or_mean) {
    auto sample = [](std::vector<float> lps) {
        GenerationResult r;
        for (float lp : lps) {
            SampledToken t;
            t.id = 1;
            t.logprob = lp;
            r.logprobs.push_back(t);
            r.ids.push_back(1);
        }
        return r;
    };
    const std::vector<GenerationResult> rs = {
        sample({-1.0f, -1.0f}),                      // sum -2, mean -1
        sample({-0.5f, -0.5f, -0.5f, -0.5f, -0.5f}), // sum -2.5, mean -0.5
        sample({-2.0f}),                             // sum -2, mean -2
        sample({-3.0f, -0.1f}),                      // sum -3.1, mean -1.55
    };
    MT_REQUIRE(std::abs(cumulative_logprob(rs[1]) + 2.5) < 1e-6);
    MT_REQUIRE_COMPARE(best_of_order(rs, 4, BestOfRank::CumulativeLogprob),
                       (std::vector<size_t>{0, 2, 1, 3}));
    MT_REQUIRE_COMPARE(best_of_order(rs, 2, BestOfRank::MeanLogprob), (std::vector<size_t>{1, 0}));
    MT_REQUIRE_COMPARE(best_of_order(rs, 9, BestOfRank::MeanLogprob).size(), size_t(4));
    MT_REQUIRE_COMPARE(std::string(best_of_rank_name(BestOfRank::MeanLogprob)),
                       std::string("mean-logprob"));
}

MT_TEST(bad_choice_is_refused_naming_it) {
    auto e = test::serving_engine(EngineConfig{});
    auto choices = parallel_sampling_choices(sampled(4, 1), 3);
    choices[2].top_p = 2;
    auto ids = e->add_request_group(random_prompt(10, 1), choices);
    MT_REQUIRE(!ids.ok());
    MT_REQUIRE_MSG(ids.message().find("choice 2") != std::string::npos, "%s",
                   ids.message().c_str());
    MT_REQUIRE(!e->has_unfinished());
    MT_REQUIRE(!e->add_request_group(random_prompt(10, 1), {}).ok());
}

MINI_TEST_MAIN()
