// Greedy steps on the CPU (CpuExecutor::forward_greedy): each row's id is the sampler's greedy
// choice over the logits forward() gives for the same batch, and an engine gives the same tokens
// with EngineConfig::device_greedy on and off — plain greedy requests, a batch that mixes in a
// seeded sampled request (those steps take the logits path), and speculative-free parallel
// greedy steps of many sequences.
#include <map>
#include <random>
#include <span>
#include <vector>

#include "engine/runtime/cpu_executor.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/sampler.h"
#include "engine/serving/engine.h"
#include "serving_test_engine.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

std::vector<std::vector<int32_t>> prompts(int32_t vocab, int n) {
    std::mt19937 rng(11);
    std::vector<std::vector<int32_t>> out;
    for (int i = 0; i < n; ++i) {
        std::vector<int32_t> p(static_cast<size_t>(3 + rng() % 40));
        for (int32_t& id : p)
            id = static_cast<int32_t>(rng() % static_cast<uint32_t>(vocab));
        out.push_back(p);
    }
    return out;
}

// Every request's tokens; requests with an index in `sampled` use temperature 0.9, seed 7 + i.
std::map<RequestId, std::vector<int32_t>> run(bool device_greedy, int n_requests,
                                              const std::vector<int>& sampled) {
    EngineConfig c;
    c.device_greedy = device_greedy;
    c.memory.num_blocks = 256;
    auto e = test::serving_engine(c);
    const auto ps = prompts(test::shared_serving_model().transformer->vocab_size(), n_requests);
    for (int i = 0; i < n_requests; ++i) {
        SamplingParams sp;
        sp.temperature = 0;
        sp.max_tokens = 12 + i % 5;
        sp.ignore_eos = true;
        for (int s : sampled)
            if (s == i) {
                sp.temperature = 0.9f;
                sp.seed = 7 + i;
            }
        MT_REQUIRE(e->add_request(ps[static_cast<size_t>(i)], sp).ok());
    }
    std::map<RequestId, std::vector<int32_t>> out;
    StepOutputs so;
    for (int i = 0; e->has_unfinished() && i < 10000; ++i) {
        e->step(so);
        for (const RequestOutput& o : so.outputs)
            out[o.id].insert(out[o.id].end(), o.new_token_ids.begin(), o.new_token_ids.end());
    }
    MT_REQUIRE(!e->has_unfinished());
    return out;
}

} // namespace

MT_TEST(forwardGreedyIdsAreTheSamplersGreedyChoice) {
    auto& m = test::shared_serving_model();
    const int32_t vocab = m.transformer->vocab_size();
    const int32_t bs = 16, per_seq = 4;
    const auto ps = prompts(vocab, 5);
    auto logits_run = [&](bool greedy, std::vector<float>* logits, std::vector<int32_t>* ids) {
        CpuExecutor exec(*m.transformer);
        MT_REQUIRE(exec.resize_kv(per_seq * 5, bs, {}).ok());
        MT_CHECK(exec.device_greedy());
        ForwardBatch batch;
        std::vector<std::vector<int32_t>> tables(5);
        for (int32_t s = 0; s < 5; ++s) {
            for (int32_t b = 0; b < per_seq; ++b)
                tables[s].push_back(s * per_seq + b);
            batch.add_sequence(ps[static_cast<size_t>(s)], 0, tables[s], bs,
                               ForwardBatch::Logits::Last);
        }
        if (greedy) {
            ids->assign(5, -1);
            MT_REQUIRE(exec.forward_greedy(batch, ids->data()).ok());
        } else {
            logits->assign(static_cast<size_t>(5) * vocab, 0.0f);
            MT_REQUIRE(exec.forward(batch, logits->data()).ok());
        }
    };
    std::vector<float> logits;
    std::vector<int32_t> ids, unused;
    logits_run(false, &logits, &unused);
    logits_run(true, nullptr, &ids);
    SamplingParams greedy;
    greedy.temperature = 0;
    for (size_t s = 0; s < 5; ++s) {
        const std::span<const float> row(logits.data() + s * static_cast<size_t>(vocab),
                                         static_cast<size_t>(vocab));
        Sampler sampler(greedy);
        MT_CHECK_MSG(ids[s] == sampler.sample(row).id, "row %zu: %d", s, ids[s]);
        MT_CHECK(ids[s] >= 0 && ids[s] < vocab);
    }
}

MT_TEST(engineTokensEqualWithAndWithoutCpuGreedy) {
    for (const std::vector<int>& sampled : {std::vector<int>{}, std::vector<int>{2, 5}}) {
        MT_SCOPE("%zu sampled requests", sampled.size());
        const auto with = run(true, 9, sampled);
        const auto without = run(false, 9, sampled);
        MT_REQUIRE_COMPARE(with.size(), size_t{9});
        MT_CHECK(with == without);
        // The runs produced tokens (the equality is not two empty maps).
        for (const auto& [id, toks] : with)
            MT_CHECK(toks.size() >= 12);
    }
}

MINI_TEST_MAIN()
