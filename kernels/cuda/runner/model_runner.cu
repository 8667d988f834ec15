#include "kernels/cuda/runner/model_runner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>

#include "kernels/cuda/ops/launch.cuh"
#include "kernels/cuda/runner/gather_rows.cuh"
#include "kernels/cuda/runner/runner_util.cuh"

namespace llmwb::cuda {

namespace {

constexpr int32_t kGraphBuckets[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
constexpr size_t kMetaAlign = 256;

size_t align_up(size_t v) {
    return (v + kMetaAlign - 1) / kMetaAlign * kMetaAlign;
}

int32_t bucket_for(int32_t n) {
    for (int32_t b : kGraphBuckets)
        if (n <= b)
            return b;
    return 0;
}

int32_t pow2_at_least(int32_t n) {
    int32_t p = 1;
    while (p < n && p < (1 << 30))
        p *= 2;
    return p;
}

std::string op_text(const char* what, OpStatus s) {
    std::string t = std::string(what) + ": " + op_status_name(s);
    const char* m = last_error_message();
    if (m && *m)
        t += std::string(" (") + m + ")";
    return t;
}

} // namespace

#define LLMWB_OP(call, what)                                                                       \
    do {                                                                                           \
        OpStatus s_ = (call);                                                                      \
        if (s_ != OpStatus::Ok) {                                                                  \
            err = op_text(what, s_);                                                               \
            return false;                                                                          \
        }                                                                                          \
    } while (0)

std::unique_ptr<ModelRunner>
ModelRunner::create(const LlmwbModel& model, const LlmwbRunnerOptions& options, std::string& err) {
    if (model.num_layers < 1 || model.hidden_size < 1 || model.num_heads < 1 ||
        model.num_kv_heads < 1 || model.num_heads % model.num_kv_heads != 0 || model.head_dim < 2 ||
        model.head_dim % 2 != 0 || model.vocab_size < 1 || model.intermediate_size < 1 ||
        !model.layers || !model.inv_freq || !model.output_norm) {
        err = "model description is incomplete or inconsistent";
        return nullptr;
    }
    if (model.rotary_dim < 0 || model.rotary_dim % 2 != 0 || model.rotary_dim > model.head_dim ||
        model.activation < LLMWB_ACT_SILU || model.activation > LLMWB_ACT_GELU_TANH ||
        !std::isfinite(model.embedding_scale) || !std::isfinite(model.attn_scale) ||
        model.attn_scale < 0.0f || !std::isfinite(model.attn_logit_softcap) ||
        model.attn_logit_softcap < 0.0f || !std::isfinite(model.final_logit_softcap) ||
        model.final_logit_softcap < 0.0f || !std::isfinite(model.rope_scale)) {
        err = "model description: rotary_dim, activation, scales or soft-caps out of range";
        return nullptr;
    }
    if (model.num_experts < 0 ||
        (model.num_experts > 0 &&
         (model.num_experts_used < 1 || model.num_experts_used > 64 ||
          model.num_experts_used > model.num_experts || model.expert_intermediate_size < 1))) {
        err = "model description: expert counts out of range (top-k 1..64, at most the experts)";
        return nullptr;
    }
    if (model.head_dim % 32 != 0 || model.head_dim > 256) {
        err = "head_dim " + std::to_string(model.head_dim) +
              " is not supported by the CUDA attention (a multiple of 32, at most 256)";
        return nullptr;
    }
    std::unique_ptr<ModelRunner> r(new ModelRunner());
    r->device_ = options.device;
    const std::optional<KvDtype> kv = kv_dtype_from_abi(options.kv_dtype);
    if (!kv) {
        err = "unknown KV cache type id " + std::to_string(options.kv_dtype);
        return nullptr;
    }
    r->kv_dtype_ = *kv;
    r->k_scale_.assign(size_t(model.num_layers), 1.0f);
    r->v_scale_.assign(size_t(model.num_layers), 1.0f);
    // MoE layers read their routing back on the host (one synchronisation per layer): eager.
    r->use_graphs_ = options.use_graphs != 0 && model.num_experts == 0;
    r->max_context_ = std::max(1, options.max_context);
    cudaError_t e = cudaSetDevice(options.device);
    if (e != cudaSuccess) {
        err = cuda_text("cudaSetDevice", e);
        return nullptr;
    }
    e = cudaStreamCreateWithFlags(&r->stream_, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        err = cuda_text("cudaStreamCreate", e);
        return nullptr;
    }
    OpStatus s = blas_create(&r->blas_, r->stream_);
    if (s != OpStatus::Ok) {
        err = op_text("cuBLAS", s);
        return nullptr;
    }
    if (!r->upload(model, err))
        return nullptr;
    const int32_t max_tokens = std::max(1, options.max_tokens);
    const int32_t max_seqs = std::max(1, options.max_seqs);
    // Graph buckets up to 256 decode rows need that many token rows.
    const int32_t bucket = bucket_for(std::min(256, max_seqs));
    if (!r->ensure_step_buffers(std::max(max_tokens, bucket), std::max(max_seqs, bucket), 0, err))
        return nullptr;
    return r;
}

ModelRunner::~ModelRunner() {
    cudaSetDevice(device_);
    if (stream_)
        cudaStreamSynchronize(stream_);
    drop_graphs();
    free_weight_cache();
    blas_destroy(blas_);
    for (void* p : weight_allocs_)
        cudaFree(p);
    if (stream_)
        cudaStreamDestroy(stream_);
}

const void* ModelRunner::upload_bytes(const void* host, size_t bytes, std::string& err) {
    void* d = nullptr;
    cudaError_t e = cudaMalloc(&d, bytes);
    if (e != cudaSuccess) {
        err = "weights: cudaMalloc of " + std::to_string(bytes >> 20) +
              " MiB: " + cudaGetErrorString(e);
        return nullptr;
    }
    weight_allocs_.push_back(d);
    e = cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        err = cuda_text("weights: cudaMemcpy", e);
        return nullptr;
    }
    weight_bytes_ += static_cast<int64_t>(bytes);
    return d;
}

bool ModelRunner::upload(const LlmwbModel& m, std::string& err) {
    vocab_ = m.vocab_size;
    hidden_ = m.hidden_size;
    inter_ = m.intermediate_size;
    layers_n_ = m.num_layers;
    heads_ = m.num_heads;
    kv_heads_ = m.num_kv_heads;
    head_dim_ = m.head_dim;
    interleaved_ = m.rope_interleaved != 0;
    eps_ = m.rms_norm_eps;
    gelu_ = m.activation == LLMWB_ACT_GELU_TANH;
    rotary_dim_ = m.rotary_dim > 0 ? m.rotary_dim : m.head_dim;
    embedding_scale_ = m.embedding_scale != 0.0f ? m.embedding_scale : 1.0f;
    attn_scale_ = m.attn_scale;
    attn_softcap_ = m.attn_logit_softcap;
    final_softcap_ = m.final_logit_softcap;
    rope_scale_ = m.rope_scale != 0.0f ? m.rope_scale : 1.0f;
    n_experts_ = m.num_experts;
    experts_used_ = m.num_experts_used;
    expert_inter_ = m.expert_intermediate_size;
    norm_topk_ = m.expert_norm_topk != 0;

    std::unordered_map<const void*, const void*> uploaded; // host -> device (tied embeddings)
    auto matrix = [&](const LlmwbTensor& t, int64_t rows, int64_t cols, const std::string& name,
                      DeviceMatrix& out) -> bool {
        if (!t.data || t.rows != rows || t.cols != cols || t.bytes <= 0) {
            err = "weight " + name + " is missing or has the wrong shape";
            return false;
        }
        // Every type of kAllDTypes has device decoders (GEMV, GEMM, embedding gather); any other
        // id is refused here, by name, before anything is uploaded.
        const std::optional<DType> known = dtype_from_ggml(t.dtype);
        if (!known) {
            err = "weight " + name + ": tensor type id " + std::to_string(t.dtype) +
                  " is not supported by the CUDA backend";
            return false;
        }
        const DType type = *known;
        const int64_t be = dtype_block_elems(type);
        if (cols % be != 0) {
            err = "weight " + name + " (" + dtype_name(type) + "): rows of " +
                  std::to_string(cols) + " elements are not whole blocks of " + std::to_string(be);
            return false;
        }
        if (t.bytes != rows * dtype_row_bytes(type, cols)) {
            err = "weight " + name + " (" + dtype_name(type) + ", " + std::to_string(rows) + " x " +
                  std::to_string(cols) + "): " + std::to_string(t.bytes) + " bytes, expected " +
                  std::to_string(rows * dtype_row_bytes(type, cols));
            return false;
        }
        const void* d = nullptr;
        if (auto it = uploaded.find(t.data); it != uploaded.end()) {
            d = it->second;
        } else {
            d = upload_bytes(t.data, static_cast<size_t>(t.bytes), err);
            if (!d)
                return false;
            uploaded.emplace(t.data, d);
        }
        out = DeviceMatrix{type, d, rows, cols};
        return true;
    };
    auto vec = [&](const float* host, int64_t n, const float*& out) -> bool {
        out = nullptr;
        if (!host)
            return true;
        out = static_cast<const float*>(upload_bytes(host, static_cast<size_t>(n) * 4, err));
        return out != nullptr;
    };
    const int64_t H = hidden_, I = inter_, qw = int64_t{heads_} * head_dim_,
                  kvw = int64_t{kv_heads_} * head_dim_;
    if (!matrix(m.tok_embd, vocab_, H, "token_embd", tok_embd_) ||
        !matrix(m.lm_head, vocab_, H, "lm_head", lm_head_) || !vec(m.output_norm, H, output_norm_))
        return false;
    const size_t freq_bytes = static_cast<size_t>(rotary_dim_ / 2) * sizeof(double);
    inv_freq_ = static_cast<const double*>(upload_bytes(m.inv_freq, freq_bytes, err));
    if (!inv_freq_)
        return false;
    inv_freq_local_ = nullptr;
    if (m.inv_freq_local) {
        inv_freq_local_ =
            static_cast<const double*>(upload_bytes(m.inv_freq_local, freq_bytes, err));
        if (!inv_freq_local_)
            return false;
    }
    layers_.resize(static_cast<size_t>(layers_n_));
    for (int32_t l = 0; l < layers_n_; ++l) {
        const LlmwbLayer& s = m.layers[l];
        Layer& d = layers_[l];
        if (!s.attn_norm || !s.ffn_norm) {
            err = "layer " + std::to_string(l) + " has no norm weights";
            return false;
        }
        const std::string p = "blk." + std::to_string(l) + ".";
        if (s.sliding_window < 0 || (s.rope_local && !m.inv_freq_local)) {
            err = "layer " + std::to_string(l) +
                  ": negative sliding window, or local RoPE without local frequencies";
            return false;
        }
        if (n_experts_ > 0) {
            if (!s.experts) {
                err = "layer " + std::to_string(l) + " has no expert tensors";
                return false;
            }
            if (!matrix(s.router, n_experts_, H, p + "ffn_gate_inp", d.router))
                return false;
            d.experts.resize(size_t(n_experts_) * 3);
            const int64_t EI = expert_inter_;
            for (int32_t x = 0; x < n_experts_; ++x) {
                const LlmwbTensor* t = s.experts + size_t(x) * 3;
                const std::string q = p + "expert " + std::to_string(x) + " ";
                if (!matrix(t[0], EI, H, q + "ffn_gate", d.experts[size_t(x) * 3]) ||
                    !matrix(t[1], EI, H, q + "ffn_up", d.experts[size_t(x) * 3 + 1]) ||
                    !matrix(t[2], H, EI, q + "ffn_down", d.experts[size_t(x) * 3 + 2]))
                    return false;
            }
        }
        d.window = s.sliding_window;
        d.rope_local = s.rope_local != 0;
        if (!matrix(s.wq, qw, H, p + "attn_q", d.wq) || !matrix(s.wk, kvw, H, p + "attn_k", d.wk) ||
            !matrix(s.wv, kvw, H, p + "attn_v", d.wv) ||
            !matrix(s.wo, H, qw, p + "attn_output", d.wo) ||
            (n_experts_ == 0 && (!matrix(s.w_gate, I, H, p + "ffn_gate", d.w_gate) ||
                                 !matrix(s.w_up, I, H, p + "ffn_up", d.w_up) ||
                                 !matrix(s.w_down, H, I, p + "ffn_down", d.w_down))) ||
            !vec(s.attn_norm, H, d.attn_norm) || !vec(s.ffn_norm, H, d.ffn_norm) ||
            !vec(s.q_norm, head_dim_, d.q_norm) || !vec(s.k_norm, head_dim_, d.k_norm) ||
            !vec(s.bq, qw, d.bq) || !vec(s.bk, kvw, d.bk) || !vec(s.bv, kvw, d.bv) ||
            !vec(s.post_attn_norm, H, d.post_attn_norm) ||
            !vec(s.post_ffn_norm, H, d.post_ffn_norm))
            return false;
    }
    return true;
}

bool ModelRunner::ensure_step_buffers(int32_t n_tokens, int32_t n_logits, size_t meta_bytes,
                                      std::string& err) {
    bool moved = false;
    if (n_tokens > cap_tokens_) {
        const size_t t = static_cast<size_t>(n_tokens);
        const size_t H = hidden_, qw = size_t(heads_) * head_dim_,
                     kvw = size_t(kv_heads_) * head_dim_, I = inter_;
        if (!x_.ensure(t * H * 4, &moved, err) || !xb_.ensure(t * H * 4, &moved, err) ||
            !delta_.ensure(t * H * 4, &moved, err) || !q_.ensure(t * qw * 4, &moved, err) ||
            !k_.ensure(t * kvw * 4, &moved, err) || !v_.ensure(t * kvw * 4, &moved, err) ||
            !att_.ensure(t * qw * 4, &moved, err) || !gate_.ensure(t * I * 4, &moved, err) ||
            !up_.ensure(t * I * 4, &moved, err)) {
            cap_tokens_ = 0;
            drop_graphs();
            return false;
        }
        size_t ws = 0;
        auto need = [&](const DeviceMatrix& w) {
            ws = std::max(ws, matmul_workspace_bytes(w.rows, w.cols, n_tokens, w.type));
        };
        need(lm_head_);
        for (const Layer& l : layers_) {
            for (const DeviceMatrix* w :
                 {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down})
                if (w->data)
                    need(*w);
            if (l.router.data)
                need(l.router);
            for (const DeviceMatrix& w : l.experts)
                need(w);
        }
        if (n_experts_ > 0) {
            const size_t m = t * size_t(experts_used_), EI = size_t(expert_inter_);
            if (!moe_logits_.ensure(t * size_t(n_experts_) * 4, &moved, err) ||
                !moe_logits_host_.ensure(t * size_t(n_experts_) * 4, err) ||
                !moe_index_.ensure(m * 12, &moved, err) || !moe_index_host_.ensure(m * 12, err) ||
                !moe_x_.ensure(m * H * 4, &moved, err) ||
                !moe_gate_.ensure(m * EI * 4, &moved, err) ||
                !moe_up_.ensure(m * EI * 4, &moved, err) ||
                !moe_y_.ensure(m * H * 4, &moved, err)) {
                cap_tokens_ = 0;
                return false;
            }
        }
        if (!matmul_ws_.ensure(ws, &moved, err))
            return false;
        matmul_ws_bytes_ = ws;
        const size_t aws =
            paged_attention_workspace_bytes(n_tokens, heads_, head_dim_, max_context_);
        if (!attn_ws_.ensure(aws, &moved, err))
            return false;
        attn_ws_bytes_ = aws;
        cap_tokens_ = n_tokens;
    }
    if (n_logits > cap_logits_) {
        const size_t n = static_cast<size_t>(n_logits);
        if (!xl_.ensure(n * hidden_ * 4, &moved, err) ||
            !logits_dev_.ensure(n * size_t(vocab_) * 4, &moved, err) ||
            !logits_host_.ensure(n * size_t(vocab_) * 4, err) ||
            !ids_dev_.ensure(n * 4, &moved, err) || !ids_host_.ensure(n * 4, err)) {
            cap_logits_ = 0;
            drop_graphs();
            return false;
        }
        cap_logits_ = n_logits;
    }
    // The metadata of the largest graph bucket always fits, so that graphs never see it move.
    const size_t meta_floor = layout_for(256, 256, 256, pow2_at_least(max_context_ / 8 + 1)).total;
    const size_t meta = std::max(meta_bytes, meta_floor);
    if (meta > meta_cap_) {
        if (!meta_dev_.ensure(meta, &moved, err) || !meta_host_.ensure(meta, err)) {
            meta_cap_ = 0;
            drop_graphs();
            return false;
        }
        meta_cap_ = meta;
    }
    if (moved)
        drop_graphs();
    return true;
}

ModelRunner::MetaLayout ModelRunner::layout_for(int32_t n_tokens, int32_t n_seqs, int32_t n_logits,
                                                int32_t blocks_width) {
    MetaLayout m;
    m.n_tokens = n_tokens;
    m.n_seqs = n_seqs;
    m.n_logits = n_logits;
    m.blocks_width = blocks_width;
    size_t off = 0;
    auto take = [&](size_t bytes) {
        const size_t at = off;
        off = align_up(off + bytes);
        return at;
    };
    m.token_ids = take(size_t(n_tokens) * 4);
    m.positions = take(size_t(n_tokens) * 4);
    m.slot_mapping = take(size_t(n_tokens) * 8);
    m.query_start = take(size_t(n_seqs + 1) * 4);
    m.context_lens = take(size_t(n_seqs) * 4);
    m.block_tables = take(size_t(n_seqs) * size_t(blocks_width) * 4);
    m.logits_rows = take(size_t(std::max(1, n_logits)) * 4);
    m.total = off;
    return m;
}

void ModelRunner::pack_eager(const LlmwbBatch& b, const MetaLayout& m) {
    auto* base = meta_host_.as<unsigned char>();
    std::memcpy(base + m.token_ids, b.token_ids, size_t(b.n_tokens) * 4);
    std::memcpy(base + m.positions, b.positions, size_t(b.n_tokens) * 4);
    std::memcpy(base + m.slot_mapping, b.slot_mapping, size_t(b.n_tokens) * 8);
    std::memcpy(base + m.query_start, b.query_start, size_t(b.n_seqs + 1) * 4);
    std::memcpy(base + m.context_lens, b.context_lens, size_t(b.n_seqs) * 4);
    std::memcpy(base + m.block_tables, b.block_tables,
                size_t(b.n_seqs) * size_t(b.max_blocks_per_seq) * 4);
    if (b.n_logits > 0)
        std::memcpy(base + m.logits_rows, b.logits_rows, size_t(b.n_logits) * 4);
}

void ModelRunner::pack_padded_decode(const LlmwbBatch& b, const MetaLayout& m) {
    auto* base = meta_host_.as<unsigned char>();
    auto* ids = reinterpret_cast<int32_t*>(base + m.token_ids);
    auto* pos = reinterpret_cast<int32_t*>(base + m.positions);
    auto* slots = reinterpret_cast<int64_t*>(base + m.slot_mapping);
    auto* qs = reinterpret_cast<int32_t*>(base + m.query_start);
    auto* ctx = reinterpret_cast<int32_t*>(base + m.context_lens);
    auto* tables = reinterpret_cast<int32_t*>(base + m.block_tables);
    auto* rows = reinterpret_cast<int32_t*>(base + m.logits_rows);
    const int32_t n = b.n_tokens, B = m.n_tokens, W = m.blocks_width;
    for (int32_t i = 0; i < B; ++i) {
        const bool real = i < n;
        ids[i] = real ? b.token_ids[i] : 0;
        pos[i] = real ? b.positions[i] : 0;
        slots[i] = real ? b.slot_mapping[i] : -1; // kv_write skips padding rows
        qs[i] = i;
        // A padding row attends to slot 0 of block 0 (always allocated); its output is unused.
        ctx[i] = real ? b.context_lens[i] : 1;
        rows[i] = i;
        int32_t* t = tables + int64_t{i} * W;
        for (int32_t j = 0; j < W; ++j)
            t[j] = real ? (j < b.max_blocks_per_seq
                               ? b.block_tables[int64_t{i} * b.max_blocks_per_seq + j]
                               : -1)
                        : (j == 0 ? 0 : -1);
    }
    qs[B] = B;
}

void* ModelRunner::k_cache(int32_t layer) const {
    const size_t plane = size_t(num_blocks_) * size_t(kv_layout(block_size_).block_bytes());
    return kv_.as<unsigned char>() + plane * size_t(2 * layer);
}

void* ModelRunner::v_cache(int32_t layer) const {
    const size_t plane = size_t(num_blocks_) * size_t(kv_layout(block_size_).block_bytes());
    return kv_.as<unsigned char>() + plane * size_t(2 * layer + 1);
}

bool ModelRunner::enqueue_layer(int32_t l, const StepShape& sh, const MetaLayout& m,
                                std::string& err) {
    const Layer& L = layers_[l];
    const int32_t slot = l * kLayerMatrices;
    const int64_t T = sh.n_tokens, H = hidden_, I = inter_;
    const int64_t kvw = int64_t{kv_heads_} * head_dim_;
    auto* base = meta_dev_.as<unsigned char>();
    cudaStream_t s = stream_;
    float *x = x_.as<float>(), *xb = xb_.as<float>(), *delta = delta_.as<float>(),
          *q = q_.as<float>(), *k = k_.as<float>(), *v = v_.as<float>(), *att = att_.as<float>(),
          *gate = gate_.as<float>(), *up = up_.as<float>();

    if (!mm(q, slot + 0, xb, T, "attn_q", err))
        return false;
    if (!mm(k, slot + 1, xb, T, "attn_k", err))
        return false;
    if (!mm(v, slot + 2, xb, T, "attn_v", err))
        return false;
    if (L.bq)
        LLMWB_OP(bias_add(q, L.bq, T, int64_t{heads_} * head_dim_, s), "q bias");
    if (L.bk)
        LLMWB_OP(bias_add(k, L.bk, T, kvw, s), "k bias");
    if (L.bv)
        LLMWB_OP(bias_add(v, L.bv, T, kvw, s), "v bias");
    if (L.q_norm)
        LLMWB_OP(rmsnorm(q, q, L.q_norm, T * heads_, head_dim_, eps_, s), "q norm");
    if (L.k_norm)
        LLMWB_OP(rmsnorm(k, k, L.k_norm, T * kv_heads_, head_dim_, eps_, s), "k norm");
    LLMWB_OP(rope(q, k, reinterpret_cast<const int32_t*>(base + m.positions), T, heads_, kv_heads_,
                  head_dim_, L.rope_local ? inv_freq_local_ : inv_freq_, interleaved_, s,
                  rotary_dim_, rope_scale_),
             "rope");
    LLMWB_OP(kv_write(k_cache(l), v_cache(l), k, v,
                      reinterpret_cast<const int64_t*>(base + m.slot_mapping), T,
                      kv_layout(block_size_), 1.0f / k_scale_[l], 1.0f / v_scale_[l], s),
             "kv_write");
    AttentionBatch ab;
    ab.query_start = reinterpret_cast<const int32_t*>(base + m.query_start);
    ab.context_lens = reinterpret_cast<const int32_t*>(base + m.context_lens);
    ab.block_tables = reinterpret_cast<const int32_t*>(base + m.block_tables);
    ab.max_blocks_per_seq = m.blocks_width;
    ab.n_seqs = sh.n_seqs;
    ab.n_tokens = sh.n_tokens;
    ab.max_query_len = sh.max_query_len;
    ab.max_context_len = sh.max_context_len;
    AttentionParams ap;
    ap.heads = heads_;
    ap.kv_heads = kv_heads_;
    ap.head_dim = head_dim_;
    ap.block_size = block_size_;
    ap.scale = attn_scale_ > 0.0f
                   ? attn_scale_
                   : static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim_)));
    ap.window = L.window;
    ap.logit_softcap = attn_softcap_;
    ap.kv_dtype = kv_dtype_;
    ap.k_scale = k_scale_[l];
    ap.v_scale = v_scale_[l];
    // The F32 KV cache is the exact mode (comparisons with the CPU backend): keep prefill
    // attention in fp32 there; with every other type, prefill runs on tensor cores.
    ap.tensor_cores = kv_dtype_ != KvDtype::F32;
    LLMWB_OP(
        paged_attention(att, q, k_cache(l), v_cache(l), ab, ap, attn_ws_.get(), attn_ws_bytes_, s),
        "paged_attention");
    if (!mm(delta, slot + 3, att, T, "attn_output", err))
        return false;
    if (L.post_attn_norm)
        LLMWB_OP(rmsnorm(delta, delta, L.post_attn_norm, T, H, eps_, s), "post-attention norm");
    LLMWB_OP(add_rmsnorm(x, xb, delta, L.ffn_norm, T, H, eps_, s), "ffn norm");
    if (n_experts_ > 0) {
        if (!enqueue_moe(l, static_cast<int32_t>(T), err))
            return false;
        if (l + 1 < layers_n_)
            LLMWB_OP(add_rmsnorm(x, xb, delta, layers_[l + 1].attn_norm, T, H, eps_, s),
                     "attn norm");
        return true;
    }
    if (!mm(gate, slot + 4, xb, T, "ffn_gate", err) || !mm(up, slot + 5, xb, T, "ffn_up", err))
        return false;
    if (gelu_)
        LLMWB_OP(gelu_tanh_mul(gate, gate, up, T * I, s), "gelu_tanh_mul");
    else
        LLMWB_OP(silu_mul(gate, gate, up, T * I, s), "silu_mul");
    if (!mm(delta, slot + 6, gate, T, "ffn_down", err))
        return false;
    if (L.post_ffn_norm)
        LLMWB_OP(rmsnorm(delta, delta, L.post_ffn_norm, T, H, eps_, s), "post-MLP norm");
    if (l + 1 < layers_n_)
        LLMWB_OP(add_rmsnorm(x, xb, delta, layers_[l + 1].attn_norm, T, H, eps_, s), "attn norm");
    return true;
}

