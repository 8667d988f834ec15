// Views of a model's tensors. The bytes live in the memory-mapped file (or in buffers owned by
// the LoadedModel); quantized tensors are used in place, never expanded to fp32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/dtype.h"
#include "kernels/cpu/weight_layout.h"

namespace llmwb {

// A row-major matrix [rows][cols] in any DType (a vector has rows == 1). Row r starts at
// data + r * dtype_row_bytes(type, cols). For linear layers rows = out_features,
// cols = in_features, i.e. y = W x. data == nullptr means "absent".
// Loaders always produce WeightLayout::Rows; only a CPU runtime's own copies of the matrices
// are in WeightLayout::Panels (kernels/cpu/weight_layout.h), where row() does not apply.
struct TensorView {
    DType type = DType::F32;
    const void* data = nullptr;
    int64_t rows = 0;
    int64_t cols = 0;
    std::string name; // name in the file, for messages
    kernels::WeightLayout layout = kernels::WeightLayout::Rows;

    bool present() const { return data != nullptr; }
    int64_t row_bytes() const { return dtype_row_bytes(type, cols); }
    const uint8_t* row(int64_t r) const {
        return static_cast<const uint8_t*>(data) + r * row_bytes();
    }
};

// One expert of a mixture-of-experts MLP (or the shared expert): act(gate x) * (up x) -> down.
// GGUF stores the experts of a layer stacked in one tensor [n_expert][rows][cols]; each view
// then points at its expert's rows of the stacked tensor (name = the stacked tensor's name).
struct ExpertWeights {
    TensorView w_gate, w_up; // [expert_inter][hidden]
    TensorView w_down;       // [hidden][expert_inter]
};

struct LayerWeights {
    TensorView attn_norm;      // [1][hidden] F32
    TensorView wq, wk, wv, wo; // [heads*hd][hidden], [kv*hd][hidden] x2, [hidden][heads*hd]
    TensorView bq, bk, bv;     // F32 biases (qwen2), absent otherwise
    TensorView q_norm, k_norm; // [1][head_dim] F32 (qwen3, gemma3), absent otherwise
    TensorView ffn_norm;       // [1][hidden] F32
    TensorView w_gate, w_up;   // [inter][hidden]
    TensorView w_down;         // [hidden][inter]

    // Fused projections as stored (phi3); when present, wq/wk/wv (w_gate/w_up) are absent.
    TensorView wqkv;      // [(heads + 2 kv) * hd][hidden]: q rows, then k, then v
    TensorView w_gate_up; // [2 * inter][hidden]: gate rows, then up
    // gemma2/3 sandwich norms: RMSNorm of the attention / MLP output before the residual add.
    TensorView post_attn_norm, post_ffn_norm; // [1][hidden] F32, absent otherwise

    // Mixture of experts (ModelConfig::num_experts > 0): the dense w_gate/w_up/w_down are
    // absent; the router picks num_experts_used of `experts` per token.
    TensorView router;                  // [n_expert][hidden] (ffn_gate_inp / mlp.gate)
    std::vector<ExpertWeights> experts; // [n_expert]
    ExpertWeights shared_expert;        // absent unless shared_expert_intermediate_size > 0
    TensorView shared_expert_gate;      // [1][hidden]: sigmoid gate of the shared expert (qwen2moe)
};

struct ModelWeights {
    TensorView tok_embd;    // [vocab][hidden]
    TensorView output_norm; // [1][hidden] F32
    TensorView output;      // [vocab][hidden]; same data as tok_embd when embeddings are tied
    TensorView rope_freqs;  // [1][head_dim/2] F32 (llama3 GGUF), absent otherwise
    std::vector<LayerWeights> layers;
};

} // namespace llmwb
