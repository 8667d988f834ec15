#include "engine/runtime/cpu_transformer.h"

#include "kernels/cpu/kv_write.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "engine/runtime/cpu_moe.h"
#include "engine/runtime/panel_weights.h"
#include "engine/runtime/rope.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb {

AttentionShape attention_shape(const ModelConfig& c, int32_t head_dim, int32_t block_size,
                               int32_t layer) {
    AttentionShape shape;
    shape.num_heads = c.num_heads;
    shape.num_kv_heads = c.num_kv_heads;
    shape.head_dim = head_dim;
    shape.block_size = block_size;
    shape.scale = c.query_scale > 0.0f
                      ? c.query_scale
                      : static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
    shape.window = c.window_for_layer(layer);
    shape.logit_softcap = c.attn_logit_softcap;
    return shape;
}

namespace {

kernels::WeightMatrix as_matrix(const TensorView& t) {
    return kernels::WeightMatrix{t.type, t.data, t.rows, t.cols, t.layout};
}

// A norm vector or bias as fp32 (empty when absent).
std::vector<float> to_f32(const TensorView& t) {
    if (!t.present())
        return {};
    std::vector<float> out(static_cast<size_t>(t.rows * t.cols));
    for (int64_t r = 0; r < t.rows; ++r)
        kernels::dequantize_row(t.type, t.row(r), out.data() + r * t.cols, t.cols);
    return out;
}

// y[t][:] += b[:] for every row t.
void add_bias(float* y, const std::vector<float>& b, int32_t n) {
    if (b.empty())
        return;
    const auto w = static_cast<int64_t>(b.size());
    for (int32_t t = 0; t < n; ++t)
        kernels::add(y + t * w, y + t * w, b.data(), w);
}

} // namespace

struct CpuTransformer::Norms {
    struct Layer {
        std::vector<float> attn_norm, ffn_norm;           // [hidden]
        std::vector<float> post_attn_norm, post_ffn_norm; // [hidden] (gemma2/3) or empty
        std::vector<float> q_norm, k_norm;                // [head_dim] (qwen3) or empty
        std::vector<float> bq, bk, bv;                    // [heads*hd], [kv*hd] x2 (qwen2) or empty
    };
    std::vector<Layer> layers;
    std::vector<float> output_norm; // [hidden]
};

CpuTransformer::CpuTransformer(const LoadedModel& model, kernels::ThreadPool& pool,
                               std::optional<DType> cast_floats)
    : model_(model), pool_(pool), norms_(std::make_unique<Norms>()) {
    const ModelConfig& c = model.config;
    const ModelWeights& w = model.weights;
    assert(c.head_dim % 2 == 0 && c.num_heads % c.num_kv_heads == 0);
    assert(static_cast<int32_t>(w.layers.size()) == c.num_layers);
    vocab_ = static_cast<int32_t>(w.output.present() ? w.output.rows : w.tok_embd.rows);
    inv_freq_ = rope_inv_freq(c, w.rope_freqs);
    if (c.rope_theta_local > 0.0f) { // gemma3: the sliding layers' base, without rope_scaling
        ModelConfig local = c;
        local.rope_theta = c.rope_theta_local;
        local.rope_scaling = RopeScaling{};
        inv_freq_local_ = rope_inv_freq(local, TensorView{});
    }
    rope_scale_ = rope_attention_scale(c);
    for (const LayerWeights& lw : w.layers) {
        Norms::Layer l;
        l.attn_norm = to_f32(lw.attn_norm);
        l.ffn_norm = to_f32(lw.ffn_norm);
        l.post_attn_norm = to_f32(lw.post_attn_norm);
        l.post_ffn_norm = to_f32(lw.post_ffn_norm);
        l.q_norm = to_f32(lw.q_norm);
        l.k_norm = to_f32(lw.k_norm);
        l.bq = to_f32(lw.bq);
        l.bk = to_f32(lw.bk);
        l.bv = to_f32(lw.bv);
        norms_->layers.push_back(std::move(l));
    }
    norms_->output_norm = to_f32(w.output_norm);
    if (c.is_moe())
        moe_ = std::make_unique<CpuMoe>();
    panels_ = std::make_unique<PanelWeights>(model, pool, cast_floats);
}

CpuTransformer::~CpuTransformer() = default;

