// Whole-model logits, CUDA vs CPU, for the weight types `make-model` cannot write on this branch
// (Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q5_K, IQ4_NL, IQ4_XS): a tiny F32 model written by the model
// writer has its matrices re-quantized in memory (kernels::quantize_row) to one type, or to a mix
// of types per tensor as a preset mix writes them, before both backends are built from it. Also:
// a tensor of a type id the backend does not know, or whose size does not match its type and
// shape, fails the load with a message naming the tensor and the type.
// Without a CUDA device: SKIPPED.
#include <string>
#include <vector>

#include "engine/runtime/cpu_executor.h"
#include "gpu_model_util.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"

using namespace llmwb;
using namespace llmwb::gputest;

namespace {

constexpr DType kNewTypes[] = {DType::Q4_1, DType::Q5_0, DType::Q5_1,   DType::Q2_K,
                               DType::Q3_K, DType::Q5_K, DType::IQ4_NL, DType::IQ4_XS};

// Re-quantizes the F32 matrix v to type t; the bytes live in `store` (as long as the model).
void requantize(TensorView& v, DType t, std::vector<std::vector<uint8_t>>& store) {
    MT_REQUIRE_MSG(v.type == DType::F32, "%s is %s, not F32", v.name.c_str(), dtype_name(v.type));
    const int64_t rb = dtype_row_bytes(t, v.cols);
    std::vector<uint8_t> bytes(static_cast<size_t>(v.rows * rb));
    for (int64_t r = 0; r < v.rows; ++r)
        kernels::quantize_row(t, reinterpret_cast<const float*>(v.row(r)), bytes.data() + r * rb,
                              v.cols);
    store.push_back(std::move(bytes)); // moving keeps the heap buffer where it is
    v.type = t;
    v.data = store.back().data();
}

// Every matrix of the model (token_embd, output, 7 per layer), in a fixed order.
std::vector<TensorView*> matrices(LoadedModel& m) {
    std::vector<TensorView*> out = {&m.weights.tok_embd, &m.weights.output};
    for (LayerWeights& l : m.weights.layers)
        for (TensorView* v : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down})
            out.push_back(v);
    return out;
}

void compare_model(LoadedModel& model, const std::string& name, bool graphs) {
    auto plugin = plugin_or_skip();
    kernels::ThreadPool pool(2);
    CpuTransformer transformer(model, pool);
    CpuExecutor cpu(transformer);
    MT_REQUIRE(cpu.resize_kv(8, 16, {}));
    CudaExecutorOptions o;
    o.kv_dtype = KvDtype::F32;
    o.use_graphs = graphs;
    o.max_tokens = 64;
    o.max_seqs = 4;
    auto gpu = CudaExecutor::create(plugin, model, o);
    MT_REQUIRE_MSG(gpu, "%s: %s", name.c_str(), gpu ? "" : gpu.message().c_str());
    MT_REQUIRE((*gpu)->resize_kv(8, 16, {}));
    const int32_t vocab = cpu.vocab_size();
    // Quantized weights: the CPU may quantize activations to 8 bits for its integer kernels.
    const double tol = 5e-2;
    std::vector<float> lc(2 * static_cast<size_t>(vocab)), lg(lc.size());
    int step_no = 0;
    double worst = 0;
    for (const Step& s : kSteps) {
        ForwardBatch b = make_batch(s, vocab);
        MT_REQUIRE(b.validate(16, 8));
        MT_REQUIRE(cpu.forward(b, lc.data()));
        std::fill(lg.begin(), lg.end(), NAN); // unwritten logits are caught
        Status st = (*gpu)->forward(b, lg.data());
        MT_REQUIRE_MSG(st, "%s", st ? "" : st.message().c_str());
        for (int r = 0; r < 2; ++r) {
            const double e = rel_err(lg.data() + r * vocab, lc.data() + r * vocab, vocab);
            worst = std::max(worst, e);
            MT_CHECK_MSG(e <= tol, "%s graphs %d step %d row %d: rel err %.3g > %.3g", name.c_str(),
                         graphs ? 1 : 0, step_no, r, e, tol);
        }
        ++step_no;
    }
    std::printf("%s%s: worst relative logit error %.3g\n", name.c_str(), graphs ? " (graphs)" : "",
                worst);
    if (graphs) {
        int64_t graph_steps = 0, eager_steps = 0;
        (*gpu)->graph_stats(graph_steps, eager_steps);
        MT_CHECK_MSG(graph_steps >= 2, "graph steps %lld", static_cast<long long>(graph_steps));
    }
}

void one_type(Architecture arch, DType t, bool graphs) {
    std::vector<std::vector<uint8_t>> store;
    const std::string name = std::string(architecture_name(arch)) + "-" + dtype_name(t);
    auto model = write_and_load(tiny_spec(arch, WeightType::F32), name);
    for (TensorView* v : matrices(*model))
        requantize(*v, t, store);
    compare_model(*model, name, graphs);
}

} // namespace

