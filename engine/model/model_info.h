// Summaries of a loaded model for `llmwb info` and the app's model panel.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/model/loaded_model.h"

namespace llmwb {

// How many tensors of each dtype a group holds. Groups: "embedding", "attention", "ffn",
// "norm", "output" (absent when tied), "rope_freqs".
struct TensorGroupTypes {
    std::string group;
    std::map<std::string, int> dtype_counts; // dtype_name -> number of tensors
    int64_t bytes = 0;                       // as stored
};
std::vector<TensorGroupTypes> tensor_group_types(const LoadedModel& model);

// K and V for one token across all layers in fp32: 2 * layers * kv_heads * head_dim * 4.
int64_t kv_bytes_per_token(const ModelConfig& config);

} // namespace llmwb
