// Rotary position embedding: per-pair inverse frequencies (llama3 scaling, phi3 LongRoPE) and the
// rotation of the heads of one token, in either pairing (RopeStyle), over the whole head or its
// first rotary_dim dimensions (partial rotary).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"

namespace llmwb {

// inv_freq[i] = rope_theta^(-2i/rotary_dim) for i < rotary_dim/2 (rotary_dim =
// config.rotary_dims(), the head dimension unless partial rotary), then
//  - llama3-scaled: divided by the factors of the rope_freqs tensor when the file has one (llama3
//    GGUF), else by the config's rope_scaling (Hugging Face "llama3" rope_type). Never both.
//  - LongRoPE (phi3): divided by the factor set longrope_uses_long_factors() picks.
//  - Linear (gemma3's global layers): every inv_freq divided by the factor.
std::vector<double> rope_inv_freq(const ModelConfig& config, const TensorView& rope_freqs);

// THE RULE for LongRoPE's two factor sets: one set for the whole model, fixed when it is loaded
// (as llama.cpp does): the long set when the context the engine serves (config.max_position)
// exceeds rope_scaling.original_max_position, else the short set. Every position of every
// sequence is rotated with the same set, so cached keys are never mixed and no result depends
// on what shares a batch or on how long a sequence has grown.
bool longrope_uses_long_factors(const ModelConfig& config);

// The multiplier of cos/sin: LongRoPE's attention factor, 1 otherwise.
float rope_attention_scale(const ModelConfig& config);

// cos_out/sin_out [inv_freq.size()] for one position, each multiplied by `scale`.
void rope_cos_sin(float* cos_out, float* sin_out, const std::vector<double>& inv_freq,
                  int32_t position, float scale = 1.0f);

// Rotates x [n_heads][head_dim] in place with one position's cos/sin [rotary_dim/2]; only the
// first rotary_dim dimensions of each head turn (0 = all), the rest pass through.
//   RotateHalf:  pairs (x[i], x[i + rotary_dim/2])
//   Interleaved: pairs (x[2i], x[2i + 1])
void rope_apply(float* x, int32_t n_heads, int32_t head_dim, const float* cos, const float* sin,
                RopeStyle style, int32_t rotary_dim = 0);

} // namespace llmwb
