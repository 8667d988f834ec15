// The phi3 family (Phi-3-mini, Phi-3.5-mini, Phi-4-mini) and config.json sliding windows
// (mistral): what the GGUF and Hugging Face loaders read beyond the llama keys. Weights: fused
// qkv_proj / gate_up_proj as stored (LayerWeights::wqkv / w_gate_up, bound by bind_weights).
//
// Facts (transformers' configuration_phi3.py / modeling_phi3.py, llama.cpp's converter):
//  - RoPE pairs rotate-half in both formats (llama.cpp runs phi3 as NeoX; its converter does not
//    permute Q/K rows of phi3), over the first rotary_dim = head_dim * partial_rotary_factor
//    dimensions (GGUF: phi3.rope.dimension_count).
//  - LongRoPE: rope_scaling {type "longrope" (or the older "su"), short_factor, long_factor,
//    optional attention_factor}; original_max_position_embeddings at the top level (or inside
//    rope_scaling). GGUF: tensors rope_factors_short.weight / rope_factors_long.weight,
//    phi3.rope.scaling.original_context_length, phi3.rope.scaling.attn_factor.
//  - sliding_window (Phi-3-mini-4k: 2047): transformers and vLLM apply it, llama.cpp ignores it
//    (it warns that phi3 SWA is disabled). The majority applies it, so this engine does, from
//    config.json and from GGUF's phi3.attention.sliding_window. A window not smaller than the
//    context limits nothing and is dropped (0).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "engine/model/gguf_file.h"
#include "engine/model/model_config.h"
#include "engine/util/result.h"

namespace llmwb {

// The phi3.* keys and LongRoPE factor tensors of a GGUF file, after the common llama keys.
Status read_phi3_gguf(const GgufFile& f, const std::string& file, ModelConfig& c);

// partial_rotary_factor, rope_scaling "longrope" and sliding_window of a phi3 config.json.
Status read_phi3_hf(const nlohmann::json& j, const std::string& file, ModelConfig& c);

// config.json `sliding_window` (mistral, phi3): null, absent or 0 = none; an integer >= 1
// otherwise.
Status read_hf_sliding_window(const nlohmann::json& j, const std::string& file, ModelConfig& c);

// LongRoPE's default attention factor: sqrt(1 + ln(s) / ln(original)) with s = max_position /
// original, 1 when s <= 1 (transformers' _compute_longrope_parameters, llama.cpp's converter).
float longrope_default_attention_factor(int max_position, int original_max_position);

} // namespace llmwb
