#include "engine/model/weight_binding.h"

#include "engine/model/arch_moe.h"

#include <cstdint>

#include "kernels/cpu/quant.h"

namespace llmwb {

std::string gguf_tensor_name(TensorRole role, int layer) {
    const std::string b = "blk." + std::to_string(layer) + ".";
    switch (role) {
    case TensorRole::TokEmbd:
        return "token_embd.weight";
    case TensorRole::OutputNorm:
        return "output_norm.weight";
    case TensorRole::Output:
        return "output.weight";
    case TensorRole::RopeFreqs:
        return "rope_freqs.weight";
    case TensorRole::AttnNorm:
        return b + "attn_norm.weight";
    case TensorRole::Wq:
        return b + "attn_q.weight";
    case TensorRole::Wk:
        return b + "attn_k.weight";
    case TensorRole::Wv:
        return b + "attn_v.weight";
    case TensorRole::Wo:
        return b + "attn_output.weight";
    case TensorRole::Bq:
        return b + "attn_q.bias";
    case TensorRole::Bk:
        return b + "attn_k.bias";
    case TensorRole::Bv:
        return b + "attn_v.bias";
    case TensorRole::QNorm:
        return b + "attn_q_norm.weight";
    case TensorRole::KNorm:
        return b + "attn_k_norm.weight";
    case TensorRole::FfnNorm:
        return b + "ffn_norm.weight";
    case TensorRole::WGate:
        return b + "ffn_gate.weight";
    case TensorRole::WUp:
        return b + "ffn_up.weight";
    case TensorRole::WDown:
        return b + "ffn_down.weight";
    case TensorRole::PostAttnNorm:
        return b + "post_attention_norm.weight";
    case TensorRole::PostFfnNorm:
        return b + "post_ffw_norm.weight";
    case TensorRole::Wqkv:
        return b + "attn_qkv.weight";
    case TensorRole::WGateUp: // phi3 GGUF stores the fused gate/up projection as ffn_up
        return b + "ffn_up.weight";
    case TensorRole::Router:
        return b + "ffn_gate_inp.weight";
    case TensorRole::ExpGate:
        return b + "ffn_gate_exps.weight";
    case TensorRole::ExpUp:
        return b + "ffn_up_exps.weight";
    case TensorRole::ExpDown:
        return b + "ffn_down_exps.weight";
    }
    return "";
}

std::string hf_tensor_name(TensorRole role, int layer) {
    const std::string b = "model.layers." + std::to_string(layer) + ".";
    switch (role) {
    case TensorRole::TokEmbd:
        return "model.embed_tokens.weight";
    case TensorRole::OutputNorm:
        return "model.norm.weight";
    case TensorRole::Output:
        return "lm_head.weight";
    case TensorRole::RopeFreqs:
        return "rope_freqs.weight"; // not an HF tensor
    case TensorRole::AttnNorm:
        return b + "input_layernorm.weight";
    case TensorRole::Wq:
        return b + "self_attn.q_proj.weight";
    case TensorRole::Wk:
        return b + "self_attn.k_proj.weight";
    case TensorRole::Wv:
        return b + "self_attn.v_proj.weight";
    case TensorRole::Wo:
        return b + "self_attn.o_proj.weight";
    case TensorRole::Bq:
        return b + "self_attn.q_proj.bias";
    case TensorRole::Bk:
        return b + "self_attn.k_proj.bias";
    case TensorRole::Bv:
        return b + "self_attn.v_proj.bias";
    case TensorRole::QNorm:
        return b + "self_attn.q_norm.weight";
    case TensorRole::KNorm:
        return b + "self_attn.k_norm.weight";
    case TensorRole::FfnNorm:
        return b + "post_attention_layernorm.weight";
    case TensorRole::WGate:
        return b + "mlp.gate_proj.weight";
    case TensorRole::WUp:
        return b + "mlp.up_proj.weight";
    case TensorRole::WDown:
        return b + "mlp.down_proj.weight";
    case TensorRole::PostAttnNorm: // gemma2/3 (whose pre-MLP norm is pre_feedforward_layernorm)
        return b + "post_attention_layernorm.weight";
    case TensorRole::PostFfnNorm:
        return b + "post_feedforward_layernorm.weight";
    case TensorRole::Wqkv:
        return b + "self_attn.qkv_proj.weight";
    case TensorRole::WGateUp:
        return b + "mlp.gate_up_proj.weight";
    case TensorRole::Router:
        return b + "mlp.gate.weight";
    case TensorRole::ExpGate: // per expert in Hugging Face files: mlp.experts.<e>.gate_proj
    case TensorRole::ExpUp:
    case TensorRole::ExpDown:
        return b + "mlp.experts";
    }
    return "";
}

namespace {

class Binder {
  public:
    Binder(LoadedModel& m, const TensorLookup& lookup, std::string (*naming)(TensorRole, int),
           const std::string& file)
        : m_(m), lookup_(lookup), naming_(naming), file_(file) {}

    // Binds a matrix (kept as stored) or, with to_f32, a vector converted to F32.
    Status bind(TensorView& out, TensorRole role, int layer, int64_t rows, int64_t cols,
                bool to_f32, bool required = true) {
        const std::string name = naming_(role, layer);
        auto t = lookup_(name);
        if (!t) {
            if (!required)
                return ok_status();
            return make_error(file_ + ": missing tensor " + name);
        }
        if (t->rows != rows || t->cols != cols) {
            return make_error(file_ + ": " + name + ": shape " + shape_text(t->rows, t->cols) +
                              ", expected " + shape_text(rows, cols) + " (shape mismatch)");
        }
        m_.weight_bytes += t->bytes;
        m_.parameter_count += t->rows * t->cols;
        out.name = name;
        out.rows = rows;
        out.cols = cols;
        const bool misaligned = reinterpret_cast<uintptr_t>(t->data) % alignof(float) != 0;
        if (to_f32 && (t->type != DType::F32 || misaligned)) {
            std::vector<float> buf(size_t(rows * cols));
            const int64_t rb = dtype_row_bytes(t->type, cols);
            for (int64_t r = 0; r < rows; ++r) {
                kernels::dequantize_row(t->type, t->data + r * rb, buf.data() + r * cols, cols);
            }
            m_.owned_f32.push_back(std::move(buf));
            out.type = DType::F32;
            out.data = m_.owned_f32.back().data();
        } else {
            out.type = t->type;
            out.data = t->data;
        }
        return ok_status();
    }

