// Views of a model's tensors. The bytes live in the memory-mapped file (or in buffers owned by
// the LoadedModel); quantized tensors are used in place, never expanded to fp32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/dtype.h"

namespace llmwb {

// A row-major matrix [rows][cols] in any DType (a vector has rows == 1). Row r starts at
// data + r * dtype_row_bytes(type, cols). For linear layers rows = out_features,
// cols = in_features, i.e. y = W x. data == nullptr means "absent".
struct TensorView {
    DType type = DType::F32;
    const void* data = nullptr;
    int64_t rows = 0;
    int64_t cols = 0;
    std::string name; // name in the file, for messages

    bool present() const { return data != nullptr; }
    int64_t row_bytes() const { return dtype_row_bytes(type, cols); }
    const uint8_t* row(int64_t r) const {
        return static_cast<const uint8_t*>(data) + r * row_bytes();
    }
};

struct LayerWeights {
    TensorView attn_norm;      // [1][hidden] F32
    TensorView wq, wk, wv, wo; // [heads*hd][hidden], [kv*hd][hidden] x2, [hidden][heads*hd]
    TensorView bq, bk, bv;     // F32 biases (qwen2), absent otherwise
    TensorView q_norm, k_norm; // [1][head_dim] F32 (qwen3), absent otherwise
    TensorView ffn_norm;       // [1][hidden] F32
    TensorView w_gate, w_up;   // [inter][hidden]
    TensorView w_down;         // [hidden][inter]
};

struct ModelWeights {
    TensorView tok_embd;    // [vocab][hidden]
    TensorView output_norm; // [1][hidden] F32
    TensorView output;      // [vocab][hidden]; same data as tok_embd when embeddings are tied
    TensorView rope_freqs;  // [1][head_dim/2] F32 (llama3 GGUF), absent otherwise
    std::vector<LayerWeights> layers;
};

} // namespace llmwb
