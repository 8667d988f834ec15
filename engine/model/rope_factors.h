// Llama 3 rope scaling as per-dimension frequency divisors (the values llama.cpp's converter
// stores in a GGUF "rope_freqs" tensor): theta_i = pos * base_freq_i / factor_i.
#pragma once

#include <vector>

#include "engine/model/model_config.h"

namespace llmwb {

// head_dim / 2 factors for config.rope_scaling (all 1.0 when kind == None).
std::vector<float> llama3_rope_factors(const ModelConfig& config);

} // namespace llmwb
