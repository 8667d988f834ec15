// Rotary position embedding: per-pair inverse frequencies (with llama3 scaling) and the rotation
// of the heads of one token, in either pairing (RopeStyle).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"

namespace llmwb {

// inv_freq[i] = rope_theta^(-2i/head_dim) for i < head_dim/2, then llama3-scaled: divided by the
// factors of the rope_freqs tensor when the file has one (llama3 GGUF), else by the config's
// rope_scaling (Hugging Face "llama3" rope_type). Never both. Linear scaling divides every
// inv_freq by the factor.
std::vector<double> rope_inv_freq(const ModelConfig& config, const TensorView& rope_freqs);

// cos_out/sin_out [head_dim/2] for one position.
void rope_cos_sin(float* cos_out, float* sin_out, const std::vector<double>& inv_freq,
                  int32_t position);

// Rotates x [n_heads][head_dim] in place with one position's cos/sin [head_dim/2].
//   RotateHalf:  pairs (x[i], x[i + head_dim/2])
//   Interleaved: pairs (x[2i], x[2i + 1])
void rope_apply(float* x, int32_t n_heads, int32_t head_dim, const float* cos, const float* sin,
                RopeStyle style);

} // namespace llmwb
