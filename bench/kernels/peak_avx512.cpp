// AVX-512 peak probes (see peak.h): 12 independent accumulators hide the latency.
#include <immintrin.h>

#include "bench/kernels/peak.h"

namespace llmwb::bench {

double peak_fma_avx512(int64_t iters) {
    __m512 a[12];
    for (int i = 0; i < 12; ++i)
        a[i] = _mm512_set1_ps(static_cast<float>(i) * 0.001f);
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
        for (int i = 0; i < 12; ++i)
            a[i] = _mm512_fmadd_ps(a[i], m, c);
    }
    __m512 s = a[0];
    for (int i = 1; i < 12; ++i)
        s = _mm512_add_ps(s, a[i]);
    volatile float sink = _mm512_cvtss_f32(s);
    (void)sink;
    return static_cast<double>(iters) * 12 * 16 * 2;
}

double peak_int8_avx512(int64_t iters) {
    __m512i a[12];
    for (int i = 0; i < 12; ++i)
        a[i] = _mm512_set1_epi32(i);
    const __m512i u = _mm512_set1_epi8(3), s = _mm512_set1_epi8(-2);
    for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
        for (int i = 0; i < 12; ++i)
            a[i] = _mm512_dpbusd_epi32(a[i], u, s);
    }
    __m512i t = a[0];
    for (int i = 1; i < 12; ++i)
        t = _mm512_add_epi32(t, a[i]);
    volatile int sink = _mm_cvtsi128_si32(_mm512_castsi512_si128(t));
    (void)sink;
    return static_cast<double>(iters) * 12 * 64 * 2;
}

} // namespace llmwb::bench
