// A plain reference forward pass for the runtime tests: double precision, every weight
// dequantized once with kernels::dequantize_row, a contiguous KV cache, one token at a time,
// written top to bottom (like llama2.c's run.c). Independent of engine/runtime.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/loaded_model.h"

namespace llmwb::test {

class ReferenceModel {
  public:
    explicit ReferenceModel(const LoadedModel& model);

    // Feeds the next token (at position = tokens fed so far) and returns its logits [vocab].
    std::vector<double> step(int32_t token);
    void reset() { pos_ = 0; }
    int32_t position() const { return pos_; }

  private:
    struct Mat {
        int64_t rows = 0, cols = 0;
        std::vector<double> w; // [rows][cols]
    };
    struct Layer {
        Mat wq, wk, wv, wo, w_gate, w_up, w_down;
        std::vector<double> attn_norm, ffn_norm, q_norm, k_norm, bq, bk, bv;
        std::vector<double> k_cache, v_cache; // [max_pos][kv_heads * head_dim]
    };
    static Mat dequant(const TensorView& t);
    static std::vector<double> dequant_vec(const TensorView& t);

    ModelConfig c_;
    Mat embd_, out_;
    std::vector<double> out_norm_;
    std::vector<double> inv_freq_; // [head_dim/2]
    std::vector<Layer> layers_;
    int32_t pos_ = 0;
    int32_t max_pos_ = 0;
};

} // namespace llmwb::test