  private:
    static std::string shape_text(int64_t r, int64_t c) {
        return "[" + std::to_string(r) + ", " + std::to_string(c) + "]";
    }
    LoadedModel& m_;
    const TensorLookup& lookup_;
    std::string (*naming_)(TensorRole, int);
    const std::string& file_;
};

} // namespace

Status bind_weights(LoadedModel& model, const TensorLookup& lookup,
                    std::string (*naming)(TensorRole, int), bool allow_rope_freqs,
                    const std::string& file) {
    const ModelConfig& c = model.config;
    Binder b(model, lookup, naming, file);
    ModelWeights& w = model.weights;
    model.weight_bytes = 0;
    model.parameter_count = 0;
    // owned_f32 must not reallocate the vectors' buffers: moving a std::vector keeps its
    // heap buffer, so pointers stay valid when owned_f32 grows.
    const int64_t hidden = c.hidden_size, vocab = c.vocab_size, inter = c.intermediate_size;
    const int64_t qd = int64_t(c.num_heads) * c.head_dim,
                  kvd = int64_t(c.num_kv_heads) * c.head_dim;

    Status s = b.bind(w.tok_embd, TensorRole::TokEmbd, 0, vocab, hidden, false);
    if (!s)
        return s;
    if (!(s = b.bind(w.output_norm, TensorRole::OutputNorm, 0, 1, hidden, true)))
        return s;
    if (c.tie_word_embeddings) {
        w.output = w.tok_embd;
    } else if (!(s = b.bind(w.output, TensorRole::Output, 0, vocab, hidden, false))) {
        return s;
    }
    if (allow_rope_freqs &&
        !(s = b.bind(w.rope_freqs, TensorRole::RopeFreqs, 0, 1, c.head_dim / 2, true, false))) {
        return s;
    }
    // The layer count is the file's claim: before anything per layer is built, the file must
    // hold the last layer's first tensor (a 170 KB file claiming 16,777,216 layers fails here,
    // not after 14 GB of layer records), and the records grow only as layers are bound.
    if (c.num_layers < 1)
        return make_error(file + ": the layer count must be >= 1");
    if (!lookup(naming(TensorRole::AttnNorm, c.num_layers - 1)))
        return make_error(file + ": the config claims " + std::to_string(c.num_layers) +
                          " layers but the file has no tensor " +
                          naming(TensorRole::AttnNorm, c.num_layers - 1) +
                          " (missing tensor; layer count beyond what the file holds)");
    w.layers.clear();
    const bool fused = c.arch == Architecture::Phi3; // qkv_proj / gate_up_proj as stored
    for (int l = 0; l < c.num_layers; ++l) {
        LayerWeights& L = w.layers.emplace_back();
        struct Item {
            TensorView* v;
            TensorRole role;
            int64_t rows, cols;
            bool f32;
            bool use;
        };
        const Item items[] = {
            {&L.attn_norm, TensorRole::AttnNorm, 1, hidden, true, true},
            {&L.wq, TensorRole::Wq, qd, hidden, false, !fused},
            {&L.wk, TensorRole::Wk, kvd, hidden, false, !fused},
            {&L.wv, TensorRole::Wv, kvd, hidden, false, !fused},
            {&L.wqkv, TensorRole::Wqkv, qd + 2 * kvd, hidden, false, fused},
            {&L.wo, TensorRole::Wo, hidden, qd, false, true},
            {&L.bq, TensorRole::Bq, 1, qd, true, c.attention_bias},
            {&L.bk, TensorRole::Bk, 1, kvd, true, c.attention_bias},
            {&L.bv, TensorRole::Bv, 1, kvd, true, c.attention_bias},
            {&L.q_norm, TensorRole::QNorm, 1, c.head_dim, true, c.qk_norm},
            {&L.k_norm, TensorRole::KNorm, 1, c.head_dim, true, c.qk_norm},
            {&L.post_attn_norm, TensorRole::PostAttnNorm, 1, hidden, true, c.post_norms},
            {&L.ffn_norm, TensorRole::FfnNorm, 1, hidden, true, true},
            {&L.w_gate, TensorRole::WGate, inter, hidden, false, !fused && !c.is_moe()},
            {&L.w_up, TensorRole::WUp, inter, hidden, false, !fused && !c.is_moe()},
            {&L.w_gate_up, TensorRole::WGateUp, 2 * inter, hidden, false, fused},
            {&L.w_down, TensorRole::WDown, hidden, inter, false, !c.is_moe()},
            {&L.post_ffn_norm, TensorRole::PostFfnNorm, 1, hidden, true, c.post_norms},
        };
        for (const Item& it : items) {
            if (!it.use)
                continue;
            if (!(s = b.bind(*it.v, it.role, l, it.rows, it.cols, it.f32)))
                return s;
        }
        if (c.is_moe() &&
            !(s = bind_moe_layer(model, lookup, naming == &gguf_tensor_name, l, file)))
            return s;
    }
    return ok_status();
}

} // namespace llmwb
