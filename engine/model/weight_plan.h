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
};

// Tensors in writing order. rope_freqs is included only when with_rope_freqs.
std::vector<PlannedTensor> plan_tensors(const ModelConfig& c, bool with_rope_freqs);

// GGUF storage type of a tensor for a weight type, with the fallback for row lengths that do
// not fit the block size (sets *fallback).
DType gguf_storage_type(const PlannedTensor& t, WeightType wt, int num_layers, bool tied,
                        bool* fallback);

// Rows [row_begin, row_end) of the HF-layout tensor named hf_name, [rows][cols] row-major.
void generate_rows(uint64_t seed, const std::string& hf_name, int64_t row_begin, int64_t row_end,
                   int64_t cols, float* out);

// The HF row a GGUF row of a llama-arch Q/K matrix comes from (llama.cpp's permutation).
int64_t llama_qk_source_row(int64_t gguf_row, int head_dim);

} // namespace llmwb
