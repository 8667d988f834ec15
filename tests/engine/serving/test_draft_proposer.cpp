// Draft-model speculation (draft_proposer.h): self-q4 and a second model with the target's
// vocabulary, in whole engine runs — greedy outputs equal to the runs without speculation (up
// to a near tie, as in test_speculative_archs), drafts accepted, the draft's KV pool rolled back
// with rejections, shared by many requests (evictions) and empty when they finish — and drafts
// refused with a clear error when the vocabularies differ.
#include <cstdlib>
#include <map>
#include <memory>
#include <random>

#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "engine/serving/draft_proposer.h"
#include "engine/serving/engine.h"
#include "engine/tokenizer/tokenizer.h"
#include "greedy_margin_compare.h"
#include "serving_test_engine.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

constexpr float kMargin = 5e-3f;

test::ServingTestModel& target() {
    return test::shared_serving_model();
}

std::vector<std::vector<int32_t>> prompts(int n) {
    std::mt19937 rng(21);
    std::vector<std::vector<int32_t>> out;
    for (int i = 0; i < n; ++i) {
        std::vector<int32_t> p(static_cast<size_t>(3 + rng() % 20));
        for (auto& t : p)
            t = static_cast<int32_t>(rng() % target().transformer->vocab_size());
        out.push_back(p);
    }
    return out;
}

std::map<RequestId, test::GreedyOut> run(Engine& e, const std::vector<std::vector<int32_t>>& ps,
                                         int max_tokens, bool margins) {
    return test::run_greedy(e, ps, max_tokens, margins);
}

int compare(const std::map<RequestId, test::GreedyOut>& got,
            const std::map<RequestId, test::GreedyOut>& want) {
    return test::compare_up_to_near_tie(got, want, kMargin);
}

EngineConfig config(SpeculativeMethod m, int32_t blocks, int32_t seqs) {
    EngineConfig c;
    c.memory.num_blocks = blocks;
    c.max_num_seqs = seqs;
    c.max_num_batched_tokens = 64;
    c.speculative.method = m;
    c.speculative.num_speculative_tokens = m == SpeculativeMethod::Off ? 0 : 4;
    if (m == SpeculativeMethod::Draft)
        c.speculative.draft_model = "draft";
    return c;
}

} // namespace

MT_TEST(self_q4_greedy_equal_and_accepted) {
    const auto ps = prompts(12);
    auto plain = test::serving_engine(config(SpeculativeMethod::Off, 256, 12));
    const auto want = run(*plain, ps, 40, true);
    auto draft = DraftModelProposer::create_self_q4(*target().model, *target().pool, 256 * 16);
    MT_REQUIRE_MSG(draft.ok(), "%s", draft.ok() ? "" : draft.message().c_str());
    MT_CHECK((*draft)->weight_bytes() < target().model->weight_bytes / 4); // F32 -> 4.5 bits
    auto e = test::serving_engine(config(SpeculativeMethod::SelfQ4, 256, 12));
    e->set_draft_proposer(draft->get());
    const auto got = run(*e, ps, 40, false);
    const int compared = compare(got, want);
    const SpeculativeStats& st = e->speculative_stats();
    std::printf("  self-q4: %d tokens compared, %lld/%lld drafts accepted, %lld vs %lld steps\n",
                compared, static_cast<long long>(st.num_accepted_tokens),
                static_cast<long long>(st.num_draft_tokens), static_cast<long long>(e->steps()),
                static_cast<long long>(plain->steps()));
    MT_CHECK(compared >= 40);
    // The same weights at 4 bits agree with the target on many greedy tokens (random weights
    // and a 1,035-token vocabulary: flat logits, so far from all).
    MT_CHECK(st.acceptance_rate() > 0.3);
    MT_CHECK(e->steps() < plain->steps());
    MT_COMPARE((*draft)->num_used_blocks(), 0); // every finished request was released
}

