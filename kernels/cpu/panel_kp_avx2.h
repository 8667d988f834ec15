// AVX2 pieces shared by the panel kernels of the 256-column families (panel_kq_avx2_kernels.h:
// Q4_K, Q5_K, Q6_K; panel_kx_avx2.h: IQ4_XS, Q3_K, Q2_K): loads, the KP activation quantizer
// (the bytes of prepare_act_kp, panel_kq.h) and the per-token views of a KP row, and the sweep
// (panel_avx2_common.h). Everything here has internal linkage (one copy per including file).
#pragma once

#include <immintrin.h>

#include "kernels/cpu/panel_avx2_common.h"
#include "kernels/cpu/panel_kq.h"

#ifndef LLMWB_UNROLL
#define LLMWB_UNROLL _Pragma("GCC unroll 16")
#endif

namespace llmwb::kernels::detail {

namespace {

inline __m256i load(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

inline __m256 load_f16x8(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline __m256i bcast32(const void* p) {
    int32_t v;
    __builtin_memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

// ---- scales as multipliers of int16 pair sums or int32 dots ---------------------------------

// Byte JJ of every dword of v, zero-extended, as a multiplier of the dot sums: plain AVX2
// (kVnni false) the int16 pair (b, b) for vpmaddwd against int16 pair sums, AVX-VNNI the int32 b
// for vpmulld against int32 dots (scaled_sum).
template <bool kVnni, int JJ> inline __m256i scale_lanes(__m256i v) {
    constexpr int k =
        kVnni ? JJ | static_cast<int>(0x80808000) : JJ | static_cast<int>(0x80008000) | JJ << 16;
    constexpr int step = kVnni ? 4 : 4 | 4 << 16;
    const __m256i sel = _mm256_setr_epi32(k, k + step, k + 2 * step, k + 3 * step, k, k + step,
                                          k + 2 * step, k + 3 * step);
    return _mm256_shuffle_epi8(v, sel);
}
// scale_lanes' lanes minus c.
template <bool kVnni> inline __m256i scale_lanes_sub(__m256i lanes, int c) {
    if constexpr (kVnni)
        return _mm256_sub_epi32(lanes, _mm256_set1_epi32(c));
    else
        return _mm256_sub_epi16(lanes, _mm256_set1_epi16(static_cast<int16_t>(c)));
}
// Dot sums (int16 pairs, or int32 with AVX-VNNI) times their scale_lanes: int32.
template <bool kVnni> inline __m256i scaled_sum(__m256i s, __m256i scale) {
    if constexpr (kVnni)
        return _mm256_mullo_epi32(s, scale);
    else
        return _mm256_madd_epi16(s, scale);
}

// ---- activations: the bytes of prepare_act_kp ----------------------------------------------

void prep_kp(const float* x, int64_t cols, uint8_t* dst) {
    const KPLayout L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* s32 = reinterpret_cast<int16_t*>(dst + L.s32_off);
    auto* n16 = reinterpret_cast<int32_t*>(dst + L.n16_off);
    static constexpr int kPairOrder[8] = {0, 2, 1, 3, 4, 6, 5, 7};
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < cols / 256; ++b) {
        const float* xb = x + 256 * b;
        __m256 m = _mm256_setzero_ps();
        for (int i = 0; i < 32; ++i)
            m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(xb + 8 * i)));
        const float amax = hmax_ps(m);
        const __m256 vid = _mm256_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
        d[b] = amax / 127.0f;
        int sum16[16];
        for (int g = 0; g < 16; ++g) {
            const __m256i q0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xb + 16 * g), vid));
            const __m256i q1 =
                _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xb + 16 * g + 8), vid));
            sum16[g] = hsum_epi32(_mm256_add_epi32(q0, q1));
            n16[16 * b + g] = -32 * sum16[g];
            const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xD8);
            _mm_storeu_si128(
                reinterpret_cast<__m128i*>(dst + 256 * b + 16 * g),
                _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1)));
        }
        for (int k = 0; k < 8; ++k) {
            const int j = kPairOrder[k];
            s32[8 * b + k] = static_cast<int16_t>(sum16[2 * j] + sum16[2 * j + 1]);
        }
    }
}

struct Act {
    const int8_t* q;
    const float* d;
    const int16_t* s32;
    const int32_t* n16;
};

template <int NT> void acts_of(const PanelArgs& a, int64_t t0, Act* out) {
    const KPLayout L(a.cols);
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        const uint8_t* r = a.a + static_cast<size_t>(t0 + t) * a.a_stride;
        out[t] = {reinterpret_cast<const int8_t*>(r), reinterpret_cast<const float*>(r + L.d_off),
                  reinterpret_cast<const int16_t*>(r + L.s32_off),
                  reinterpret_cast<const int32_t*>(r + L.n16_off)};
    }
}

} // namespace

} // namespace llmwb::kernels::detail
