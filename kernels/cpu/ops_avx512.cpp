// fp32 dot and axpy with AVX512 (compiled with AVX512 flags; called after a CPU check).
#include <immintrin.h>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/ops_simd.h"

namespace llmwb::kernels {

float dot_f32_avx512(const float* a, const float* b, int64_t n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(),
           s3 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16)
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    if (i < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
        s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s1);
    }
    return hsum_ps_512(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

void axpy_f32_avx512(float* y, float a, const float* x, int64_t n) {
    const __m512 va = _mm512_set1_ps(a);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i,
                         _mm512_fmadd_ps(va, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    if (i < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(
            y + i, m,
            _mm512_fmadd_ps(va, _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i)));
    }
}

namespace {

// exp(x) for x in [-87, 88.7] (clamped; above ~88.4 the result is +inf): x = k ln2 + r, |r| <=
// ln2/2, e^r by its degree-6 Taylor polynomial (truncation error < 1.3e-7 relative), scaled by 2^k.
inline __m512 exp_ps(__m512 x) {
    x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.7f)), _mm512_set1_ps(-87.0f));
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), x);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.428606765330187045e-06f), r);
    __m512 p = _mm512_set1_ps(1.0f / 720.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, k);
}

inline __m512 silu_mul_ps(__m512 g, __m512 u) {
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), g));
    return _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), u);
}

inline __m512 gelu_tanh_mul_ps(__m512 g, __m512 u) {
    // 0.5 (1 + tanh z) = 1 / (1 + e^(-2z)), z = sqrt(2/pi) (g + 0.044715 g^3)
    const __m512 g2 = _mm512_mul_ps(g, g);
    const __m512 z =
        _mm512_mul_ps(_mm512_mul_ps(g, _mm512_set1_ps(0.7978845608028654f)),
                      _mm512_fmadd_ps(g2, _mm512_set1_ps(0.044715f), _mm512_set1_ps(1.0f)));
    const __m512 e = exp_ps(_mm512_mul_ps(z, _mm512_set1_ps(-2.0f)));
    return _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), u);
}

inline __m512 softcap_ps(__m512 x, __m512 cap, __m512 inv_cap) {
    const __m512 y = _mm512_mul_ps(x, inv_cap);
    const __m512 ay = _mm512_abs_ps(y);
    // |y| < 1/8: tanh y = y (1 - y^2/3 + 2y^4/15 - 17y^6/315 + 62y^8/2835)
    const __m512 y2 = _mm512_mul_ps(y, y);
    __m512 p = _mm512_set1_ps(62.0f / 2835.0f);
    p = _mm512_fmadd_ps(p, y2, _mm512_set1_ps(-17.0f / 315.0f));
    p = _mm512_fmadd_ps(p, y2, _mm512_set1_ps(2.0f / 15.0f));
    p = _mm512_fmadd_ps(p, y2, _mm512_set1_ps(-1.0f / 3.0f));
    p = _mm512_fmadd_ps(p, y2, _mm512_set1_ps(1.0f));
    const __m512 small = _mm512_mul_ps(y, p);
    // else tanh|y| = (1 - e) / (1 + e), e = e^(-2|y|), with y's sign
    const __m512 e = exp_ps(_mm512_mul_ps(ay, _mm512_set1_ps(-2.0f)));
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 th = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
    const __m512i sign = _mm512_and_si512(_mm512_castps_si512(y), _mm512_set1_epi32(INT32_MIN));
    const __m512 big = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(th), sign));
    const __mmask16 is_small = _mm512_cmp_ps_mask(ay, _mm512_set1_ps(0.125f), _CMP_LT_OQ);
    return _mm512_mul_ps(_mm512_mask_blend_ps(is_small, big, small), cap);
}

} // namespace

void gelu_tanh_mul_avx512(float* out, const float* gate, const float* up, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i,
                         gelu_tanh_mul_ps(_mm512_loadu_ps(gate + i), _mm512_loadu_ps(up + i)));
    if (i < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(
            out + i, m,
            gelu_tanh_mul_ps(_mm512_maskz_loadu_ps(m, gate + i), _mm512_maskz_loadu_ps(m, up + i)));
    }
}

void softcap_avx512(float* x, int64_t n, float cap) {
    const __m512 vc = _mm512_set1_ps(cap), vi = _mm512_set1_ps(1.0f / cap);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(x + i, softcap_ps(_mm512_loadu_ps(x + i), vc, vi));
    if (i < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(x + i, m, softcap_ps(_mm512_maskz_loadu_ps(m, x + i), vc, vi));
    }
}

void silu_mul_avx512(float* out, const float* gate, const float* up, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, silu_mul_ps(_mm512_loadu_ps(gate + i), _mm512_loadu_ps(up + i)));
    if (i < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(
            out + i, m,
            silu_mul_ps(_mm512_maskz_loadu_ps(m, gate + i), _mm512_maskz_loadu_ps(m, up + i)));
    }
}

} // namespace llmwb::kernels