bool ModelRunner::enqueue_forward(const StepShape& sh, const MetaLayout& m, std::string& err) {
    auto* base = meta_dev_.as<unsigned char>();
    const int64_t T = sh.n_tokens, H = hidden_;
    cudaStream_t s = stream_;
    LLMWB_OP(embedding_gather(x_.as<float>(), tok_embd_,
                              reinterpret_cast<const int32_t*>(base + m.token_ids), T, s),
             "embedding");
    if (embedding_scale_ != 1.0f)
        LLMWB_OP(scale(x_.as<float>(), embedding_scale_, T * H, s), "embedding scale");
    LLMWB_OP(rmsnorm(xb_.as<float>(), x_.as<float>(), layers_[0].attn_norm, T, H, eps_, s),
             "attn norm");
    for (int32_t l = 0; l < layers_n_; ++l)
        if (!enqueue_layer(l, sh, m, err))
            return false;
    LLMWB_OP(add(x_.as<float>(), x_.as<float>(), delta_.as<float>(), T * H, s), "residual");
    if (sh.n_logits == 0)
        return true;
    LLMWB_LAUNCH(static_cast<unsigned>(sh.n_logits), 256, 0, s, gather_rows_kernel)
    (xl_.as<float>(), x_.as<float>(), reinterpret_cast<const int32_t*>(base + m.logits_rows),
     sh.n_logits, hidden_);
    LLMWB_CU(cudaGetLastError(), "gather rows");
    LLMWB_OP(rmsnorm(xl_.as<float>(), xl_.as<float>(), output_norm_, sh.n_logits, H, eps_, s),
             "output norm");
    if (!mm(logits_dev_.as<float>(), layers_n_ * kLayerMatrices, xl_.as<float>(), sh.n_logits,
            "lm_head", err))
        return false;
    if (final_softcap_ > 0.0f)
        LLMWB_OP(softcap(logits_dev_.as<float>(), int64_t{sh.n_logits} * vocab_, final_softcap_, s),
                 "final-logit soft-cap");
    return true;
}

