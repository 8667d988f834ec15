// Whole-model logits, CUDA vs CPU, for llama / qwen2 / qwen3 x F32 / F16 / BF16 / Q8_0 / Q4_0 /
// Q4_K / Q6_K: a prefill of two sequences, a step mixing a prefill chunk with a decode token, then
// decode-only steps (eager, and through CUDA graphs). Relative error bounds per weight type.
// Without a CUDA device: SKIPPED. The types make-model cannot write yet (Q4_1, Q5_0, Q5_1, Q2_K,
// Q3_K, Q5_K, IQ4_NL, IQ4_XS) and per-tensor mixes: tst_cuda_model_quant_types.
#include <vector>

#include "engine/runtime/cpu_executor.h"
#include "gpu_model_util.h"
#include "kernels/cpu/thread_pool.h"

using namespace llmwb;
using namespace llmwb::gputest;

namespace {

double tolerance(WeightType t, KvDtype kv) {
    double tol = 2e-3; // fp32 weights: fp32 GEMMs in another order
    if (t == WeightType::F16 || t == WeightType::BF16)
        tol = 3e-2; // activations rounded to 16 bits for the tensor-core GEMMs
    else if (t != WeightType::F32)
        tol = 5e-2; // quantized: the CPU may quantize activations to int8 for its dot products
    if (kv == KvDtype::F16)
        tol += 1e-2;
    return tol;
}

void compare(Architecture arch, WeightType type, KvDtype kv, bool graphs) {
    auto plugin = plugin_or_skip();
    ModelWriterSpec spec = tiny_spec(arch, type);
    const std::string name = std::string(architecture_name(arch)) + "-" + weight_type_name(type);
    auto model = write_and_load(spec, name);
    kernels::ThreadPool pool(2);
    CpuTransformer transformer(*model, pool);
    CpuExecutor cpu(transformer);
    MT_REQUIRE(cpu.resize_kv(8, 16, {}));
    CudaExecutorOptions o;
    o.kv_dtype = kv;
    o.use_graphs = graphs;
    o.max_tokens = 64;
    o.max_seqs = 4;
    auto gpu = CudaExecutor::create(plugin, *model, o);
    MT_REQUIRE_MSG(gpu, "%s", gpu ? "" : gpu.message().c_str());
    MT_REQUIRE((*gpu)->resize_kv(8, 16, {}));
    MT_CHECK((*gpu)->vocab_size() == cpu.vocab_size());
    const int32_t vocab = cpu.vocab_size();
    const double tol = tolerance(type, kv);
    std::vector<float> lc(2 * static_cast<size_t>(vocab)), lg(lc.size(), NAN);
    int step_no = 0;
    for (const Step& s : kSteps) {
        ForwardBatch b = make_batch(s, vocab);
        MT_REQUIRE(b.validate(16, 8));
        MT_REQUIRE(cpu.forward(b, lc.data()));
        std::fill(lg.begin(), lg.end(), NAN); // unwritten logits are caught
        Status st = (*gpu)->forward(b, lg.data());
        MT_REQUIRE_MSG(st, "%s", st ? "" : st.message().c_str());
        for (int r = 0; r < 2; ++r) {
            const double e = rel_err(lg.data() + r * vocab, lc.data() + r * vocab, vocab);
            MT_CHECK_MSG(e <= tol, "%s kv %s graphs %d step %d row %d: rel err %.3g > %.3g",
                         name.c_str(), kv_dtype_name(kv), graphs ? 1 : 0, step_no, r, e, tol);
        }
        ++step_no;
    }
    int64_t graph_steps = 0, eager_steps = 0;
    (*gpu)->graph_stats(graph_steps, eager_steps);
    if (graphs)
        MT_CHECK_MSG(graph_steps >= 2, "graph steps %lld", static_cast<long long>(graph_steps));
    else
        MT_CHECK(graph_steps == 0);
}

void all_types(Architecture arch) {
    for (WeightType t : {WeightType::F32, WeightType::F16, WeightType::BF16, WeightType::Q8_0,
                         WeightType::Q4_0, WeightType::Q4_K, WeightType::Q6_K})
        compare(arch, t, KvDtype::F32, false);
}

} // namespace

MT_TEST(llama_all_weight_types) {
    all_types(Architecture::Llama);
}
MT_TEST(qwen2_all_weight_types) {
    all_types(Architecture::Qwen2);
}
MT_TEST(qwen3_all_weight_types) {
    all_types(Architecture::Qwen3);
}

MT_TEST(f16_kv_cache) {
    compare(Architecture::Qwen2, WeightType::F32, KvDtype::F16, false);
    compare(Architecture::Qwen3, WeightType::Q4_K, KvDtype::F16, false);
}

MT_TEST(cuda_graph_decode_steps) {
    compare(Architecture::Qwen2, WeightType::F32, KvDtype::F32, true);
    compare(Architecture::Llama, WeightType::BF16, KvDtype::F16, true);
}

MT_TEST(block_copy_and_resize_keep_contents) {
    // Copy-on-write and a KV re-plan on the GPU leave the same logits as the CPU's.
    auto plugin = plugin_or_skip();
    auto model = write_and_load(tiny_spec(Architecture::Qwen2, WeightType::F32), "cow");
    kernels::ThreadPool pool(2);
    CpuTransformer transformer(*model, pool);
    CpuExecutor cpu(transformer);
    MT_REQUIRE(cpu.resize_kv(8, 16, {}));
    CudaExecutorOptions o;
    o.kv_dtype = KvDtype::F32;
    auto gpu = CudaExecutor::create(plugin, *model, o);
    MT_REQUIRE(gpu);
    MT_REQUIRE((*gpu)->resize_kv(8, 16, {}));
    const int32_t vocab = cpu.vocab_size();
    std::vector<float> lc(2 * static_cast<size_t>(vocab)), lg(lc.size());
    ForwardBatch first = make_batch(kSteps[0], vocab);
    MT_REQUIRE(cpu.forward(first, lc.data()));
    MT_REQUIRE((*gpu)->forward(first, lg.data()));
    // Move A's blocks 0..2 to 5..7 of a larger pool, B's block 4 to 1 (via copy then resize).
    for (ModelExecutor* e :
         {static_cast<ModelExecutor*>(&cpu), static_cast<ModelExecutor*>(gpu->get())}) {
        e->copy_block(4, 3);
        const BlockCopy keep[] = {{0, 5}, {1, 6}, {2, 7}, {3, 1}};
        MT_REQUIRE(e->resize_kv(12, 16, keep));
    }
    ForwardBatch b;
    const int32_t a_tok[] = {9}, b_tok[] = {10};
    const int32_t a_blocks[] = {5, 6, 7, 8}, b_blocks[] = {1};
    b.add_sequence(a_tok, 37, a_blocks, 16, ForwardBatch::Logits::Last);
    b.add_sequence(b_tok, 5, b_blocks, 16, ForwardBatch::Logits::Last);
    MT_REQUIRE(b.validate(16, 12));
    MT_REQUIRE(cpu.forward(b, lc.data()));
    MT_REQUIRE((*gpu)->forward(b, lg.data()));
    for (int r = 0; r < 2; ++r)
        MT_CHECK(rel_err(lg.data() + r * vocab, lc.data() + r * vocab, vocab) <= 2e-3);
}

MINI_TEST_MAIN()
