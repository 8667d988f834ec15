// The CUDA backend's bf16 weight cache and its raised step limits (issue 17), whole model:
// - prefill logits with every quantized matrix cached equal those without the cache (GEMM
//   tolerance) and the CPU backend's; slots the runner cannot cache are refused by number and
//   leave no cache; the engine's memory plan chooses the cache and the Memory panel figures
//   (bytes, N of M matrices) match the device;
// - a batch larger than the max_num_batched_tokens the executor was created with runs (the step
//   buffers grow, at reserve_step or at the step), and Engine::set_limits re-plans the workspace.
// Without a CUDA device: SKIPPED (the _sim twin runs on the emulator).
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "engine/runtime/cpu_executor.h"
#include "engine/serving/engine.h"
#include "engine/tokenizer/tokenizer.h"
#include "gpu_model_util.h"
#include "kernels/cpu/thread_pool.h"

using namespace llmwb;
using namespace llmwb::gputest;

namespace {

std::unique_ptr<CudaExecutor> make_gpu(const std::shared_ptr<CudaPlugin>& plugin,
                                       const LoadedModel& model, int32_t max_tokens,
                                       bool graphs = false) {
    CudaExecutorOptions o;
    o.kv_dtype = KvDtype::F32;
    o.use_graphs = graphs;
    o.max_tokens = max_tokens;
    o.max_seqs = 4;
    auto g = CudaExecutor::create(plugin, model, o);
    MT_REQUIRE_MSG(g, "%s", g ? "" : g.message().c_str());
    MT_REQUIRE(g.value()->resize_kv(8, 16, {}));
    return std::move(g.value());
}

std::vector<int32_t> all_candidates(const ModelExecutor& e) {
    std::vector<int32_t> slots;
    const auto c = e.weight_cache_candidates();
    for (size_t i = 0; i < c.size(); ++i)
        if (c[i] > 0)
            slots.push_back(static_cast<int32_t>(i));
    return slots;
}

// One sequence of n tokens from position 0 on blocks 0..7, logits of every row.
ForwardBatch long_batch(int32_t n, int32_t vocab) {
    ForwardBatch b;
    std::vector<int32_t> tokens;
    for (int32_t i = 0; i < n; ++i)
        tokens.push_back((13 * i + 7) % vocab);
    const int32_t blocks[] = {0, 1, 2, 3, 4, 5, 6, 7};
    b.add_sequence(tokens, 0, blocks, 16, ForwardBatch::Logits::All);
    return b;
}

double worst_row_error(const std::vector<float>& got, const std::vector<float>& want, int64_t rows,
                       int32_t vocab) {
    double worst = 0;
    for (int64_t r = 0; r < rows; ++r)
        worst = std::max(worst, rel_err(got.data() + r * vocab, want.data() + r * vocab, vocab));
    return worst;
}

} // namespace

