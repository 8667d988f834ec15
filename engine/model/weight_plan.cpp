#include "engine/model/weight_plan.h"

#include <cassert>
#include <cmath>
#include <tuple>

#include "engine/model/arch_gemma.h"
#include "engine/model/quant_recipe.h"

namespace llmwb {

std::vector<PlannedTensor> plan_tensors(const ModelConfig& c, bool with_rope_freqs) {
    std::vector<PlannedTensor> out;
    const int64_t hidden = c.hidden_size, vocab = c.vocab_size, inter = c.intermediate_size;
    const int64_t qd = int64_t(c.num_heads) * c.head_dim;
    const int64_t kvd = int64_t(c.num_kv_heads) * c.head_dim;
    auto add = [&](TensorRole role, int layer, int64_t rows, int64_t cols, bool vec) {
        PlannedTensor t;
        t.role = role;
        t.layer = layer;
        t.hf_name = role == TensorRole::RopeFreqs ? "" : hf_tensor_name_for(c, role, layer);
        t.gguf_name = gguf_tensor_name(role, layer);
        t.rows = rows;
        t.cols = cols;
        t.vector = vec;
        out.push_back(std::move(t));
    };
    add(TensorRole::TokEmbd, 0, vocab, hidden, false);
    const bool fused = c.arch == Architecture::Phi3; // qkv_proj / gate_up_proj as stored
    for (int l = 0; l < c.num_layers; ++l) {
        add(TensorRole::AttnNorm, l, 1, hidden, true);
        if (fused) {
            add(TensorRole::Wqkv, l, qd + 2 * kvd, hidden, false);
        } else {
            add(TensorRole::Wq, l, qd, hidden, false);
            add(TensorRole::Wk, l, kvd, hidden, false);
            add(TensorRole::Wv, l, kvd, hidden, false);
        }
        if (c.attention_bias) {
            add(TensorRole::Bq, l, 1, qd, true);
            add(TensorRole::Bk, l, 1, kvd, true);
            add(TensorRole::Bv, l, 1, kvd, true);
        }
        if (c.qk_norm) {
            add(TensorRole::QNorm, l, 1, c.head_dim, true);
            add(TensorRole::KNorm, l, 1, c.head_dim, true);
        }
        add(TensorRole::Wo, l, hidden, qd, false);
        if (c.post_norms)
            add(TensorRole::PostAttnNorm, l, 1, hidden, true);
        add(TensorRole::FfnNorm, l, 1, hidden, true);
        if (c.is_moe()) {
            const int64_t ne = c.num_experts, ei = c.expert_intermediate_size;
            add(TensorRole::Router, l, ne, hidden, false);
            for (auto [role, rows, cols] : {std::tuple{TensorRole::ExpGate, ei, hidden},
                                            std::tuple{TensorRole::ExpUp, ei, hidden},
                                            std::tuple{TensorRole::ExpDown, hidden, ei}}) {
                add(role, l, ne * rows, cols, false);
                out.back().hf_name.clear();
                out.back().experts = ne;
            }
            continue;
        }
        if (fused) {
            add(TensorRole::WGateUp, l, 2 * inter, hidden, false);
        } else {
            add(TensorRole::WGate, l, inter, hidden, false);
            add(TensorRole::WUp, l, inter, hidden, false);
        }
        add(TensorRole::WDown, l, hidden, inter, false);
        if (c.post_norms)
            add(TensorRole::PostFfnNorm, l, 1, hidden, true);
    }
    add(TensorRole::OutputNorm, 0, 1, hidden, true);
    if (!c.tie_word_embeddings)
        add(TensorRole::Output, 0, vocab, hidden, false);
    if (with_rope_freqs)
        add(TensorRole::RopeFreqs, 0, 1, c.head_dim / 2, true);
    return out;
}

std::vector<DType> gguf_storage_types(const std::vector<PlannedTensor>& plan, WeightType wt,
                                      const ModelConfig& c, std::vector<bool>* fallback) {
    auto target = parse_quant_target(weight_type_name(wt));
    assert(target.ok()); // every WeightType names a target
    std::vector<RecipeTensor> tensors;
    tensors.reserve(plan.size());
    for (const auto& t : plan)
        tensors.push_back({t.gguf_name, t.vector ? 1 : 2, t.cols});
    const auto choices = recipe_plan(target.value(), tensors, c.num_heads, c.num_kv_heads, false);
    std::vector<DType> types;
    fallback->assign(plan.size(), false);
    for (size_t i = 0; i < choices.size(); ++i) {
        const RecipeChoice& ch = choices[i];
        types.push_back(ch.unsupported ? DType::F16 : ch.type);
        (*fallback)[i] = ch.fallback || ch.unsupported;
    }
    return types;
}

namespace {

uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

} // namespace

void generate_rows(uint64_t seed, const std::string& hf_name, int64_t row_begin, int64_t row_end,
                   int64_t cols, float* out) {
    float mean = 0.0f, std = 0.02f;
    if (hf_name.ends_with("norm.weight")) {
        mean = 1.0f;
        std = 0.05f;
    } else if (hf_name.ends_with(".bias")) {
        std = 0.02f;
    }
    const uint64_t base = fnv1a(hf_name) ^ (seed * 0xD1B54A32D192ED03ull);
    const float two_pi = 6.28318530717958647692f;
    for (int64_t r = row_begin; r < row_end; ++r) {
        uint64_t state = base + uint64_t(r) * 0x9E3779B97F4A7C15ull;
        (void)splitmix64(state);
        float* o = out + (r - row_begin) * cols;
        for (int64_t c = 0; c < cols; c += 2) {
            // Box-Muller on two 24-bit uniforms from one draw: u1 in (0, 1], u2 in [0, 1).
            const uint64_t x = splitmix64(state);
            const float u1 = float((x >> 40) + 1) * 0x1.0p-24f;
            const float u2 = float((x >> 16) & 0xFFFFFF) * 0x1.0p-24f;
            const float rad = std::sqrt(-2.0f * std::log(u1));
            o[c] = mean + std * rad * std::cos(two_pi * u2);
            if (c + 1 < cols)
                o[c + 1] = mean + std * rad * std::sin(two_pi * u2);
        }
    }
}

const TensorView* planned_view(const ModelWeights& w, const PlannedTensor& t) {
    if (t.role == TensorRole::TokEmbd)
        return &w.tok_embd;
    if (t.role == TensorRole::Output)
        return &w.output;
    if (t.role == TensorRole::OutputNorm)
        return &w.output_norm;
    if (t.layer < 0 || size_t(t.layer) >= w.layers.size())
        return nullptr;
    const LayerWeights& L = w.layers[size_t(t.layer)];
    switch (t.role) {
    case TensorRole::AttnNorm:
        return &L.attn_norm;
    case TensorRole::Wq:
        return &L.wq;
    case TensorRole::Wk:
        return &L.wk;
    case TensorRole::Wv:
        return &L.wv;
    case TensorRole::Wo:
        return &L.wo;
    case TensorRole::Bq:
        return &L.bq;
    case TensorRole::Bk:
        return &L.bk;
    case TensorRole::Bv:
        return &L.bv;
    case TensorRole::QNorm:
        return &L.q_norm;
    case TensorRole::KNorm:
        return &L.k_norm;
    case TensorRole::FfnNorm:
        return &L.ffn_norm;
    case TensorRole::WGate:
        return &L.w_gate;
    case TensorRole::WUp:
        return &L.w_up;
    case TensorRole::WDown:
        return &L.w_down;
    case TensorRole::PostAttnNorm:
        return &L.post_attn_norm;
    case TensorRole::PostFfnNorm:
        return &L.post_ffn_norm;
    case TensorRole::Wqkv:
        return &L.wqkv;
    case TensorRole::WGateUp:
        return &L.w_gate_up;
    case TensorRole::Router:
        return &L.router;
    default:
        return nullptr;
    }
}

int64_t llama_qk_source_row(int64_t gguf_row, int head_dim) {
    const int64_t half = head_dim / 2;
    const int64_t h = gguf_row / head_dim, k = gguf_row % head_dim;
    const int64_t i = k / 2, j = k % 2;
    return h * head_dim + j * half + i;
}

} // namespace llmwb
