// SIMD variants of the fp32 vector primitives behind ops.h (only called after a CPU check).
#pragma once

#include <cstdint>

namespace llmwb::kernels {

float dot_f32_avx2(const float* a, const float* b, int64_t n);
void axpy_f32_avx2(float* y, float a, const float* x, int64_t n);
float dot_f32_avx512(const float* a, const float* b, int64_t n);
void axpy_f32_avx512(float* y, float a, const float* x, int64_t n);
// out[i] = gate[i] * sigmoid(gate[i]) * up[i] with a vector exp (max relative error ~2e-7).
void silu_mul_avx2(float* out, const float* gate, const float* up, int64_t n);
void silu_mul_avx512(float* out, const float* gate, const float* up, int64_t n);
// out[i] = gelu_tanh(gate[i]) * up[i], as gate / (1 + e^(-2 z)) with z the tanh argument.
void gelu_tanh_mul_avx2(float* out, const float* gate, const float* up, int64_t n);
void gelu_tanh_mul_avx512(float* out, const float* gate, const float* up, int64_t n);
// x[i] = cap * tanh(x[i] / cap): odd polynomial below |x / cap| = 1/8, else from e^(-2|y|).
void softcap_avx2(float* x, int64_t n, float cap);
void softcap_avx512(float* x, int64_t n, float cap);

} // namespace llmwb::kernels
