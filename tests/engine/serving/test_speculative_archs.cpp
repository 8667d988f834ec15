// Greedy speculation (prompt lookup, fixed k and auto) against the same run without it, for every
// architecture and weight type, with the engine's real kernels. A token's logits are computed by
// the 1-row matrix-vector kernels without speculation and by the k + 1-row kernels when verified;
// these round differently (quantized ones quantize activations per call; differences that reach a
// few 1e-3 in logprob after 60 tokens on these models), so outputs are compared up to the
// first token whose top-1 / top-2 logprob margin in the run without speculation is below
// kMargin (and at least kMinCompared tokens must have been compared per model).
#include <cstdio>
#include <map>
#include <memory>
#include <random>

#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/serving/engine.h"
#include "engine/tokenizer/tokenizer.h"
#include "greedy_margin_compare.h"
#include "kernels/cpu/thread_pool.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

constexpr float kMargin = 5e-3f;
constexpr int kMinCompared = 64;

struct ArchRow {
    std::string name;
    Architecture arch;
    WeightType type;
    bool auto_k;
};

std::vector<ArchRow> rows() {
    std::vector<ArchRow> r;
    for (auto [an, a] : {std::pair{"qwen2", Architecture::Qwen2},
                         {"llama", Architecture::Llama},
                         {"qwen3", Architecture::Qwen3}})
        for (auto [tn, t] : {std::pair{"f32", WeightType::F32},
                             {"f16", WeightType::F16},
                             {"q8_0", WeightType::Q8_0},
                             {"q4_0", WeightType::Q4_0}})
            for (bool au : {false, true})
                r.push_back({std::string(an) + " " + tn + (au ? " auto" : " k4"), a, t, au});
    return r;
}

struct Model {
    std::unique_ptr<LoadedModel> loaded;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<CpuTransformer> tf;
};

Model write_and_load(const ArchRow& row, const std::string& dir, kernels::ThreadPool& pool) {
    ModelWriterSpec s;
    s.arch = row.arch;
    s.weight_type = row.type;
    s.seed = 77;
    s.hidden_size = 128;
    s.intermediate_size = 256;
    s.num_layers = 3;
    s.num_heads = 4;
    s.num_kv_heads = 2;
    const std::string path = dir + "/m.gguf";
    Status st = write_model(s, path);
    MT_REQUIRE_MSG(st.ok(), "%s", st.ok() ? "" : st.message().c_str());
    Model m;
    auto l = load_model(path);
    MT_REQUIRE_MSG(l.ok(), "%s", l.ok() ? "" : l.message().c_str());
    m.loaded = std::move(l.value());
    auto t = Tokenizer::create(m.loaded->tokenizer);
    MT_REQUIRE(t.ok());
    m.tokenizer = std::move(t.value());
    m.tf = std::make_unique<CpuTransformer>(*m.loaded, pool);
    return m;
}

} // namespace

MT_TEST_TABLE(greedy_equal_up_to_a_near_tie, ArchRow, rows()) {
    mini_test::TempDir dir;
    kernels::ThreadPool pool(2);
    Model m = write_and_load(row, dir.path(), pool);
    std::mt19937 rng(3);
    std::vector<std::vector<int32_t>> prompts;
    for (int n : {5, 9, 14, 7, 6, 11, 4, 8}) { // repeated units: prompt lookup finds matches
        std::vector<int32_t> unit, p;
        for (int i = 0; i < n; ++i)
            unit.push_back(static_cast<int32_t>(rng() % m.tf->vocab_size()));
        for (int r = 0; r < 3; ++r)
            p.insert(p.end(), unit.begin(), unit.end());
        prompts.push_back(p);
    }
    EngineConfig c;
    c.memory.num_blocks = 64;
    auto plain = Engine::create(*m.tf, *m.tokenizer, c);
    MT_REQUIRE(plain.ok());
    const auto want = test::run_greedy(**plain, prompts, 64, true);
    c.speculative.method = SpeculativeMethod::Ngram;
    c.speculative.num_speculative_tokens = row.auto_k ? kAutoSpeculativeTokens : 4;
    c.speculative.auto_k = row.auto_k;
    c.speculative.prompt_lookup_min = 1;
    auto spec = Engine::create(*m.tf, *m.tokenizer, c);
    MT_REQUIRE(spec.ok());
    if (row.auto_k)
        (*spec)->speculation_tuner().fix_cost(10.0, 0.5);
    const auto got = test::run_greedy(**spec, prompts, 64, false);
    const int compared = test::compare_up_to_near_tie(got, want, kMargin);
    const SpeculativeStats& st = (*spec)->speculative_stats();
    std::printf("  %d tokens compared; %lld/%lld drafts accepted\n", compared,
                static_cast<long long>(st.num_accepted_tokens),
                static_cast<long long>(st.num_draft_tokens));
    MT_CHECK(compared >= kMinCompared);
    MT_CHECK(st.num_accepted_tokens > 0);
}

MINI_TEST_MAIN()
