// AVX2 read loop of the bandwidth probe.
#include <immintrin.h>

#include "kernels/cpu/bandwidth.h"

namespace llmwb::kernels {

uint64_t read_sum_avx2(const uint8_t* p, size_t n) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
            a7 = a0;
    for (size_t i = 0; i < n; i += 256) {
        const auto* q = reinterpret_cast<const __m256i*>(p + i);
        a0 = _mm256_add_epi64(a0, _mm256_load_si256(q + 0));
        a1 = _mm256_add_epi64(a1, _mm256_load_si256(q + 1));
        a2 = _mm256_add_epi64(a2, _mm256_load_si256(q + 2));
        a3 = _mm256_add_epi64(a3, _mm256_load_si256(q + 3));
        a4 = _mm256_add_epi64(a4, _mm256_load_si256(q + 4));
        a5 = _mm256_add_epi64(a5, _mm256_load_si256(q + 5));
        a6 = _mm256_add_epi64(a6, _mm256_load_si256(q + 6));
        a7 = _mm256_add_epi64(a7, _mm256_load_si256(q + 7));
    }
    const __m256i s =
        _mm256_add_epi64(_mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)),
                         _mm256_add_epi64(_mm256_add_epi64(a4, a5), _mm256_add_epi64(a6, a7)));
    alignas(32) uint64_t v[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(v), s);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

} // namespace llmwb::kernels
