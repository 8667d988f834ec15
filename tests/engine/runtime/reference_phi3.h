// A plain double-precision phi3 forward pass for the tests, written from the formulas of
// transformers' modeling_phi3.py (Phi3ForCausalLM): fused qkv_proj split [q | k | v], fused
// gate_up_proj split [gate | up], SiLU MLP, RMSNorm, rotate-half RoPE over the first rotary_dim
// dimensions of each head (partial_rotary_factor), LongRoPE inv_freq_i = 1 / (factor_i *
// base^(2i/rotary_dim)) with cos/sin times the attention factor, causal attention limited to
// sliding_window keys when the config has one. Independent of engine/runtime.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/loaded_model.h"

namespace llmwb::test {

class ReferencePhi3 {
  public:
    // Which LongRoPE factor set to rotate with (ignored unless the config has LongRope): the
    // caller states it, so a test checks the engine picks the set its rule says.
    enum class FactorSet { Short, Long };
    ReferencePhi3(const LoadedModel& model, FactorSet set);

    // Feeds the next token (at position = tokens fed so far) and returns its logits [vocab].
    std::vector<double> step(int32_t token);

  private:
    struct Mat {
        int64_t rows = 0, cols = 0;
        std::vector<double> w; // [rows][cols]
    };
    struct Layer {
        Mat wqkv, wo, w_gate_up, w_down;
        std::vector<double> attn_norm, ffn_norm;
        std::vector<double> k_cache, v_cache; // [pos][kv_heads * head_dim]
    };
    static Mat dequant(const TensorView& t);

    ModelConfig c_;
    Mat embd_, out_;
    std::vector<double> out_norm_;
    std::vector<double> inv_freq_; // [rotary_dim / 2]
    double mscale_ = 1.0;          // LongRoPE attention factor
    std::vector<Layer> layers_;
    int32_t pos_ = 0;
};

} // namespace llmwb::test
