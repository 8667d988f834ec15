#include "engine/runtime/cpu_moe.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "kernels/cpu/matmul.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/quant.h"

namespace llmwb {

namespace {

kernels::WeightMatrix expert_matrix(const TensorView& t) {
    return kernels::WeightMatrix{t.type, t.data, t.rows, t.cols, t.layout};
}

// The expert's products give the same bits for any number of rows (panel layout): no padding.
bool batch_invariant(const ExpertWeights& px) {
    return kernels::matmul_batch_invariant(expert_matrix(px.w_gate)) &&
           kernels::matmul_batch_invariant(expert_matrix(px.w_up)) &&
           kernels::matmul_batch_invariant(expert_matrix(px.w_down));
}

} // namespace

void moe_route(const float* logits, int32_t n_expert, int32_t k, bool renormalize, float* probs,
               int32_t* ids, float* weights) {
    assert(k >= 1 && k <= n_expert);
    float mx = logits[0];
    for (int32_t e = 1; e < n_expert; ++e)
        mx = std::max(mx, logits[e]);
    float sum = 0.0f;
    for (int32_t e = 0; e < n_expert; ++e) {
        probs[e] = std::exp(logits[e] - mx);
        sum += probs[e];
    }
    for (int32_t e = 0; e < n_expert; ++e)
        probs[e] /= sum;
    // k passes of a selection: strictly greater wins, so among equal probabilities the lower
    // index is taken first. A chosen expert is marked by a negative probability.
    float picked = 0.0f;
    for (int32_t i = 0; i < k; ++i) {
        int32_t best = -1;
        for (int32_t e = 0; e < n_expert; ++e)
            if (probs[e] >= 0.0f && (best < 0 || probs[e] > probs[best]))
                best = e;
        ids[i] = best;
        weights[i] = probs[best];
        picked += probs[best];
        probs[best] = -1.0f;
    }
    if (renormalize && picked > 0.0f)
        for (int32_t i = 0; i < k; ++i)
            weights[i] /= picked;
}

void CpuMoe::forward(float* out, const float* x, int32_t n, const LayerWeights& lw,
                     const LayerWeights& pw, const ModelConfig& c, kernels::ThreadPool& pool,
                     const MatmulObserver& observer) {
    assert(c.is_moe() && static_cast<int32_t>(lw.experts.size()) == c.num_experts);
    const int32_t E = c.num_experts, K = c.num_experts_used;
    const int64_t H = c.hidden_size, I = c.expert_intermediate_size;
    const int64_t m = static_cast<int64_t>(n) * K; // gathered rows
    if (n <= 0)
        return;
    logits_.resize(static_cast<size_t>(n) * E);
    probs_.resize(static_cast<size_t>(E));
    ids_.resize(static_cast<size_t>(m));
    weights_.resize(static_cast<size_t>(m));
    start_.assign(static_cast<size_t>(E) + 1, 0);
    token_.resize(static_cast<size_t>(m));
    row_w_.resize(static_cast<size_t>(m));
    xg_.resize(static_cast<size_t>(m * H));
    gate_.resize(static_cast<size_t>(m * I));
    up_.resize(static_cast<size_t>(m * I));
    y_.resize(static_cast<size_t>(m * H));

    // Route: [n][E] logits, then top-k per token. One dot product per (token, expert) rather
    // than a matrix product: kernels::matmul's one-token path sums in another order than its
    // multi-token paths, and a last-bit change of a logit changes the routing weights, so a
    // token's output would depend on whether it runs alone. The router is small (E x hidden).
    if (observer)
        observer(lw.router, x, n);
    const float* router = static_cast<const float*>(lw.router.data);
    if (lw.router.type != DType::F32 ||
        reinterpret_cast<uintptr_t>(lw.router.data) % alignof(float) != 0) {
        router_f32_.resize(static_cast<size_t>(E * H));
        for (int32_t e = 0; e < E; ++e)
            kernels::dequantize_row(lw.router.type, lw.router.row(e), router_f32_.data() + e * H,
                                    H);
        router = router_f32_.data();
    }
    for (int32_t t = 0; t < n; ++t)
        for (int32_t e = 0; e < E; ++e)
            logits_[static_cast<size_t>(t) * E + e] =
                kernels::dot_f32(router + e * H, x + t * H, H);
    for (int32_t t = 0; t < n; ++t)
        moe_route(logits_.data() + static_cast<int64_t>(t) * E, E, K, c.expert_norm_topk,
                  probs_.data(), ids_.data() + static_cast<int64_t>(t) * K,
                  weights_.data() + static_cast<int64_t>(t) * K);

    // Group (a counting sort by expert; tokens stay ascending inside a group) and gather.
    for (int64_t j = 0; j < m; ++j)
        ++start_[static_cast<size_t>(ids_[static_cast<size_t>(j)]) + 1];
    for (int32_t e = 0; e < E; ++e)
        start_[static_cast<size_t>(e) + 1] += start_[static_cast<size_t>(e)];
    fill_.assign(start_.begin(), start_.end() - 1);
    for (int32_t t = 0; t < n; ++t)
        for (int32_t i = 0; i < K; ++i) {
            const int64_t j = static_cast<int64_t>(t) * K + i;
            const int32_t row = fill_[static_cast<size_t>(ids_[static_cast<size_t>(j)])]++;
            token_[static_cast<size_t>(row)] = t;
            row_w_[static_cast<size_t>(row)] = weights_[static_cast<size_t>(j)];
            std::copy(x + t * H, x + (t + 1) * H, xg_.data() + row * H);
        }

    // Each active expert once over its rows: [cnt][H] -> gate, up [cnt][I] -> [cnt][H].
    // `ex`: the loaded views (the observer's keys); `px`: what the products read.
    auto run_expert = [&](const ExpertWeights& ex, const ExpertWeights& px, const float* xe,
                          float* ge, float* ue, float* ye, int64_t rows) {
        if (observer) {
            observer(ex.w_gate, xe, static_cast<int32_t>(rows));
            observer(ex.w_up, xe, static_cast<int32_t>(rows));
        }
        kernels::matmul(ge, expert_matrix(px.w_gate), xe, rows, &pool);
        kernels::matmul(ue, expert_matrix(px.w_up), xe, rows, &pool);
        kernels::silu_mul(ge, ge, ue, rows * I);
        if (observer)
            observer(ex.w_down, ge, static_cast<int32_t>(rows));
        kernels::matmul(ye, expert_matrix(px.w_down), ge, rows, &pool);
    };
    for (int32_t e = 0; e < E; ++e) {
        const int64_t r0 = start_[static_cast<size_t>(e)];
        const int64_t cnt = start_[static_cast<size_t>(e) + 1] - r0;
        if (cnt == 0)
            continue;
        const ExpertWeights& ex = lw.experts[static_cast<size_t>(e)];
        const ExpertWeights& px = pw.experts[static_cast<size_t>(e)];
        if (cnt >= kMinExpertRows || batch_invariant(px)) {
            run_expert(ex, px, xg_.data() + r0 * H, gate_.data() + r0 * I, up_.data() + r0 * I,
                       y_.data() + r0 * H, cnt);
            continue;
        }
        // A small group runs padded with zero rows to kMinExpertRows (see the header).
        pad_x_.assign(static_cast<size_t>(kMinExpertRows * H), 0.0f);
        pad_gate_.resize(static_cast<size_t>(kMinExpertRows * I));
        pad_up_.resize(static_cast<size_t>(kMinExpertRows * I));
        pad_y_.resize(static_cast<size_t>(kMinExpertRows * H));
        std::copy(xg_.data() + r0 * H, xg_.data() + (r0 + cnt) * H, pad_x_.data());
        run_expert(ex, px, pad_x_.data(), pad_gate_.data(), pad_up_.data(), pad_y_.data(),
                   kMinExpertRows);
        std::copy(pad_y_.data(), pad_y_.data() + cnt * H, y_.data() + r0 * H);
    }

    // Scatter-add in ascending expert order (the gathered rows' order).
    std::fill(out, out + static_cast<int64_t>(n) * H, 0.0f);
    for (int64_t row = 0; row < m; ++row)
        kernels::axpy_f32(out + static_cast<int64_t>(token_[static_cast<size_t>(row)]) * H,
                          row_w_[static_cast<size_t>(row)], y_.data() + row * H, H);
}

} // namespace llmwb