void ModelRunner::drop_graphs() {
    for (auto& [key, g] : graphs_)
        if (g.exec)
            cudaGraphExecDestroy(g.exec);
    graphs_.clear();
}

bool ModelRunner::run_graph(const LlmwbBatch& b, std::string& err) {
    const int32_t B = bucket_for(b.n_tokens);
    const int32_t W = pow2_at_least(std::max(1, b.max_blocks_per_seq));
    const MetaLayout m = layout_for(B, B, B, W);
    if (!ensure_step_buffers(B, B, m.total, err))
        return false;
    pack_padded_decode(b, m);
    LLMWB_CU(cudaMemcpyAsync(meta_dev_.get(), meta_host_.get(), m.total, cudaMemcpyHostToDevice,
                             stream_),
             "batch upload");
    const auto key = std::make_pair(B, W);
    auto it = graphs_.find(key);
    if (it == graphs_.end()) {
        StepShape sh;
        sh.n_tokens = sh.n_seqs = sh.n_logits = B;
        sh.blocks_width = W;
        sh.max_query_len = 1;
        sh.max_context_len = W * block_size_;
        // Warm-up outside capture (cuBLAS picks and initialises its kernels), then capture.
        if (!enqueue_forward(sh, m, err))
            return false;
        cudaGraph_t graph = nullptr;
        LLMWB_CU(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
                 "CUDA graph capture begin");
        std::string cap_err;
        const bool ok = enqueue_forward(sh, m, cap_err);
        cudaError_t e = cudaStreamEndCapture(stream_, &graph);
        if (!ok || e != cudaSuccess) {
            if (graph)
                cudaGraphDestroy(graph);
            cudaGetLastError();
            err = "CUDA graph capture failed: " +
                  (!ok ? cap_err : std::string(cudaGetErrorString(e)));
            return false;
        }
        cudaGraphExec_t exec = nullptr;
        e = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        if (e != cudaSuccess) {
            cudaGetLastError();
            err = cuda_text("CUDA graph instantiate", e);
            return false;
        }
        it = graphs_.emplace(key, Graph{exec, sh}).first;
        // The warm-up already computed this step; the graph serves the next ones.
        return true;
    }
    LLMWB_CU(cudaGraphLaunch(it->second.exec, stream_), "cudaGraphLaunch");
    return true;
}