int64_t CpuTransformer::weight_bytes_per_token() const {
    const ModelWeights& w = panels_->weights(); // (a cast changes the bytes)
    int64_t bytes = (w.output.present() ? w.output : w.tok_embd).rows *
                    (w.output.present() ? w.output : w.tok_embd).row_bytes();
    for (const LayerWeights& l : w.layers)
        for (const TensorView* t :
             {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_gate_up, &l.w_down})
            if (t->present())
                bytes += t->rows * t->row_bytes();
    // Mixture of experts: the router and the k experts a token uses (of n).
    for (const LayerWeights& l : w.layers) {
        if (l.experts.empty())
            continue;
        bytes += l.router.rows * l.router.row_bytes();
        int64_t experts = 0;
        for (const ExpertWeights& e : l.experts)
            for (const TensorView* t : {&e.w_gate, &e.w_up, &e.w_down})
                experts += t->rows * t->row_bytes();
        bytes += experts / static_cast<int64_t>(l.experts.size()) * model_.config.num_experts_used;
    }
    return bytes;
}

void CpuTransformer::reserve(int32_t n, int32_t n_logits) {
    const ModelConfig& c = model_.config;
    if (n > cap_tokens_) {
        const auto rows = static_cast<size_t>(n);
        x_.resize(rows * c.hidden_size);
        xb_.resize(rows * c.hidden_size);
        q_.resize(rows * c.num_heads * c.head_dim);
        k_.resize(rows * c.num_kv_heads * c.head_dim);
        v_.resize(rows * c.num_kv_heads * c.head_dim);
        att_.resize(rows * c.num_heads * c.head_dim);
        gate_.resize(rows * c.intermediate_size);
        up_.resize(rows * c.intermediate_size);
        fused_.resize(rows *
                      std::max<int64_t>(int64_t(c.num_heads + 2 * c.num_kv_heads) * c.head_dim,
                                        2 * int64_t(c.intermediate_size)));
        cos_.resize(rows * c.head_dim / 2);
        sin_.resize(rows * c.head_dim / 2);
        if (!inv_freq_local_.empty()) {
            cos_local_.resize(rows * c.head_dim / 2);
            sin_local_.resize(rows * c.head_dim / 2);
        }
        cap_tokens_ = n;
    }
    if (n_logits > cap_logits_) {
        xl_.resize(static_cast<size_t>(n_logits) * c.hidden_size);
        cap_logits_ = n_logits;
    }
}

void CpuTransformer::forward(const ForwardBatch& batch, KvCacheStorage& kv, float* logits) {
    const ModelConfig& c = model_.config;
    const ModelWeights& w = panels_->weights();
    const int32_t n = batch.n_tokens();
    const auto n_logits = static_cast<int32_t>(batch.logits_rows.size());
    assert(kv.num_layers() == c.num_layers && kv.num_kv_heads() == c.num_kv_heads &&
           kv.head_dim() == c.head_dim);
    if (n == 0)
        return;
    reserve(n, n_logits);
    const int64_t H = c.hidden_size;
    const int32_t half = c.head_dim / 2;

    // Embedding gather: x[t] = tok_embd[token_ids[t]] (any dtype).
    for (int32_t t = 0; t < n; ++t) {
        const int32_t id = batch.token_ids[t];
        assert(id >= 0 && id < w.tok_embd.rows);
        kernels::dequantize_weight_row(as_matrix(w.tok_embd), id, x_.data() + t * H);
        if (c.embedding_scale != 1.0f) // gemma: x = embedding * sqrt(hidden)
            for (int64_t i = 0; i < H; ++i)
                x_[t * H + i] *= c.embedding_scale;
        rope_cos_sin(cos_.data() + static_cast<int64_t>(t) * half,
                     sin_.data() + static_cast<int64_t>(t) * half, inv_freq_, batch.positions[t],
                     rope_scale_);
        if (!inv_freq_local_.empty())
            rope_cos_sin(cos_local_.data() + static_cast<int64_t>(t) * half,
                         sin_local_.data() + static_cast<int64_t>(t) * half, inv_freq_local_,
                         batch.positions[t]);
    }

    for (int32_t l = 0; l < c.num_layers; ++l) {
        attention_block(l, batch, kv);
        mlp_block(l, n);
    }

    if (n_logits == 0)
        return;
    // Final norm of the rows that need logits, then lm_head over them as one matrix.
    for (int32_t i = 0; i < n_logits; ++i) {
        const int32_t row = batch.logits_rows[i];
        kernels::rmsnorm(xl_.data() + i * H, x_.data() + row * H, norms_->output_norm.data(), H,
                         c.rms_norm_eps);
    }
    const TensorView& out = w.output.present() ? w.output : w.tok_embd;
    kernels::matmul(logits, as_matrix(out), xl_.data(), n_logits, &pool_);
    if (c.final_logit_softcap > 0.0f) // gemma2
        kernels::softcap(logits, static_cast<int64_t>(n_logits) * vocab_, c.final_logit_softcap);
}