MT_TEST(qwen2_each_new_weight_type) {
    for (DType t : kNewTypes)
        one_type(Architecture::Qwen2, t, false);
}

MT_TEST(new_types_other_architectures_and_graphs) {
    one_type(Architecture::Llama, DType::Q5_K, true);
    one_type(Architecture::Qwen3, DType::IQ4_XS, true);
    one_type(Architecture::Llama, DType::Q3_K, false);
}

MT_TEST(mixed_types_per_tensor) {
    // As a K-quant preset mix writes a file: a different type per tensor, old and new together.
    const DType mix[] = {DType::Q5_0, DType::Q6_K,   DType::Q4_K, DType::Q5_K,   DType::Q6_K,
                         DType::Q4_1, DType::Q3_K,   DType::Q2_K, DType::IQ4_XS, DType::Q5_1,
                         DType::Q8_0, DType::IQ4_NL, DType::Q4_0, DType::BF16,   DType::F16};
    std::vector<std::vector<uint8_t>> store;
    auto model = write_and_load(tiny_spec(Architecture::Qwen2, WeightType::F32), "qwen2-mix");
    const auto ms = matrices(*model);
    for (size_t i = 0; i < ms.size(); ++i)
        requantize(*ms[i], mix[i % std::size(mix)], store);
    compare_model(*model, "qwen2-mix", false);
    compare_model(*model, "qwen2-mix", true);
}

MT_TEST(unknown_or_malformed_weight_type_refused_by_name) {
    // Straight through the plugin's C ABI: the engine's loader never hands over such tensors,
    // but the plugin must refuse them itself, naming tensor and type, before any upload.
    auto plugin = plugin_or_skip();
    const LlmwbCudaApi& api = plugin->api();
    constexpr int32_t V = 32, H = 64, I = 64, HD = 32, QW = 2 * HD;
    std::vector<float> values(static_cast<size_t>(QW * H), 0.01f); // the largest matrix
    std::vector<double> inv_freq(HD / 2, 0.5);
    auto f32 = [&](int64_t rows, int64_t cols) {
        return LlmwbTensor{values.data(), static_cast<uint32_t>(DType::F32), rows, cols,
                           rows * cols * 4};
    };
    LlmwbLayer layer{};
    layer.attn_norm = layer.ffn_norm = values.data();
    layer.wq = f32(QW, H);
    layer.wk = f32(HD, H);
    layer.wv = f32(HD, H);
    layer.wo = f32(H, QW);
    layer.w_gate = f32(I, H);
    layer.w_up = f32(I, H);
    layer.w_down = f32(H, I);
    LlmwbModel m{};
    m.vocab_size = V;
    m.hidden_size = H;
    m.intermediate_size = I;
    m.num_layers = 1;
    m.num_heads = 2;
    m.num_kv_heads = 1;
    m.head_dim = HD;
    m.rms_norm_eps = 1e-6f;
    m.inv_freq = inv_freq.data();
    m.output_norm = values.data();
    m.tok_embd = f32(V, H);
    m.lm_head = f32(V, H);
    m.layers = &layer;
    LlmwbRunnerOptions o{};
    o.kv_dtype = LLMWB_KV_F32;
    o.max_tokens = 16;
    o.max_seqs = 2;
    o.max_context = 64;
    auto load_error = [&]() -> std::string {
        if (LlmwbRunner* r = api.create_runner(&m, &o)) {
            api.destroy_runner(r);
            return "";
        }
        return api.last_error();
    };
    auto expect = [&](const char* what, std::initializer_list<const char*> parts) {
        const std::string err = load_error();
        MT_CHECK_MSG(!err.empty(), "%s: loaded", what);
        for (const char* p : parts)
            MT_CHECK_MSG(err.find(p) != std::string::npos, "%s: '%s' not in '%s'", what, p,
                         err.c_str());
    };
    const std::string ok = load_error();
    MT_REQUIRE_MSG(ok.empty(), "the well-formed model: %s", ok.c_str());

    layer.wk.dtype = 99; // no such type
    expect("unknown type id", {"blk.0.attn_k", "type id 99"});
    layer.wk.dtype = 16; // a real GGML type (IQ2_S) that is not supported
    expect("IQ2_S", {"blk.0.attn_k", "type id 16", "not supported"});
    layer.wk.dtype = static_cast<uint32_t>(DType::Q5_0); // F32 bytes under a Q5_0 label
    expect("size mismatch", {"blk.0.attn_k", "Q5_0", "bytes, expected"});
    layer.wk = f32(HD, H);
    layer.w_down.dtype = static_cast<uint32_t>(DType::Q4_K); // rows of 64: not whole blocks
    expect("partial block", {"blk.0.ffn_down", "Q4_K", "whole blocks of 256"});
    layer.w_down = f32(H, I);
    m.tok_embd.dtype = 1000;
    expect("token_embd", {"token_embd", "type id 1000"});
    m.tok_embd = f32(V, H);
    MT_CHECK(load_error().empty());
}

MINI_TEST_MAIN()
