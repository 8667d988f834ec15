// fp32 dot and axpy with AVX2 (compiled with AVX2 flags; called after a CPU check).
#include <cmath>
#include <immintrin.h>

#include "kernels/cpu/ops_simd.h"

namespace llmwb::kernels {

float dot_f32_avx2(const float* a, const float* b, int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(),
           s3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    const __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    float r = _mm_cvtss_f32(h);
    for (; i < n; ++i)
        r += a[i] * b[i];
    return r;
}

void axpy_f32_avx2(float* y, float a, const float* x, int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i,
                         _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; ++i)
        y[i] += a * x[i];
}

namespace {

// exp(x) for x in [-87, 88.7] (clamped), as in ops_avx512.cpp; 2^k built in the exponent bits
// (k = 128 gives the bit pattern of +inf).
inline __m256 exp_ps(__m256 x) {
    x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.7f)), _mm256_set1_ps(-87.0f));
    const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), x);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.428606765330187045e-06f), r);
    __m256 p = _mm256_set1_ps(1.0f / 720.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    // k in [-126, 128]: 2^k = (k + 127) << 23 as float bits.
    const __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

inline __m256 silu_mul_ps(__m256 g, __m256 u) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), g));
    return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

inline __m256 gelu_tanh_mul_ps(__m256 g, __m256 u) {
    // 0.5 (1 + tanh z) = 1 / (1 + e^(-2z)), z = sqrt(2/pi) (g + 0.044715 g^3)
    const __m256 g2 = _mm256_mul_ps(g, g);
    const __m256 z =
        _mm256_mul_ps(_mm256_mul_ps(g, _mm256_set1_ps(0.7978845608028654f)),
                      _mm256_fmadd_ps(g2, _mm256_set1_ps(0.044715f), _mm256_set1_ps(1.0f)));
    const __m256 e = exp_ps(_mm256_mul_ps(z, _mm256_set1_ps(-2.0f)));
    return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

inline __m256 softcap_ps(__m256 x, __m256 cap, __m256 inv_cap) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 y = _mm256_mul_ps(x, inv_cap);
    const __m256 ay = _mm256_andnot_ps(sign, y);
    // |y| < 1/8: tanh y = y (1 - y^2/3 + 2y^4/15 - 17y^6/315 + 62y^8/2835)
    const __m256 y2 = _mm256_mul_ps(y, y);
    __m256 p = _mm256_set1_ps(62.0f / 2835.0f);
    p = _mm256_fmadd_ps(p, y2, _mm256_set1_ps(-17.0f / 315.0f));
    p = _mm256_fmadd_ps(p, y2, _mm256_set1_ps(2.0f / 15.0f));
    p = _mm256_fmadd_ps(p, y2, _mm256_set1_ps(-1.0f / 3.0f));
    p = _mm256_fmadd_ps(p, y2, _mm256_set1_ps(1.0f));
    const __m256 small = _mm256_mul_ps(y, p);
    // else tanh|y| = (1 - e) / (1 + e), e = e^(-2|y|), with y's sign
    const __m256 e = exp_ps(_mm256_mul_ps(ay, _mm256_set1_ps(-2.0f)));
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 big = _mm256_or_ps(_mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e)),
                                    _mm256_and_ps(sign, y));
    const __m256 is_small = _mm256_cmp_ps(ay, _mm256_set1_ps(0.125f), _CMP_LT_OQ);
    return _mm256_mul_ps(_mm256_blendv_ps(big, small, is_small), cap);
}

} // namespace

void gelu_tanh_mul_avx2(float* out, const float* gate, const float* up, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i,
                         gelu_tanh_mul_ps(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
    for (; i < n; ++i) {
        const float g = gate[i];
        const float z = 0.7978845608028654f * (g + 0.044715f * g * g * g);
        out[i] = g / (1.0f + std::exp(-2.0f * z)) * up[i];
    }
}

void softcap_avx2(float* x, int64_t n, float cap) {
    const __m256 vc = _mm256_set1_ps(cap), vi = _mm256_set1_ps(1.0f / cap);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, softcap_ps(_mm256_loadu_ps(x + i), vc, vi));
    for (; i < n; ++i)
        x[i] = cap * std::tanh(x[i] / cap);
}

void silu_mul_avx2(float* out, const float* gate, const float* up, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, silu_mul_ps(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
    for (; i < n; ++i) {
        const float g = gate[i];
        out[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
}

} // namespace llmwb::kernels
