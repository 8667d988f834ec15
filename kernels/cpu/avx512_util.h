// Small AVX-512 helpers for the *_avx512.cpp files (include only there). The horizontal sums
// avoid GCC 12's _mm512_reduce_* / extract intrinsics, which trip -Wuninitialized.
#pragma once

// GCC 12 (bug 105593): AVX-512 intrinsics built on _mm512_undefined_* warn -Wuninitialized once
// inlined. The warning is spurious; silence it for the AVX-512 translation units only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/avx2_util.h"

namespace llmwb::kernels {

inline float hsum_ps_512(__m512 v) {
    const __m512 s = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0x4E));
    return hsum_ps(_mm512_castps512_ps256(s));
}

inline uint64_t hsum_epi64_512(__m512i v) {
    const __m512i s = _mm512_add_epi64(v, _mm512_shuffle_i64x2(v, v, 0x4E));
    const __m256i h = _mm512_castsi512_si256(s);
    const __m128i q = _mm_add_epi64(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    return static_cast<uint64_t>(_mm_cvtsi128_si64(q) + _mm_extract_epi64(q, 1));
}

} // namespace llmwb::kernels