void CpuTransformer::attention_block(int32_t l, const ForwardBatch& batch, KvCacheStorage& kv) {
    const ModelConfig& c = model_.config;
    const LayerWeights& lw = model_.weights.layers[l];     // loaded views (the observer's keys)
    const LayerWeights& pw = panels_->weights().layers[l]; // what the products read
    const Norms::Layer& nl = norms_->layers[l];
    const int32_t n = batch.n_tokens();
    const int64_t H = c.hidden_size;
    const int32_t hd = c.head_dim, half = hd / 2;
    const int64_t q_w = static_cast<int64_t>(c.num_heads) * hd;     // q row width
    const int64_t kv_w = static_cast<int64_t>(c.num_kv_heads) * hd; // k/v row width

    for (int32_t t = 0; t < n; ++t)
        kernels::rmsnorm(xb_.data() + t * H, x_.data() + t * H, nl.attn_norm.data(), H,
                         c.rms_norm_eps);
    if (lw.wqkv.present()) {
        // Fused projection (phi3): one product [n][q_w + 2 kv_w], then split per row.
        if (observer_)
            observer_(lw.wqkv, xb_.data(), n);
        kernels::matmul(fused_.data(), as_matrix(pw.wqkv), xb_.data(), n, &pool_);
        const int64_t fw = q_w + 2 * kv_w;
        for (int32_t t = 0; t < n; ++t) {
            const float* src = fused_.data() + t * fw;
            std::copy(src, src + q_w, q_.data() + t * q_w);
            std::copy(src + q_w, src + q_w + kv_w, k_.data() + t * kv_w);
            std::copy(src + q_w + kv_w, src + fw, v_.data() + t * kv_w);
        }
    } else {
        if (observer_) {
            observer_(lw.wq, xb_.data(), n);
            observer_(lw.wk, xb_.data(), n);
            observer_(lw.wv, xb_.data(), n);
        }
        // [n][q_w], [n][kv_w] x2: one activation preparation and one pass over the threads.
        const kernels::MatmulOut qkv[] = {{q_.data(), as_matrix(pw.wq)},
                                          {k_.data(), as_matrix(pw.wk)},
                                          {v_.data(), as_matrix(pw.wv)}};
        kernels::matmul_shared(qkv, xb_.data(), n, &pool_);
    }
    add_bias(q_.data(), nl.bq, n);
    add_bias(k_.data(), nl.bk, n);
    add_bias(v_.data(), nl.bv, n);

    for (int32_t t = 0; t < n; ++t) {
        float* qt = q_.data() + t * q_w;
        float* kt = k_.data() + t * kv_w;
        if (!nl.q_norm.empty()) // qwen3: per-head RMSNorm before RoPE
            for (int32_t h = 0; h < c.num_heads; ++h)
                kernels::rmsnorm(qt + h * hd, qt + h * hd, nl.q_norm.data(), hd, c.rms_norm_eps);
        if (!nl.k_norm.empty())
            for (int32_t h = 0; h < c.num_kv_heads; ++h)
                kernels::rmsnorm(kt + h * hd, kt + h * hd, nl.k_norm.data(), hd, c.rms_norm_eps);
        // gemma3: the local base on the sliding-type layers (even with no window set)
        const bool local = !inv_freq_local_.empty() && size_t(l) < c.layer_sliding.size() &&
                           c.layer_sliding[size_t(l)];
        const float* cs = (local ? cos_local_ : cos_).data() + static_cast<int64_t>(t) * half;
        const float* sn = (local ? sin_local_ : sin_).data() + static_cast<int64_t>(t) * half;
        rope_apply(qt, c.num_heads, hd, cs, sn, c.rope_style, c.rotary_dims());
        rope_apply(kt, c.num_kv_heads, hd, cs, sn, c.rope_style, c.rotary_dims());
    }
    // KV write through the slot mapping, in the pool's element type.
    kernels::kv_write(kv.k_pool(l), kv.layout(), k_.data(), kv_w, batch.slot_mapping.data(), n,
                      1.0f / kv.k_scale(l));
    kernels::kv_write(kv.v_pool(l), kv.layout(), v_.data(), kv_w, batch.slot_mapping.data(), n,
                      1.0f / kv.v_scale(l));

    paged_attention(att_.data(), q_.data(), batch, kv.k_pool(l), kv.v_pool(l), kv.layout(),
                    kv.k_scale(l), kv.v_scale(l), attention_shape(c, hd, kv.block_size(), l), pool_,
                    att_scratch_);

    if (observer_)
        observer_(lw.wo, att_.data(), n);
    kernels::matmul(xb_.data(), as_matrix(pw.wo), att_.data(), n, &pool_); // [n][H]
    if (!nl.post_attn_norm.empty()) // gemma2/3: norm the block output before the residual add
        for (int32_t t = 0; t < n; ++t)
            kernels::rmsnorm(xb_.data() + t * H, xb_.data() + t * H, nl.post_attn_norm.data(), H,
                             c.rms_norm_eps);
    kernels::add(x_.data(), x_.data(), xb_.data(), static_cast<int64_t>(n) * H);
}