MT_TEST(cached_prefill_equals_uncached_and_cpu) {
    auto plugin = plugin_or_skip();
    auto model = write_and_load(tiny_spec(Architecture::Qwen2, WeightType::Q4_K), "wc-q4k");
    kernels::ThreadPool pool(2);
    CpuTransformer transformer(*model, pool);
    CpuExecutor cpu(transformer);
    MT_REQUIRE(cpu.resize_kv(8, 16, {}));
    auto plain = make_gpu(plugin, *model, 64);
    auto cached = make_gpu(plugin, *model, 64, true);
    // 7 matrices per layer and lm_head, all Q4_K: every one can have a bf16 copy.
    const auto cand = cached->weight_cache_candidates();
    MT_COMPARE(cand.size(), size_t{2 * 7 + 1});
    const std::vector<int32_t> slots = all_candidates(*cached);
    MT_COMPARE(slots.size(), cand.size());
    const int64_t free_before = cached->memory().free_bytes;
    MT_REQUIRE(cached->set_weight_cache(slots));
    const int64_t want_bytes = std::accumulate(cand.begin(), cand.end(), int64_t{0});
    MT_COMPARE(cached->weight_cache_bytes(), want_bytes);
    MT_COMPARE(cached->weight_cache_matrices(), static_cast<int32_t>(slots.size()));
    MT_CHECK(free_before - cached->memory().free_bytes >= want_bytes);

    const int32_t vocab = cpu.vocab_size();
    // The two-sequence steps (a 42-token prefill step, then decode) and an all-logits prefill of
    // 40 rows (lm_head through the GEMM too).
    for (int pass = 0; pass < 2; ++pass) {
        MT_REQUIRE(cpu.resize_kv(8, 16, {}) && plain->resize_kv(8, 16, {}) &&
                   cached->resize_kv(8, 16, {}));
        std::vector<ForwardBatch> batches;
        if (pass == 0)
            for (const Step& s : kSteps)
                batches.push_back(make_batch(s, vocab));
        else
            batches.push_back(long_batch(40, vocab));
        for (size_t i = 0; i < batches.size(); ++i) {
            const ForwardBatch& b = batches[i];
            const auto rows = static_cast<int64_t>(b.logits_rows.size());
            std::vector<float> lc(rows * vocab), lp(lc.size(), NAN), lk(lc.size(), NAN);
            MT_REQUIRE(cpu.forward(b, lc.data()));
            int64_t matmuls_before = cached->cached_matmuls();
            Status st = plain->forward(b, lp.data());
            MT_REQUIRE_MSG(st, "%s", st ? "" : st.message().c_str());
            st = cached->forward(b, lk.data());
            MT_REQUIRE_MSG(st, "%s", st ? "" : st.message().c_str());
            const double vs_plain = worst_row_error(lk, lp, rows, vocab);
            const double vs_cpu = worst_row_error(lk, lc, rows, vocab);
            std::printf("pass %d batch %zu (%d tokens): cached vs uncached %.3g, vs cpu %.3g\n",
                        pass, i, b.n_tokens(), vs_plain, vs_cpu);
            MT_CHECK_MSG(vs_plain <= 1.5e-2, "cached vs uncached %.3g", vs_plain);
            // Steps of more than 8 rows ran every matrix on its copy (7 per layer, and lm_head
            // when more than 8 logits rows); decode steps none.
            const int64_t used = cached->cached_matmuls() - matmuls_before;
            const int64_t want_used = b.n_tokens() > 8 ? 2 * 7 + (rows > 8 ? 1 : 0) : 0;
            MT_COMPARE(used, want_used);
            MT_CHECK_MSG(vs_cpu <= 5e-2, "cached vs cpu %.3g", vs_cpu);
        }
    }
    // Freeing the cache gives the memory back.
    MT_REQUIRE(cached->set_weight_cache({}));
    MT_COMPARE(cached->weight_cache_bytes(), int64_t{0});
    MT_COMPARE(cached->weight_cache_matrices(), 0);
    const int64_t matmuls = cached->cached_matmuls();
    const ForwardBatch b = long_batch(40, vocab);
    std::vector<float> lk(40 * static_cast<size_t>(vocab));
    MT_REQUIRE(cached->forward(b, lk.data()));
    MT_COMPARE(cached->cached_matmuls(), matmuls); // dequantized per call again
}

MT_TEST(bad_slots_are_refused_and_leave_no_cache) {
    auto plugin = plugin_or_skip();
    auto q = write_and_load(tiny_spec(Architecture::Llama, WeightType::Q8_0), "wc-q8");
    auto gq = make_gpu(plugin, *q, 16);
    MT_REQUIRE(gq->set_weight_cache(std::vector<int32_t>{0, 3}));
    MT_COMPARE(gq->weight_cache_matrices(), 2);
    for (const std::vector<int32_t>& bad :
         {std::vector<int32_t>{1, 1}, std::vector<int32_t>{15}, std::vector<int32_t>{-1}}) {
        Status st = gq->set_weight_cache(bad);
        MT_CHECK(!st);
        if (!st)
            MT_CHECK_MSG(st.message().find("slot") != std::string::npos, "%s",
                         st.message().c_str());
    }
    // A model of float matrices has no candidates, and its slots are refused as not quantized.
    auto f = write_and_load(tiny_spec(Architecture::Llama, WeightType::F16), "wc-f16");
    auto gf = make_gpu(plugin, *f, 16);
    MT_CHECK(all_candidates(*gf).empty());
    Status st = gf->set_weight_cache(std::vector<int32_t>{2});
    MT_CHECK(!st);
    if (!st)
        MT_CHECK_MSG(st.message().find("not quantized") != std::string::npos, "%s",
                     st.message().c_str());
    MT_COMPARE(gf->weight_cache_bytes(), int64_t{0});
}

MT_TEST(engine_plan_chooses_the_cache_or_not) {
    auto plugin = plugin_or_skip();
    auto model = write_and_load(tiny_spec(Architecture::Qwen3, WeightType::Q4_K), "wc-engine");
    auto tok = Tokenizer::create(model->tokenizer);
    MT_REQUIRE(tok);
    CudaExecutorOptions o;
    o.max_tokens = 64;
    o.max_seqs = 4;
    for (bool allow : {true, false}) {
        auto g = CudaExecutor::create(plugin, *model, o);
        MT_REQUIRE(g);
        EngineConfig c;
        c.max_num_seqs = 4;
        c.max_num_batched_tokens = 64;
        c.memory.utilization = 0.5;
        c.memory.weight_cache = allow;
        auto e = Engine::create(**g, **tok, c);
        MT_REQUIRE_MSG(e, "%s", e ? "" : e.message().c_str());
        const MemoryPlan& p = (*e)->memory_plan();
        MT_COMPARE(p.weight_cache_candidates, 15);
        MT_COMPARE(p.weight_cache_matrices, allow ? 15 : 0);
        MT_COMPARE(p.weight_cache_bytes, (*g)->weight_cache_bytes());
        MT_COMPARE((*g)->weight_cache_matrices(), p.weight_cache_matrices);
        MT_CHECK(p.weight_bytes + p.workspace_bytes + p.weight_cache_bytes + p.kv_bytes <=
                 p.budget_bytes);
        SamplingParams sp;
        sp.temperature = 0;
        sp.max_tokens = 4;
        sp.ignore_eos = true;
        std::vector<int32_t> prompt;
        for (int i = 0; i < 30; ++i)
            prompt.push_back((17 * i + 3) % (*g)->vocab_size());
        MT_REQUIRE((*e)->add_request(prompt, sp));
        for (int guard = 0; (*e)->has_unfinished() && guard < 100; ++guard)
            (*e)->step();
        MT_CHECK_MSG((*e)->last_error().empty(), "%s", (*e)->last_error().c_str());
    }
}