bool ModelRunner::forward(const LlmwbBatch& b, float* logits, int32_t* ids, std::string& err) {
    LLMWB_CU(cudaSetDevice(device_), "cudaSetDevice");
    if (b.n_tokens <= 0)
        return true;
    if (num_blocks_ <= 0) {
        err = "forward before the KV cache was sized";
        return false;
    }
    bool decode_only = use_graphs_ && b.n_seqs == b.n_tokens && b.n_logits == b.n_tokens &&
                       bucket_for(b.n_tokens) > 0;
    for (int32_t i = 0; decode_only && i < b.n_tokens; ++i)
        decode_only = b.query_start[i] == i && b.logits_rows[i] == i;
    bool done = false;
    if (decode_only) {
        std::string gerr;
        if (run_graph(b, gerr)) {
            done = true;
            ++graph_steps_;
        } else if (gerr.rfind("CUDA graph", 0) == 0) {
            // Capture is not possible here: run this and every later step eagerly.
            use_graphs_ = false;
            drop_graphs();
        } else {
            err = gerr;
            return false;
        }
    }
    if (!done) {
        const MetaLayout m = layout_for(b.n_tokens, b.n_seqs, b.n_logits, b.max_blocks_per_seq);
        if (!ensure_step_buffers(b.n_tokens, b.n_logits, m.total, err))
            return false;
        StepShape sh;
        sh.n_tokens = b.n_tokens;
        sh.n_seqs = b.n_seqs;
        sh.n_logits = b.n_logits;
        sh.blocks_width = b.max_blocks_per_seq;
        for (int32_t i = 0; i < b.n_seqs; ++i) {
            sh.max_query_len = std::max(sh.max_query_len, b.query_start[i + 1] - b.query_start[i]);
            sh.max_context_len = std::max(sh.max_context_len, b.context_lens[i]);
        }
        if (sh.max_context_len > max_context_) {
            max_context_ = sh.max_context_len;
            const size_t aws =
                paged_attention_workspace_bytes(cap_tokens_, heads_, head_dim_, max_context_);
            bool moved = false;
            if (!attn_ws_.ensure(aws, &moved, err))
                return false;
            attn_ws_bytes_ = std::max(attn_ws_bytes_, aws);
            if (moved)
                drop_graphs();
        }
        pack_eager(b, m);
        LLMWB_CU(cudaMemcpyAsync(meta_dev_.get(), meta_host_.get(), m.total, cudaMemcpyHostToDevice,
                                 stream_),
                 "batch upload");
        if (!enqueue_forward(sh, m, err)) {
            cudaStreamSynchronize(stream_);
            return false;
        }
        ++eager_steps_;
    }
    if (!logits && b.n_logits > 0) {
        // Greedy on the device: only the ids travel back.
        LLMWB_OP(argmax_rows(ids_dev_.as<int32_t>(), logits_dev_.as<float>(), b.n_logits, vocab_,
                             stream_),
                 "argmax");
        const size_t id_bytes = size_t(b.n_logits) * 4;
        LLMWB_CU(cudaMemcpyAsync(ids_host_.get(), ids_dev_.get(), id_bytes, cudaMemcpyDeviceToHost,
                                 stream_),
                 "ids download");
        LLMWB_CU(cudaStreamSynchronize(stream_), "forward");
        std::memcpy(ids, ids_host_.get(), id_bytes);
        return true;
    }
    const size_t bytes = size_t(b.n_logits) * size_t(vocab_) * 4;
    if (bytes > 0)
        LLMWB_CU(cudaMemcpyAsync(logits_host_.get(), logits_dev_.get(), bytes,
                                 cudaMemcpyDeviceToHost, stream_),
                 "logits download");
    LLMWB_CU(cudaStreamSynchronize(stream_), "forward");
    if (bytes > 0)
        std::memcpy(logits, logits_host_.get(), bytes);
    return true;
}

} // namespace llmwb::cuda
