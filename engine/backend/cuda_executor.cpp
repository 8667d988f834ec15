#include "engine/backend/cuda_executor.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <string>

#include "engine/model/loaded_model.h"
#include "engine/model/mapped_file.h"
#include "engine/runtime/rope.h"
#include "kernels/cpu/quant.h"

namespace llmwb {

namespace {

LlmwbTensor tensor_of(const TensorView& t) {
    LlmwbTensor o{};
    if (!t.present())
        return o;
    o.data = t.data;
    o.dtype = static_cast<uint32_t>(t.type);
    o.rows = t.rows;
    o.cols = t.cols;
    o.bytes = t.rows * t.row_bytes();
    return o;
}

// A norm vector or bias as fp32 (empty when absent); kept alive by `store`.
const float* f32_of(const TensorView& t, std::vector<std::vector<float>>& store) {
    if (!t.present())
        return nullptr;
    std::vector<float> v(static_cast<size_t>(t.rows * t.cols));
    for (int64_t r = 0; r < t.rows; ++r)
        kernels::dequantize_row(t.type, t.row(r), v.data() + r * t.cols, t.cols);
    store.push_back(std::move(v));
    return store.back().data();
}

// Rows [first, first + n) of t (a fused projection's part, as stored: no copy).
TensorView row_range(const TensorView& t, int64_t first, int64_t n) {
    TensorView v = t;
    v.data = t.row(first);
    v.rows = n;
    return v;
}

// The layer's q/k/v and gate/up matrices: the separate tensors, or the row ranges of phi3's fused
// qkv ([q | k | v] rows) and gate_up ([gate | up] rows) tensors.
struct Projections {
    TensorView wq, wk, wv, w_gate, w_up;
};
Projections projections_of(const LayerWeights& l, const ModelConfig& c) {
    Projections p{l.wq, l.wk, l.wv, l.w_gate, l.w_up};
    const int64_t qw = int64_t{c.num_heads} * c.head_dim,
                  kvw = int64_t{c.num_kv_heads} * c.head_dim;
    if (l.wqkv.present() && l.wqkv.rows == qw + 2 * kvw) {
        p.wq = row_range(l.wqkv, 0, qw);
        p.wk = row_range(l.wqkv, qw, kvw);
        p.wv = row_range(l.wqkv, qw + kvw, kvw);
    }
    const int64_t I = c.intermediate_size;
    if (l.w_gate_up.present() && l.w_gate_up.rows == 2 * I) {
        p.w_gate = row_range(l.w_gate_up, 0, I);
        p.w_up = row_range(l.w_gate_up, I, I);
    }
    return p;
}

// bf16 bytes of a copy of t (0 unless quantized: float types need no cache).
int64_t bf16_copy_bytes(const TensorView& t) {
    return t.present() && dtype_block_elems(t.type) > 1 ? t.rows * t.cols * 2 : 0;
}

int32_t kv_dtype_abi(KvDtype t) {
    switch (t) {
    case KvDtype::F32:
        return LLMWB_KV_F32;
    case KvDtype::F16:
        return LLMWB_KV_F16;
    case KvDtype::BF16:
        return LLMWB_KV_BF16;
    case KvDtype::Fp8E4M3:
        return LLMWB_KV_FP8_E4M3;
    case KvDtype::Fp8E5M2:
        return LLMWB_KV_FP8_E5M2;
    case KvDtype::Int8:
        return LLMWB_KV_INT8;
    }
    return LLMWB_KV_F16;
}

// Why the CUDA runner cannot run this model yet ("" when it can): every family of Architecture
// runs there (the switch has no default, so a new family is a compiler warning until it is
// decided here).
std::string cuda_unsupported_feature(const ModelConfig& c) {
    switch (c.arch) {
    case Architecture::Llama:
    case Architecture::Qwen2:
    case Architecture::Qwen3:
    case Architecture::Gemma2:
    case Architecture::Gemma3:
    case Architecture::Phi3:
    case Architecture::Qwen3Moe:
        return "";
    }
    return "the " + std::string(architecture_name(c.arch)) + " architecture";
}

} // namespace

std::vector<int64_t> cuda_weight_cache_candidates(const LoadedModel& model) {
    const ModelWeights& w = model.weights;
    std::vector<int64_t> out;
    out.reserve(7 * w.layers.size() + 1);
    for (const LayerWeights& l : w.layers) {
        const Projections p = projections_of(l, model.config);
        for (const TensorView* t : {&p.wq, &p.wk, &p.wv, &l.wo, &p.w_gate, &p.w_up, &l.w_down})
            out.push_back(bf16_copy_bytes(*t));
    }
    out.push_back(bf16_copy_bytes(w.output.present() ? w.output : w.tok_embd));
    return out;
}

Result<std::unique_ptr<CudaExecutor>> CudaExecutor::create(std::shared_ptr<CudaPlugin> plugin,
                                                           const LoadedModel& model,
                                                           const CudaExecutorOptions& options) {
    const ModelConfig& c = model.config;
    const ModelWeights& w = model.weights;
    if (static_cast<int32_t>(w.layers.size()) != c.num_layers)
        return make_error("CUDA backend: the model's layer count does not match its config");
    if (const std::string why = cuda_unsupported_feature(c); !why.empty())
        return make_error("CUDA backend: " + why +
                          " is not supported on CUDA yet; load the model on the CPU");
    auto devices = plugin->devices();
    if (!devices)
        return devices.error();
    if (options.device < 0 || options.device >= static_cast<int32_t>(devices->size()))
        return make_error("CUDA backend: no CUDA device " + std::to_string(options.device) + " (" +
                          std::to_string(devices->size()) + " found)");

    std::vector<std::vector<float>> store; // fp32 norms and biases, alive during create_runner
    store.reserve(8 * w.layers.size() + 1);
    std::vector<LlmwbLayer> layers(w.layers.size());
    std::vector<std::vector<LlmwbTensor>> experts(w.layers.size()); // [layer][n_expert * 3]
    for (size_t i = 0; i < w.layers.size(); ++i) {
        const LayerWeights& lw = w.layers[i];
        LlmwbLayer& l = layers[i];
        l.attn_norm = f32_of(lw.attn_norm, store);
        l.ffn_norm = f32_of(lw.ffn_norm, store);
        l.q_norm = f32_of(lw.q_norm, store);
        l.k_norm = f32_of(lw.k_norm, store);
        l.bq = f32_of(lw.bq, store);
        l.bk = f32_of(lw.bk, store);
        l.bv = f32_of(lw.bv, store);
        l.post_attn_norm = f32_of(lw.post_attn_norm, store);
        l.post_ffn_norm = f32_of(lw.post_ffn_norm, store);
        const Projections p = projections_of(lw, c);
        l.wq = tensor_of(p.wq);
        l.wk = tensor_of(p.wk);
        l.wv = tensor_of(p.wv);
        l.wo = tensor_of(lw.wo);
        l.w_gate = tensor_of(p.w_gate);
        l.w_up = tensor_of(p.w_up);
        l.w_down = tensor_of(lw.w_down);
        if (c.is_moe()) {
            l.router = tensor_of(lw.router);
            for (const ExpertWeights& ex : lw.experts)
                for (const TensorView* t : {&ex.w_gate, &ex.w_up, &ex.w_down})
                    experts[i].push_back(tensor_of(*t));
            l.experts = experts[i].data();
        }
        l.sliding_window = c.window_for_layer(static_cast<int>(i));
        // gemma3: the local RoPE base on the sliding-type layers (even with no window set), as
        // the CPU transformer decides it.
        l.rope_local =
            c.rope_theta_local > 0.0f && i < c.layer_sliding.size() && c.layer_sliding[i] ? 1 : 0;
    }
    const std::vector<double> inv_freq = rope_inv_freq(c, w.rope_freqs);
    std::vector<double> inv_freq_local;
    if (c.rope_theta_local > 0.0f) { // the sliding layers' base, without rope_scaling
        ModelConfig local = c;
        local.rope_theta = c.rope_theta_local;
        local.rope_scaling = RopeScaling{};
        inv_freq_local = rope_inv_freq(local, TensorView{});
    }
    const TensorView& head = w.output.present() ? w.output : w.tok_embd;

    LlmwbModel m{};
    m.vocab_size = static_cast<int32_t>(head.rows);
    m.hidden_size = c.hidden_size;
    m.intermediate_size = c.intermediate_size;
    m.num_layers = c.num_layers;
    m.num_heads = c.num_heads;
    m.num_kv_heads = c.num_kv_heads;
    m.head_dim = c.head_dim;
    m.rope_interleaved = c.rope_style == RopeStyle::Interleaved ? 1 : 0;
    m.rms_norm_eps = c.rms_norm_eps;
    m.inv_freq = inv_freq.data();
    m.output_norm = f32_of(w.output_norm, store);
    m.tok_embd = tensor_of(w.tok_embd);
    m.lm_head = tensor_of(head);
    m.layers = layers.data();
    m.activation = c.activation == MlpActivation::GeluTanh ? LLMWB_ACT_GELU_TANH : LLMWB_ACT_SILU;
    m.rotary_dim = c.rotary_dims();
    m.embedding_scale = c.embedding_scale;
    m.attn_scale = c.query_scale;
    m.attn_logit_softcap = c.attn_logit_softcap;
    m.final_logit_softcap = c.final_logit_softcap;
    m.rope_scale = rope_attention_scale(c);
    m.inv_freq_local = inv_freq_local.empty() ? nullptr : inv_freq_local.data();
    m.num_experts = c.num_experts;
    m.num_experts_used = c.num_experts_used;
    m.expert_intermediate_size = c.expert_intermediate_size;
    m.expert_norm_topk = c.expert_norm_topk ? 1 : 0;

    LlmwbRunnerOptions ro{};
    ro.device = options.device;
    ro.kv_dtype = kv_dtype_abi(options.kv_dtype);
    ro.use_graphs = options.use_graphs ? 1 : 0;
    ro.max_tokens = std::max(1, options.max_tokens);
    ro.max_seqs = std::max(1, options.max_seqs);
    ro.max_context = options.max_context > 0 ? options.max_context : c.max_position;

    LlmwbRunner* runner = plugin->api().create_runner(&m, &ro);
    if (!runner)
        return make_error("CUDA backend: " + plugin->last_error());
    std::unique_ptr<CudaExecutor> e(new CudaExecutor());
    e->plugin_ = std::move(plugin);
    e->runner_ = runner;
    e->options_ = options;
    e->options_.max_context = ro.max_context;
    e->config_ = c;
    e->device_name_ = (*devices)[options.device].name;
    e->vocab_ = m.vocab_size;
    e->weight_bytes_ = e->plugin_->api().weight_bytes(runner);
    e->cache_candidates_ = cuda_weight_cache_candidates(model);
    // The upload read the weights through the file's mapping: a file truncated meanwhile was
    // read as zeros (mapped_file.h). From here on the runner uses only its device copy, so a
    // later change of the file does not matter on this backend (check_weights stays Ok).
    for (const auto& mf : model.mappings)
        if (Status st = mf->check_unchanged(); !st)
            return make_error("CUDA backend: " + st.message()); // e frees the runner
    return e;
}

CudaExecutor::~CudaExecutor() {
    if (runner_)
        plugin_->api().destroy_runner(runner_);
}

DeviceMemory CudaExecutor::memory() const {
    DeviceMemory m;
    int64_t total = 0, free = 0;
    if (plugin_->api().memory_info(runner_, &total, &free) == 0) {
        m.total_bytes = total;
        m.free_bytes = free;
    }
    return m;
}

Status CudaExecutor::resize_kv(int32_t num_blocks, int32_t block_size,
                               std::span<const BlockCopy> keep) {
    std::vector<int32_t> src, dst;
    src.reserve(keep.size());
    dst.reserve(keep.size());
    for (const BlockCopy& m : keep) {
        src.push_back(m.src);
        dst.push_back(m.dst);
    }
    if (plugin_->api().resize_kv(runner_, num_blocks, block_size, src.data(), dst.data(),
                                 static_cast<int32_t>(src.size())) != 0)
        return make_error("CUDA KV cache: " + plugin_->last_error());
    num_blocks_ = num_blocks;
    block_size_ = block_size;
    return ok_status();
}

void CudaExecutor::copy_block(int32_t src, int32_t dst) {
    assert(src != dst && src >= 0 && dst >= 0 && src < num_blocks_ && dst < num_blocks_);
    if (plugin_->api().copy_block(runner_, src, dst) != 0 && pending_error_.empty())
        pending_error_ = "CUDA copy of a KV block: " + plugin_->last_error();
}

Status CudaExecutor::forward(const ForwardBatch& batch, float* logits) {
    return run(batch, logits, nullptr);
}

Status CudaExecutor::forward_greedy(const ForwardBatch& batch, int32_t* ids) {
    return run(batch, nullptr, ids);
}

Status CudaExecutor::run(const ForwardBatch& batch, float* logits, int32_t* ids) {
    if (!pending_error_.empty()) {
        std::string e = std::move(pending_error_);
        pending_error_.clear();
        return make_error(e);
    }
    LlmwbBatch b{};
    b.n_tokens = batch.n_tokens();
    b.n_seqs = batch.n_seqs();
    b.max_blocks_per_seq = batch.max_blocks_per_seq;
    b.n_logits = static_cast<int32_t>(batch.logits_rows.size());
    b.token_ids = batch.token_ids.data();
    b.positions = batch.positions.data();
    b.slot_mapping = batch.slot_mapping.data();
    b.query_start = batch.query_start.data();
    b.context_lens = batch.context_lens.data();
    b.block_tables = batch.block_tables.data();
    b.logits_rows = batch.logits_rows.data();
    const int rc = ids ? plugin_->api().forward_greedy(runner_, &b, ids)
                       : plugin_->api().forward(runner_, &b, logits);
    if (rc != 0)
        return make_error("CUDA forward: " + plugin_->last_error());
    return ok_status();
}

void CudaExecutor::graph_stats(int64_t& graph_steps, int64_t& eager_steps) const {
    graph_steps = eager_steps = 0;
    plugin_->api().stats(runner_, &graph_steps, &eager_steps);
}

bool CudaExecutor::supports_kv_dtype(KvDtype) const {
    return true; // every KvDtype, in the CPU backend's layout (kernels/cuda/ops/kv_write.cu)
}

Status CudaExecutor::set_kv_dtype(KvDtype t, const KvScales& scales) {
    const KvScales s = kv_dtype_is_fp8(t) ? scales : KvScales{};
    const auto layers = static_cast<size_t>(config_.num_layers);
    const bool given = s.k.size() == layers && s.v.size() == layers;
    if (plugin_->api().set_kv_dtype(runner_, kv_dtype_abi(t), given ? s.k.data() : nullptr,
                                    given ? s.v.data() : nullptr, config_.num_layers) != 0)
        return make_error("CUDA KV cache: " + plugin_->last_error());
    options_.kv_dtype = t; // the pool's type from the next resize_kv on (keeping nothing)
    kv_scales_ = s;
    return ok_status();
}

Result<KvScales> CudaExecutor::kv_absmax(std::span<const int32_t> tokens) {
    if (tokens.empty())
        return make_error("KV calibration: no tokens");
    for (int32_t id : tokens)
        if (id < 0 || id >= vocab_)
            return make_error("KV calibration: token id " + std::to_string(id) +
                              " is outside the vocabulary");
    const auto n = static_cast<int64_t>(tokens.size());
    if ((config_.max_position > 0 && n > config_.max_position) || n > INT32_MAX)
        return make_error("KV calibration: " + std::to_string(n) +
                          " tokens exceed the model's context");
    KvScales out;
    out.k.assign(static_cast<size_t>(config_.num_layers), 0.0f);
    out.v.assign(static_cast<size_t>(config_.num_layers), 0.0f);
    if (plugin_->api().kv_absmax(runner_, tokens.data(), static_cast<int32_t>(n), out.k.data(),
                                 out.v.data()) != 0)
        return make_error("CUDA KV calibration: " + plugin_->last_error());
    return out;
}

Status CudaExecutor::set_weight_cache(std::span<const int32_t> matrices) {
    if (matrices.size() > cache_candidates_.size())
        return make_error("CUDA weight cache: more matrices than the model has");
    if (plugin_->api().set_weight_cache(runner_, matrices.data(),
                                        static_cast<int32_t>(matrices.size())) != 0)
        return make_error("CUDA " + plugin_->last_error());
    return ok_status();
}

int64_t CudaExecutor::weight_cache_bytes() const {
    int64_t bytes = 0, matmuls = 0;
    int32_t n = 0;
    return plugin_->api().weight_cache_info(runner_, &bytes, &n, &matmuls) == 0 ? bytes : 0;
}

int32_t CudaExecutor::weight_cache_matrices() const {
    int64_t bytes = 0, matmuls = 0;
    int32_t n = 0;
    return plugin_->api().weight_cache_info(runner_, &bytes, &n, &matmuls) == 0 ? n : 0;
}

int64_t CudaExecutor::cached_matmuls() const {
    int64_t bytes = 0, matmuls = 0;
    int32_t n = 0;
    return plugin_->api().weight_cache_info(runner_, &bytes, &n, &matmuls) == 0 ? matmuls : 0;
}

int64_t CudaExecutor::workspace_bytes() const {
    return plugin_->api().step_buffer_bytes(runner_);
}

Status CudaExecutor::reserve_step(int32_t max_tokens, int32_t max_seqs) {
    if (plugin_->api().reserve_step(runner_, std::max(1, max_tokens), std::max(1, max_seqs)) != 0)
        return make_error("CUDA step buffers: " + plugin_->last_error());
    options_.max_tokens = std::max(options_.max_tokens, max_tokens);
    options_.max_seqs = std::max(options_.max_seqs, max_seqs);
    return ok_status();
}

} // namespace llmwb
