#include "engine/model/model_info.h"

namespace llmwb {

namespace {

void count(std::vector<TensorGroupTypes>& groups, const std::string& group, const TensorView& t) {
    if (!t.present())
        return;
    TensorGroupTypes* g = nullptr;
    for (auto& x : groups) {
        if (x.group == group)
            g = &x;
    }
    if (!g) {
        groups.push_back({group, {}, 0});
        g = &groups.back();
    }
    ++g->dtype_counts[dtype_name(t.type)];
    g->bytes += t.rows * t.row_bytes();
}

} // namespace

std::vector<TensorGroupTypes> tensor_group_types(const LoadedModel& m) {
    std::vector<TensorGroupTypes> g;
    const ModelWeights& w = m.weights;
    count(g, "embedding", w.tok_embd);
    for (const auto& L : w.layers) {
        for (const TensorView* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.bq, &L.bk, &L.bv}) {
            count(g, "attention", *t);
        }
        for (const TensorView* t : {&L.w_gate, &L.w_up, &L.w_down})
            count(g, "ffn", *t);
        for (const TensorView* t : {&L.attn_norm, &L.ffn_norm, &L.q_norm, &L.k_norm}) {
            count(g, "norm", *t);
        }
    }
    count(g, "norm", w.output_norm);
    if (!m.config.tie_word_embeddings)
        count(g, "output", w.output);
    count(g, "rope_freqs", w.rope_freqs);
    return g;
}

int64_t kv_bytes_per_token(const ModelConfig& c) {
    return 2 * int64_t(c.num_layers) * c.num_kv_heads * c.head_dim * int64_t(sizeof(float));
}

} // namespace llmwb