// A second model with the demo tokenizer (other weights): drafts are verified like any other;
// a small draft pool shared by 12 requests evicts and catches up again; a tight target pool
// preempts. Outputs stay those of the target.
MT_TEST(draft_model_small_pool_and_preemption) {
    mini_test::TempDir dir;
    ModelWriterSpec s;
    s.seed = 4321; // the serving model's weights, at another size: a related model
    s.hidden_size = 32;
    s.intermediate_size = 64;
    s.num_layers = 1;
    s.num_heads = 2;
    s.num_kv_heads = 1;
    MT_REQUIRE(write_model(s, dir.path() + "/draft.gguf").ok());
    auto dm = load_model(dir.path() + "/draft.gguf");
    MT_REQUIRE(dm.ok());
    auto dt = Tokenizer::create((*dm)->tokenizer);
    MT_REQUIRE(dt.ok());
    auto draft = DraftModelProposer::create_draft(std::move(dm.value()), **dt, *target().tokenizer,
                                                  *target().pool, 96);
    MT_REQUIRE_MSG(draft.ok(), "%s", draft.ok() ? "" : draft.message().c_str());
    const auto ps = prompts(12);
    for (int32_t blocks : {256, 26}) {
        MT_SCOPE("target pool %d blocks", blocks);
        auto plain = test::serving_engine(config(SpeculativeMethod::Off, blocks, 12));
        const auto want = run(*plain, ps, 30, true);
        auto e = test::serving_engine(config(SpeculativeMethod::Draft, blocks, 12));
        e->set_draft_proposer(draft->get());
        const auto got = run(*e, ps, 30, false);
        const int compared = compare(got, want);
        std::printf("  draft, target pool %d blocks: %d tokens compared, %lld/%lld accepted\n",
                    blocks, compared,
                    static_cast<long long>(e->speculative_stats().num_accepted_tokens),
                    static_cast<long long>(e->speculative_stats().num_draft_tokens));
        MT_CHECK(compared >= 40);
        MT_CHECK(e->speculative_stats().num_drafts > 0);
        if (blocks < 40)
            MT_CHECK(e->snapshot().total_preemptions > 0);
        MT_COMPARE((*draft)->num_used_blocks(), 0);
    }
}

// A long prompt is caught up by the draft over several steps (no drafts for it meanwhile), not
// in one stalled step; the output is the target's.
MT_TEST(long_prompt_caught_up_over_steps) {
    std::vector<std::vector<int32_t>> ps = prompts(1);
    std::mt19937 rng(5);
    while (ps[0].size() < 2500)
        ps[0].push_back(static_cast<int32_t>(rng() % target().transformer->vocab_size()));
    auto plain = test::serving_engine(config(SpeculativeMethod::Off, 256, 2));
    const auto want = run(*plain, ps, 24, true);
    auto draft = DraftModelProposer::create_self_q4(*target().model, *target().pool, 256 * 16);
    MT_REQUIRE(draft.ok());
    auto e = test::serving_engine(config(SpeculativeMethod::SelfQ4, 256, 2));
    e->set_draft_proposer(draft->get());
    // The first proposal after the prefill catches up at most 1,024 tokens: no drafts yet.
    std::vector<int32_t> out;
    (*draft)->propose(99, ps[0], int32_t(ps[0].size()), 4, out);
    MT_CHECK(out.empty());
    (*draft)->propose(99, ps[0], int32_t(ps[0].size()), 4, out);
    MT_CHECK(out.empty());
    (*draft)->propose(99, ps[0], int32_t(ps[0].size()), 4, out); // 2,048 + the rest together
    MT_COMPARE(out.size(), size_t{4});
    (*draft)->release(99);
    const auto got = run(*e, ps, 24, false);
    MT_CHECK(compare(got, want) >= 1);
    MT_CHECK(e->speculative_stats().num_drafts > 0);
    MT_COMPARE((*draft)->num_used_blocks(), 0);
}

MT_TEST(draft_with_another_vocabulary_is_refused) {
    const char* assets = std::getenv("LLMWB_TEST_ASSETS");
    MT_REQUIRE_MSG(assets, "LLMWB_TEST_ASSETS is not set (run scripts/fetch-test-assets.sh)");
    mini_test::TempDir dir;
    ModelWriterSpec s;
    s.arch = Architecture::Llama;
    s.tokenizer_dir = std::string(assets) + "/tokenizers/llama2";
    s.hidden_size = 32;
    s.intermediate_size = 64;
    s.num_layers = 1;
    s.num_heads = 2;
    s.num_kv_heads = 1;
    Status w = write_model(s, dir.path() + "/other.gguf");
    MT_REQUIRE_MSG(w.ok(), "%s", w.ok() ? "" : w.message().c_str());
    auto dm = load_model(dir.path() + "/other.gguf");
    MT_REQUIRE(dm.ok());
    auto dt = Tokenizer::create((*dm)->tokenizer);
    MT_REQUIRE(dt.ok());
    auto draft = DraftModelProposer::create_draft(std::move(dm.value()), **dt, *target().tokenizer,
                                                  *target().pool, 64);
    MT_REQUIRE(!draft.ok());
    std::printf("  %s\n", draft.message().c_str());
    MT_CHECK(draft.message().find("does not share the target's vocabulary") != std::string::npos);
    MT_CHECK(draft.message().find("target [") != std::string::npos);
    MT_CHECK(draft.message().find("draft [") != std::string::npos);
}

MINI_TEST_MAIN()
