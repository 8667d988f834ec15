// Products of a weight matrix in any DType with fp32 activations.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/cpu/dtype.h"
#include "kernels/cpu/weight_layout.h"

namespace llmwb::kernels {

class ThreadPool;

// A row-major weight matrix [rows][cols]: rows = output features, cols = input features.
struct WeightMatrix {
    DType type = DType::F32;
    const void* data = nullptr;
    int64_t rows = 0;
    int64_t cols = 0;                         // multiple of dtype_block_elems(type)
    WeightLayout layout = WeightLayout::Rows; // see weight_layout.h
};

// y[t][r] = sum_c W[r][c] * x[t][c]   for t < n_tokens, r < rows.
// x: [n_tokens][cols] fp32, y: [n_tokens][rows] fp32 (y must not alias x).
// n_tokens == 1 is the matrix-vector (decode) path; n_tokens > 1 uses matrix-matrix kernels
// that read each weight block once per tile of tokens. Quantized types are read in place
// (activations are quantized to 8 bits per block for the integer dot products).
void matmul(float* y, const WeightMatrix& w, const float* x, int64_t n_tokens, ThreadPool* pool);

// One product of matmul_shared: y [n_tokens][w.rows] = w x.
struct MatmulOut {
    float* y = nullptr;
    WeightMatrix w;
};

// The products of several matrices with the same input x [n_tokens][cols] (q/k/v, gate/up):
// every y has exactly the bits matmul(y, w, x, n_tokens, pool) gives. When all are in the panel
// layout with kernels reading the same prepared activations, x is prepared (quantized) once and
// all their panels go over the threads in one pass (one join instead of one per matrix);
// otherwise one matmul after the other. No y may alias x or another y.
void matmul_shared(std::span<const MatmulOut> outs, const float* x, int64_t n_tokens,
                   ThreadPool* pool);

// True when every (row, token) result of matmul(w, ...) has the same bits whatever the number
// of tokens in the call and whatever the other tokens are: a matrix in WeightLayout::Panels
// whose type has a panel kernel at the active SIMD level (its rows % 16 tail is computed one
// token at a time). (Rows-layout products
// keep that property only within one kernel path; see tests/kernels.)
bool matmul_batch_invariant(const WeightMatrix& w);

// Plain reference: dequantizes one row at a time and accumulates in double. Slow; for tests.
void matmul_reference(float* y, const WeightMatrix& w, const float* x, int64_t n_tokens);

} // namespace llmwb::kernels
