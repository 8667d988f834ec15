// AVX2 peak probes (see peak.h): 12 independent accumulators hide the latency.
#include <immintrin.h>

#include "bench/kernels/peak.h"

namespace llmwb::bench {

double peak_fma_avx2(int64_t iters) {
    __m256 a[12];
    for (int i = 0; i < 12; ++i)
        a[i] = _mm256_set1_ps(static_cast<float>(i) * 0.001f);
    const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
        for (int i = 0; i < 12; ++i)
            a[i] = _mm256_fmadd_ps(a[i], m, c);
    }
    __m256 s = a[0];
    for (int i = 1; i < 12; ++i)
        s = _mm256_add_ps(s, a[i]);
    volatile float sink = _mm256_cvtss_f32(s);
    (void)sink;
    return static_cast<double>(iters) * 12 * 8 * 2;
}

double peak_int8_avx2(int64_t iters) {
    // Six streams: a 1-cycle byte increment feeds each product so nothing is loop-invariant.
    __m256i a[6], x[6];
    for (int i = 0; i < 6; ++i) {
        a[i] = _mm256_set1_epi32(i);
        x[i] = _mm256_set1_epi8(static_cast<char>(i));
    }
    const __m256i u = _mm256_set1_epi8(3), one8 = _mm256_set1_epi8(1), ones = _mm256_set1_epi16(1);
    for (int64_t it = 0; it < iters; ++it)
        for (int k = 0; k < 2; ++k)
            for (int i = 0; i < 6; ++i) {
                x[i] = _mm256_add_epi8(x[i], one8);
                a[i] =
                    _mm256_add_epi32(a[i], _mm256_madd_epi16(_mm256_maddubs_epi16(u, x[i]), ones));
            }
    __m256i t = a[0];
    for (int i = 1; i < 6; ++i)
        t = _mm256_add_epi32(t, a[i]);
    volatile int sink = _mm_cvtsi128_si32(_mm256_castsi256_si128(t));
    (void)sink;
    return static_cast<double>(iters) * 12 * 32 * 2;
}

} // namespace llmwb::bench
