// Summaries of a loaded model for `llmwb info` and the app's model panel.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/model/loaded_model.h"

namespace llmwb {

// Bits per weight of `bytes` holding `parameters` values (0 for no parameters).
double bits_per_weight(int64_t bytes, int64_t parameters);

// How many tensors of each dtype a group holds. Groups: "embedding", "attention", "ffn",
// "norm", "output" (absent when tied), "rope_freqs".
struct TensorGroupTypes {
    std::string group;
    std::map<std::string, int> dtype_counts; // dtype_name -> number of tensors
    int64_t bytes = 0;                       // as stored
    int64_t parameters = 0;                  // values (rows x cols)
    double bits_per_weight() const { return llmwb::bits_per_weight(bytes, parameters); }
};
std::vector<TensorGroupTypes> tensor_group_types(const LoadedModel& model);

// The file's tensors by storage type. "Weight matrices" are the 2-D tensors (token embedding,
// attention and FFN projections, the output matrix); norms, biases and rope_freqs are the rest.
// A tied output matrix is the token embedding, counted once.
struct DTypeCount {
    DType type = DType::F32;
    int tensors = 0;
    int64_t parameters = 0;
    int64_t bytes = 0;
    double bits_per_weight() const { return llmwb::bits_per_weight(bytes, parameters); }
};
struct TypeHistogram {
    std::vector<DTypeCount> types; // most bytes first (ties: kAllDTypes order)
    int tensors = 0;
    int64_t parameters = 0, bytes = 0;               // all tensors
    int matrix_tensors = 0;                          // weight matrices only
    int64_t matrix_parameters = 0, matrix_bytes = 0; // weight matrices only
    double bits_per_weight() const { return llmwb::bits_per_weight(bytes, parameters); }
    double matrix_bits_per_weight() const {
        return llmwb::bits_per_weight(matrix_bytes, matrix_parameters);
    }
};
TypeHistogram type_histogram(const LoadedModel& model);

// Parameters of the model and those one token uses: for a mixture of experts the router and
// num_experts_used of each layer's experts instead of all of them (embeddings and lm_head
// count in both, as model cards count them: Qwen3-30B-A3B 30.5 B total, 3.3 B active).
// Equal for dense models.
struct ParameterCounts {
    int64_t total = 0;
    int64_t active = 0;
    int64_t total_bytes = 0, active_bytes = 0; // the same as stored
};
ParameterCounts parameter_counts(const LoadedModel& model);

// K and V for one token across all layers in fp32: 2 * layers * kv_heads * head_dim * 4.
int64_t kv_bytes_per_token(const ModelConfig& config);

} // namespace llmwb
