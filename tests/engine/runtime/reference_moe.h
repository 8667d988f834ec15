// A plain double-precision reference of the qwen3moe forward pass (Qwen3-30B-A3B's layout), from
// the formulas of transformers' modeling_qwen3_moe.py: qwen3 attention (per-head q/k RMSNorm,
// rotate-half RoPE, GQA) and, in place of the MLP, a router over all experts:
//     probs = softmax(W_router x)            over every expert
//     top-k of probs (equal probabilities: the lower expert index first)
//     w = top-k probs, divided by their sum when norm_topk_prob
//     out = sum_k w_k * down_k(silu(gate_k x) * up_k x)
// One token at a time over a contiguous KV cache; every weight dequantized once. Independent of
// engine/runtime.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/loaded_model.h"

namespace llmwb::test {

struct ReferenceRouting {
    std::vector<int32_t> ids;    // [k], most probable first
    std::vector<double> weights; // [k]
};
// Routing of one token's router logits in double precision.
ReferenceRouting reference_route(const std::vector<double>& logits, int32_t k, bool renormalize);

class ReferenceMoeModel {
  public:
    explicit ReferenceMoeModel(const LoadedModel& model);

    // Feeds the next token (at position = tokens fed so far) and returns its logits [vocab].
    std::vector<double> step(int32_t token);
    // Experts the last step chose per layer ([layer][k]).
    const std::vector<std::vector<int32_t>>& last_experts() const { return last_experts_; }

  private:
    struct Mat {
        int64_t rows = 0, cols = 0;
        std::vector<double> w; // [rows][cols]
    };
    struct Expert {
        Mat gate, up, down;
    };
    struct Layer {
        Mat wq, wk, wv, wo, router;
        std::vector<Expert> experts;
        std::vector<double> attn_norm, ffn_norm, q_norm, k_norm;
        std::vector<double> k_cache, v_cache; // [max_pos][kv_heads * head_dim]
    };
    static Mat dequant(const TensorView& t);

    ModelConfig c_;
    Mat embd_, out_;
    std::vector<double> out_norm_;
    std::vector<double> inv_freq_; // [head_dim/2]
    std::vector<Layer> layers_;
    std::vector<std::vector<int32_t>> last_experts_;
    int32_t pos_ = 0;
};

} // namespace llmwb::test
