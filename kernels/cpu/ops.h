// Element-wise and per-row ops of the transformer forward pass, fp32. Output first.
#pragma once

#include <cstdint>

namespace llmwb::kernels {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i], for one row of n. out may alias x.
void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps);

// out[i] = silu(gate[i]) * up[i]. out may alias gate.
void silu_mul(float* out, const float* gate, const float* up, int64_t n);

// out[i] = gelu_tanh(gate[i]) * up[i], with the tanh approximation
// gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). out may alias gate.
void gelu_tanh_mul(float* out, const float* gate, const float* up, int64_t n);

// x[i] = cap * tanh(x[i] / cap) (logit soft-capping), cap > 0.
void softcap(float* x, int64_t n, float cap);

// out[i] = a[i] + b[i]. out may alias a.
void add(float* out, const float* a, const float* b, int64_t n);

// In-place softmax of one row.
void softmax(float* x, int64_t n);

// Dot product and y += a * x, fp32 (SIMD dispatched).
float dot_f32(const float* a, const float* b, int64_t n);
void axpy_f32(float* y, float a, const float* x, int64_t n);

} // namespace llmwb::kernels