void CpuTransformer::mlp_block(int32_t l, int32_t n) {
    const ModelConfig& c = model_.config;
    const LayerWeights& lw = model_.weights.layers[l];     // loaded views (the observer's keys)
    const LayerWeights& pw = panels_->weights().layers[l]; // what the products read
    const Norms::Layer& nl = norms_->layers[l];
    const int64_t H = c.hidden_size;
    const int64_t I = c.intermediate_size;

    for (int32_t t = 0; t < n; ++t)
        kernels::rmsnorm(xb_.data() + t * H, x_.data() + t * H, nl.ffn_norm.data(), H,
                         c.rms_norm_eps);
    if (c.is_moe()) { // router top-k over the experts (engine/runtime/cpu_moe.h)
        moe_->forward(xb_.data(), xb_.data(), n, lw, pw, c, pool_, observer_);
        kernels::add(x_.data(), x_.data(), xb_.data(), static_cast<int64_t>(n) * H);
        return;
    }
    if (lw.w_gate_up.present()) {
        // Fused projection (phi3): [n][2I], gate rows first, then up.
        if (observer_)
            observer_(lw.w_gate_up, xb_.data(), n);
        kernels::matmul(fused_.data(), as_matrix(pw.w_gate_up), xb_.data(), n, &pool_);
        for (int32_t t = 0; t < n; ++t) {
            const float* src = fused_.data() + t * 2 * I;
            std::copy(src, src + I, gate_.data() + t * I);
            std::copy(src + I, src + 2 * I, up_.data() + t * I);
        }
    } else {
        if (observer_) {
            observer_(lw.w_gate, xb_.data(), n);
            observer_(lw.w_up, xb_.data(), n);
        }
        const kernels::MatmulOut gate_up[] = {{gate_.data(), as_matrix(pw.w_gate)},
                                              {up_.data(), as_matrix(pw.w_up)}}; // [n][I] x2
        kernels::matmul_shared(gate_up, xb_.data(), n, &pool_);
    }
    if (c.activation == MlpActivation::GeluTanh)
        kernels::gelu_tanh_mul(gate_.data(), gate_.data(), up_.data(), static_cast<int64_t>(n) * I);
    else
        kernels::silu_mul(gate_.data(), gate_.data(), up_.data(), static_cast<int64_t>(n) * I);
    if (observer_)
        observer_(lw.w_down, gate_.data(), n);
    kernels::matmul(xb_.data(), as_matrix(pw.w_down), gate_.data(), n, &pool_); // [n][H]
    if (!nl.post_ffn_norm.empty())                                              // gemma2/3
        for (int32_t t = 0; t < n; ++t)
            kernels::rmsnorm(xb_.data() + t * H, xb_.data() + t * H, nl.post_ffn_norm.data(), H,
                             c.rms_norm_eps);
    kernels::add(x_.data(), x_.data(), xb_.data(), static_cast<int64_t>(n) * H);
}

} // namespace llmwb
