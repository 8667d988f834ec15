// Element-wise and per-row fp32 ops. The reductions (dot, sum of squares) and axpy dispatch to
// SIMD; the element-wise loops are left to the compiler's vectorizer.
#include "kernels/cpu/ops.h"

#include <cmath>

#include "kernels/cpu/ops_simd.h"
#include "kernels/cpu/simd.h"

namespace llmwb::kernels {

namespace {

float dot_f32_scalar(const float* a, const float* b, int64_t n) {
    float acc[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k)
            acc[k] += a[i + k] * b[i + k];
    float s = 0.0f;
    for (; i < n; ++i)
        s += a[i] * b[i];
    for (int k = 0; k < 8; ++k)
        s += acc[k];
    return s;
}

} // namespace

float dot_f32(const float* a, const float* b, int64_t n) {
    switch (active_simd_level()) {
    case SimdLevel::Avx512:
        return dot_f32_avx512(a, b, n);
    case SimdLevel::Avx2:
        return dot_f32_avx2(a, b, n);
    case SimdLevel::Scalar:
        break;
    }
    return dot_f32_scalar(a, b, n);
}

void axpy_f32(float* y, float a, const float* x, int64_t n) {
    switch (active_simd_level()) {
    case SimdLevel::Avx512:
        axpy_f32_avx512(y, a, x, n);
        return;
    case SimdLevel::Avx2:
        axpy_f32_avx2(y, a, x, n);
        return;
    case SimdLevel::Scalar:
        break;
    }
    for (int64_t i = 0; i < n; ++i)
        y[i] += a * x[i];
}

void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps) {
    const float ss = dot_f32(x, x, n);
    const float scale = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
    for (int64_t i = 0; i < n; ++i)
        out[i] = x[i] * scale * weight[i];
}

void silu_mul(float* out, const float* gate, const float* up, int64_t n) {
    switch (active_simd_level()) {
    case SimdLevel::Avx512:
        silu_mul_avx512(out, gate, up, n);
        return;
    case SimdLevel::Avx2:
        silu_mul_avx2(out, gate, up, n);
        return;
    case SimdLevel::Scalar:
        break;
    }
    for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        out[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
}

void gelu_tanh_mul(float* out, const float* gate, const float* up, int64_t n) {
    switch (active_simd_level()) {
    case SimdLevel::Avx512:
        gelu_tanh_mul_avx512(out, gate, up, n);
        return;
    case SimdLevel::Avx2:
        gelu_tanh_mul_avx2(out, gate, up, n);
        return;
    case SimdLevel::Scalar:
        break;
    }
    // 0.5 (1 + tanh z) = 1 / (1 + e^(-2z)): no cancellation for negative gates
    constexpr float kC = 0.7978845608028654f; // sqrt(2 / pi)
    for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        const float z = kC * (g + 0.044715f * g * g * g);
        out[i] = g / (1.0f + std::exp(-2.0f * z)) * up[i];
    }
}

void softcap(float* x, int64_t n, float cap) {
    switch (active_simd_level()) {
    case SimdLevel::Avx512:
        softcap_avx512(x, n, cap);
        return;
    case SimdLevel::Avx2:
        softcap_avx2(x, n, cap);
        return;
    case SimdLevel::Scalar:
        break;
    }
    const float inv = 1.0f / cap;
    for (int64_t i = 0; i < n; ++i)
        x[i] = cap * std::tanh(x[i] * inv);
}

void add(float* out, const float* a, const float* b, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        out[i] = a[i] + b[i];
}

void softmax(float* x, int64_t n) {
    if (n <= 0)
        return;
    float mx = x[0];
    for (int64_t i = 1; i < n; ++i)
        mx = x[i] > mx ? x[i] : mx;
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - mx);
        sum += x[i];
    }
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < n; ++i)
        x[i] *= inv;
}

} // namespace llmwb::kernels
