#include "engine/model/model_info.h"

#include <algorithm>
#include <functional>

namespace llmwb {

double bits_per_weight(int64_t bytes, int64_t parameters) {
    return parameters > 0 ? static_cast<double>(bytes) * 8.0 / static_cast<double>(parameters)
                          : 0.0;
}

namespace {

// Calls f(group, tensor, is_matrix) for every tensor of the model once (a tied output matrix
// is the embedding and is not visited again).
void for_each_tensor(const LoadedModel& m,
                     const std::function<void(const char*, const TensorView&, bool)>& f) {
    auto visit = [&](const char* group, const TensorView& t, bool matrix) {
        if (t.present())
            f(group, t, matrix);
    };
    const ModelWeights& w = m.weights;
    visit("embedding", w.tok_embd, true);
    for (const auto& L : w.layers) {
        for (const TensorView* t : {&L.wq, &L.wk, &L.wv, &L.wqkv, &L.wo})
            visit("attention", *t, true);
        for (const TensorView* t : {&L.bq, &L.bk, &L.bv})
            visit("attention", *t, false);
        for (const TensorView* t : {&L.w_gate, &L.w_up, &L.w_gate_up, &L.w_down})
            visit("ffn", *t, true);
        visit("ffn", L.router, true); // mixture of experts (one view per expert)
        for (const ExpertWeights& e : L.experts)
            for (const TensorView* t : {&e.w_gate, &e.w_up, &e.w_down})
                visit("ffn", *t, true);
        for (const TensorView* t :
             {&L.attn_norm, &L.ffn_norm, &L.q_norm, &L.k_norm, &L.post_attn_norm, &L.post_ffn_norm})
            visit("norm", *t, false);
    }
    visit("norm", w.output_norm, false);
    if (!m.config.tie_word_embeddings)
        visit("output", w.output, true);
    visit("rope_freqs", w.rope_freqs, false);
}

int dtype_order(DType t) {
    int i = 0;
    for (DType d : kAllDTypes) {
        if (d == t)
            return i;
        ++i;
    }
    return i;
}

} // namespace

std::vector<TensorGroupTypes> tensor_group_types(const LoadedModel& m) {
    std::vector<TensorGroupTypes> groups;
    for_each_tensor(m, [&](const char* group, const TensorView& t, bool) {
        auto g = std::find_if(groups.begin(), groups.end(),
                              [&](const TensorGroupTypes& x) { return x.group == group; });
        if (g == groups.end()) {
            groups.push_back({group, {}, 0, 0});
            g = groups.end() - 1;
        }
        ++g->dtype_counts[dtype_name(t.type)];
        g->bytes += t.rows * t.row_bytes();
        g->parameters += t.rows * t.cols;
    });
    return groups;
}

TypeHistogram type_histogram(const LoadedModel& m) {
    TypeHistogram h;
    for_each_tensor(m, [&](const char*, const TensorView& t, bool matrix) {
        auto e = std::find_if(h.types.begin(), h.types.end(),
                              [&](const DTypeCount& x) { return x.type == t.type; });
        if (e == h.types.end()) {
            h.types.push_back({t.type, 0, 0, 0});
            e = h.types.end() - 1;
        }
        const int64_t params = t.rows * t.cols;
        const int64_t bytes = t.rows * t.row_bytes();
        ++e->tensors;
        e->parameters += params;
        e->bytes += bytes;
        ++h.tensors;
        h.parameters += params;
        h.bytes += bytes;
        if (matrix) {
            ++h.matrix_tensors;
            h.matrix_parameters += params;
            h.matrix_bytes += bytes;
        }
    });
    std::sort(h.types.begin(), h.types.end(), [](const DTypeCount& a, const DTypeCount& b) {
        return a.bytes != b.bytes ? a.bytes > b.bytes : dtype_order(a.type) < dtype_order(b.type);
    });
    return h;
}

ParameterCounts parameter_counts(const LoadedModel& m) {
    ParameterCounts p;
    for_each_tensor(m, [&](const char*, const TensorView& t, bool) {
        p.total += t.rows * t.cols;
        p.total_bytes += t.rows * t.row_bytes();
    });
    p.active = p.total;
    p.active_bytes = p.total_bytes;
    // Experts a token does not use: (n - k) / n of each layer's experts.
    const int64_t k = m.config.num_experts_used;
    for (const auto& L : m.weights.layers) {
        const auto n = static_cast<int64_t>(L.experts.size());
        if (n == 0 || k >= n)
            continue;
        int64_t params = 0, bytes = 0;
        for (const ExpertWeights& e : L.experts)
            for (const TensorView* t : {&e.w_gate, &e.w_up, &e.w_down}) {
                params += t->rows * t->cols;
                bytes += t->rows * t->row_bytes();
            }
        p.active -= params / n * (n - k);
        p.active_bytes -= bytes / n * (n - k);
    }
    return p;
}

int64_t kv_bytes_per_token(const ModelConfig& c) {
    return 2 * int64_t(c.num_layers) * c.num_kv_heads * c.head_dim * int64_t(sizeof(float));
}

} // namespace llmwb
