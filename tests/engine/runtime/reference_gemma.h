// A plain double-precision forward pass of Gemma 2 / Gemma 3 (text), written from the formulas
// of Hugging Face's modeling_gemma2.py / modeling_gemma3.py, one token at a time, with a
// contiguous KV cache. Independent of engine/runtime and of the loaders' gemma handling: the
// hyper-parameters come from the writer's spec (query_pre_attn_scalar, window, soft-caps, RoPE
// bases, which layers slide by the published rule), the norm weights as the Hugging Face file
// stores them (w, used as 1 + w); only the matrices are taken from the loaded model
// (dequantized, so quantized files are compared against their own weights).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"

namespace llmwb::test {

class ReferenceGemma {
  public:
    // hf_norm(name): the stored values of the Hugging Face norm tensor `name` (e.g.
    // "model.layers.0.input_layernorm.weight").
    ReferenceGemma(const LoadedModel& model, const ModelWriterSpec& spec,
                   const std::function<std::vector<double>(const std::string&)>& hf_norm);

    // Feeds the next token (at position = tokens fed so far) and returns its logits [vocab].
    std::vector<double> step(int32_t token);

  private:
    struct Mat {
        int64_t rows = 0, cols = 0;
        std::vector<double> w;
    };
    struct Layer {
        Mat wq, wk, wv, wo, gate, up, down;
        std::vector<double> input_norm, post_attn_norm, pre_ffn_norm, post_ffn_norm; // HF w
        std::vector<double> q_norm, k_norm;                                          // gemma3
        bool sliding = false; // sliding_attention layer (window, gemma3's local RoPE base)
        std::vector<double> k_cache, v_cache; // [pos][kv_heads * head_dim]
    };
    static Mat dequant(const TensorView& t);

    bool gemma3_ = false;
    int64_t hidden_ = 0, heads_ = 0, kv_heads_ = 0, head_dim_ = 0;
    double eps_ = 1e-6, scaling_ = 0, attn_cap_ = 0, final_cap_ = 0;
    int32_t window_ = 0;
    std::vector<double> inv_freq_global_, inv_freq_local_;
    Mat embed_;
    std::vector<double> final_norm_;
    std::vector<Layer> layers_;
    int32_t pos_ = 0;
};

} // namespace llmwb::test
