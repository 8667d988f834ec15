// What the model writer writes: the list of tensors a config implies (with both names), the
// storage type of each, and the deterministic generator of their logical values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/model_writer.h"
#include "engine/model/weight_binding.h"

namespace llmwb {

struct PlannedTensor {
    TensorRole role;
    int layer = 0;
    std::string hf_name;
    std::string gguf_name;
    int64_t rows = 0, cols = 0;
    bool vector = false; // norms, biases, rope_freqs: 1-D
    // > 0: the stacked experts of a MoE layer (GGUF [experts][rows / experts][cols]); hf_name is
    // empty and expert e's rows come from hf_expert_tensor_name(role, layer, e).
    int64_t experts = 0;
};

// Tensors in writing order. rope_freqs is included only when with_rope_freqs.
std::vector<PlannedTensor> plan_tensors(const ModelConfig& c, bool with_rope_freqs);

// GGUF storage type of every planned tensor for a weight type: the recipe of the `llmwb
// quantize` target of the same name (engine/model/quant_recipe.h), with its fallbacks for row
// lengths that do not fit the block size (fallback[i] set), and F16 where the common quantizer
// defines no fallback (a random test model is written anyway; `quantize` refuses such a row).
std::vector<DType> gguf_storage_types(const std::vector<PlannedTensor>& plan, WeightType wt,
                                      const ModelConfig& c, std::vector<bool>* fallback);

// The view of a planned tensor in a loaded model (by role and layer); nullptr for rope_freqs,
// stacked experts (one view per expert) or a layer the model does not have.
const TensorView* planned_view(const ModelWeights& w, const PlannedTensor& t);

// Rows [row_begin, row_end) of the HF-layout tensor named hf_name, [rows][cols] row-major.
void generate_rows(uint64_t seed, const std::string& hf_name, int64_t row_begin, int64_t row_end,
                   int64_t cols, float* out);

// The HF row a GGUF row of a llama-arch Q/K matrix comes from (llama.cpp's permutation).
int64_t llama_qk_source_row(int64_t gguf_row, int head_dim);

} // namespace llmwb
