// CpuMoe: the mixture-of-experts MLP of one layer on the CPU (qwen3moe), with its workspace.
//
// For a batch of n token rows: router logits = W_router x ([n][n_expert], one fp32 dot product
// per token and expert, so the same bits whatever the batch); per token a softmax
// over ALL experts in fp32, the top k probabilities (ties: the lower expert index wins), and, when
// configured (norm_topk_prob), the k weights renormalised to sum to 1. Token rows are then
// grouped by expert (expert ascending, tokens ascending inside a group) and every expert chosen
// by at least one token runs once over its gathered rows as matrix products:
//     expert(x) = down(silu(gate x) * up x)
// Outputs are scatter-added into each token's row in ascending expert order, so a token's sum
// is formed in the same order whatever else shares the batch.
//
// Bit-identical rows whatever shares the batch: kernels::matmul computes a row the same way for
// any number of rows only within one of its paths (one row; the tile kernels below the AVX-512
// GEMM thresholds; the packed GEMMs from those thresholds on, checked up to 16+ rows by
// tests/kernels). An expert's group size depends on the other tokens of the batch, so a group
// of fewer than kMinExpertRows rows runs padded with zero rows to kMinExpertRows: every group
// then takes the many-row path and a token's output has the same bits alone or in any batch
// (test_runtime_moe: moe_block_rows_independent_of_batch). The price: a decode step multiplies
// kMinExpertRows rows per active expert (compute, not extra weight reads). Experts in the panel
// layout (engine/runtime/panel_weights.h) whose products are batch-invariant
// (kernels::matmul_batch_invariant) need no padding and run over their rows only.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"

namespace llmwb {

namespace kernels {
class ThreadPool;
}

// Top-k routing of one token: probs = softmax(logits[0..n_expert)) in fp32; ids[0..k) = the k
// most probable experts, most probable first (equal probabilities: lower index first);
// weights[i] = probs[ids[i]], divided by their sum when `renormalize`.
// Preconditions: 1 <= k <= n_expert; probs has room for n_expert values.
void moe_route(const float* logits, int32_t n_expert, int32_t k, bool renormalize, float* probs,
               int32_t* ids, float* weights);

class CpuMoe {
  public:
    static constexpr int64_t kMinExpertRows = 16;

    // Observer of every product's input rows (see CpuTransformer::MatmulObserver).
    using MatmulObserver =
        std::function<void(const TensorView& weight, const float* x, int32_t n_tokens)>;

    // out[n][hidden] = MoE(x[n][hidden]) with layer `lw`'s router and experts; out may alias x.
    // `pw`: the same layer's views the expert products read (the runtime's panel copy; the
    // observer still sees `lw`'s views).
    // Preconditions: c.is_moe(), lw bound for c (router [n_expert][hidden], n_expert experts).
    void forward(float* out, const float* x, int32_t n, const LayerWeights& lw,
                 const LayerWeights& pw, const ModelConfig& c, kernels::ThreadPool& pool,
                 const MatmulObserver& observer = {});
    void forward(float* out, const float* x, int32_t n, const LayerWeights& lw,
                 const ModelConfig& c, kernels::ThreadPool& pool,
                 const MatmulObserver& observer = {}) {
        forward(out, x, n, lw, lw, c, pool, observer);
    }

    // The routing of the last forward(): [n][k] expert ids and weights (for tests and views).
    const std::vector<int32_t>& last_ids() const { return ids_; }
    const std::vector<float>& last_weights() const { return weights_; }

  private:
    std::vector<float> router_f32_; // [n_expert][hidden] a non-F32 router, dequantized
    std::vector<float> logits_;     // [n][n_expert]
    std::vector<float> probs_;      // [n_expert] softmax of one token
    std::vector<int32_t> ids_;      // [n][k]
    std::vector<float> weights_;    // [n][k]
    std::vector<int32_t> start_;    // [n_expert + 1] first gathered row of each expert
    std::vector<int32_t> fill_;     // [n_expert] next free gathered row of each expert
    std::vector<int32_t> token_;    // [n * k] token of each gathered row (grouped by expert)
    std::vector<float> row_w_;      // [n * k] routing weight of each gathered row
    std::vector<float> xg_;         // [n * k][hidden] gathered inputs
    std::vector<float> gate_;       // [n * k][expert_inter] gate, then silu(gate) * up
    std::vector<float> up_;         // [n * k][expert_inter]
    std::vector<float> y_;          // [n * k][hidden] expert outputs
    std::vector<float> pad_x_, pad_gate_, pad_up_, pad_y_; // a small group padded to kMinExpertRows
};

} // namespace llmwb
