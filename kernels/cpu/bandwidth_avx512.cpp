// AVX-512 read loop of the bandwidth probe.
#include <immintrin.h>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/bandwidth.h"

namespace llmwb::kernels {

uint64_t read_sum_avx512(const uint8_t* p, size_t n) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < n; i += 256) {
        const auto* q = reinterpret_cast<const __m512i*>(p + i);
        a0 = _mm512_add_epi64(a0, _mm512_load_si512(q + 0));
        a1 = _mm512_add_epi64(a1, _mm512_load_si512(q + 1));
        a2 = _mm512_add_epi64(a2, _mm512_load_si512(q + 2));
        a3 = _mm512_add_epi64(a3, _mm512_load_si512(q + 3));
    }
    return hsum_epi64_512(_mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)));
}

} // namespace llmwb::kernels