MT_TEST(batch_beyond_the_load_time_token_limit) {
    auto plugin = plugin_or_skip();
    auto model = write_and_load(tiny_spec(Architecture::Llama, WeightType::Q6_K), "wc-limit");
    kernels::ThreadPool pool(2);
    CpuTransformer transformer(*model, pool);
    CpuExecutor cpu(transformer);
    MT_REQUIRE(cpu.resize_kv(8, 16, {}));
    const int32_t vocab = cpu.vocab_size();
    const ForwardBatch b = long_batch(100, vocab); // 100 token rows > the limit of 16
    std::vector<float> lc(100 * static_cast<size_t>(vocab));
    MT_REQUIRE(cpu.forward(b, lc.data()));
    for (bool reserve : {true, false}) {
        auto g = make_gpu(plugin, *model, 16, true);
        if (reserve) { // the Tuning change: buffers grow now
            Status st = g->reserve_step(128, 8);
            MT_REQUIRE_MSG(st, "%s", st ? "" : st.message().c_str());
            MT_COMPARE(g->options().max_tokens, 128);
        }
        std::vector<float> lg(lc.size(), NAN);
        Status st = g->forward(b, lg.data());
        MT_REQUIRE_MSG(st, "%s", st ? "" : st.message().c_str());
        const double e = worst_row_error(lg, lc, 100, vocab);
        std::printf("100-token batch after a limit of 16 (reserve %d): rel err vs cpu %.3g\n",
                    reserve ? 1 : 0, e);
        MT_CHECK_MSG(e <= 5e-2, "rel err %.3g", e);
    }
}

MT_TEST(engine_set_limits_replans_the_workspace) {
    auto plugin = plugin_or_skip();
    auto model = write_and_load(tiny_spec(Architecture::Qwen2, WeightType::Q8_0), "wc-limits");
    auto tok = Tokenizer::create(model->tokenizer);
    MT_REQUIRE(tok);
    CudaExecutorOptions o;
    o.max_tokens = 16;
    o.max_seqs = 2;
    auto g = CudaExecutor::create(plugin, *model, o);
    MT_REQUIRE(g);
    EngineConfig c;
    c.max_num_seqs = 2;
    c.max_num_batched_tokens = 16;
    c.memory.utilization = 0.5;
    auto e = Engine::create(**g, **tok, c);
    MT_REQUIRE(e);
    const int64_t ws16 = (*e)->memory_plan().workspace_bytes;
    const int64_t held16 = (*g)->workspace_bytes();
    MT_CHECK(held16 > 0 && ws16 >= held16); // the plan counts what the device holds
    (*e)->set_limits(2, 256);
    MT_COMPARE((*g)->options().max_tokens, 256); // grown at the change
    MT_CHECK((*g)->workspace_bytes() > held16);
    SamplingParams sp;
    sp.temperature = 0;
    sp.max_tokens = 2;
    sp.ignore_eos = true;
    std::vector<int32_t> prompt;
    for (int i = 0; i < 200; ++i)
        prompt.push_back((7 * i + 1) % (*g)->vocab_size());
    MT_REQUIRE((*e)->add_request(prompt, sp));
    StepOutputs so;
    (*e)->step(so);
    MT_CHECK_MSG((*e)->last_error().empty(), "%s", (*e)->last_error().c_str());
    // The re-plan counted the workspace of 256-token steps, and the prompt ran in one step.
    MT_CHECK((*e)->memory_plan().workspace_bytes > ws16);
    MT_COMPARE((*e)->memory_plan().workspace_bytes,
               std::max(estimate_workspace_bytes((*g)->config(), 256, 2), (*g)->workspace_bytes()));
    MT_COMPARE(so.num_prefill_tokens, 200);
    for (int guard = 0; (*e)->has_unfinished() && guard < 20; ++guard)
        (*e)->step(so);
    MT_CHECK(!(*e)->has_unfinished());
    MT_CHECK_MSG((*e)->last_error().empty(), "%s", (*e)->last_error().c_str());
}

MINI_TEST_MAIN()
