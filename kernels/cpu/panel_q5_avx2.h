// AVX2 panel kernels for Q5_0, Q5_1, Q4_1 and IQ4_NL (layout: panel_q5.h), included by
// panel_q5_avx2.cpp (plain AVX2: vpmaddubsw + vpmaddwd) and panel_q5_vnni_avx2.cpp (compiled for
// AVX-VNNI: vpdpbusd on ymm). Everything here has internal linkage: each file gets its own copy,
// built with its own target flags.
//
// A panel's 16 rows are two ymm row vectors (rows 0..7: the low 32 bytes of each 64-byte code
// chunk, rows 8..15: the high 32 bytes; their qh bits: the low and the high 32 bits of the
// group's mask, spread to bytes by vpshufb + compare). Per block and (row vector, token) the
// int32 sum of the block is exact, then facc = fma(float(sum), d_w * d_x, facc) and, with m,
// facc = fma(m_w, d_x * sum(q_x), facc), in block order: the same sequence for every register
// block and token count (bit-identical alone or in any batch).
//
// Integer products (exact in every policy; both policies give the same integer sums):
//   Vnni     u8 codes (5-bit: 0..31, 4-bit: 0..15, IQ4_NL: table + 128) x s8 activations, started
//            at -K * sum(q_x).
//   Plain    the same codes with vpmaddubsw (at most 2 * 31 * 127 per int16 pair), summed in
//            int16 over runs of 4 groups (4-bit codes: 8), then one vpmaddwd per run; IQ4_NL as
//            signed table values: |w| x sign(x, w) (2 * 127 * 127 < 32768) + vpmaddwd per
//            group, no offset.
#pragma once

#include <immintrin.h>

#include "kernels/cpu/panel_avx2_common.h"
#include "kernels/cpu/panel_q5.h"
#include "kernels/cpu/quant_blocks.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

// Same rounding as the other activation quantizers: q = round_even(x * 127 / amax); the same
// bytes as the AVX-512 quantizer.
void q5_avx2_prep(const float* x, int64_t cols, uint8_t* dst) {
    const PanelQ5ActLayout L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* sum = reinterpret_cast<int32_t*>(dst + L.sum_off);
    for (int64_t b = 0; b < cols / 32; ++b)
        d[b] = quantize_a32_block(x + 32 * b, dst + 32 * b, sum + b) / 127.0f;
}

inline __m256i q5_avx2_nibbles(const uint8_t* codes, int g, int v) {
    __m256i r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 64 * (g % 4) + 32 * v));
    if (g >= 4)
        r = _mm256_srli_epi16(r, 4);
    return _mm256_and_si256(r, _mm256_set1_epi8(0x0F));
}

// lo | 16 where row vector v's 32 bits of group g's qh mask are set (bit n: byte n).
inline __m256i q5_avx2_high(__m256i lo, const uint8_t* qh, int g, int v) {
    int32_t bits;
    __builtin_memcpy(&bits, qh + 8 * g + 4 * v, 4);
    const __m256i rep = _mm256_shuffle_epi8(
        _mm256_set1_epi32(bits), _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2,
                                                  2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i sel = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(rep, sel), sel);
    return _mm256_or_si256(lo, _mm256_and_si256(set, _mm256_set1_epi8(16)));
}

// The IQ4_NL code book as u8 (value + 128: Vnni) or s8 (Plain), in both 128-bit lanes.
template <int Bias> inline __m256i iq4nl_table() {
    return _mm256_setr_epi8(
        static_cast<char>(kIQ4Values[0] + Bias), static_cast<char>(kIQ4Values[1] + Bias),
        static_cast<char>(kIQ4Values[2] + Bias), static_cast<char>(kIQ4Values[3] + Bias),
        static_cast<char>(kIQ4Values[4] + Bias), static_cast<char>(kIQ4Values[5] + Bias),
        static_cast<char>(kIQ4Values[6] + Bias), static_cast<char>(kIQ4Values[7] + Bias),
        static_cast<char>(kIQ4Values[8] + Bias), static_cast<char>(kIQ4Values[9] + Bias),
        static_cast<char>(kIQ4Values[10] + Bias), static_cast<char>(kIQ4Values[11] + Bias),
        static_cast<char>(kIQ4Values[12] + Bias), static_cast<char>(kIQ4Values[13] + Bias),
        static_cast<char>(kIQ4Values[14] + Bias), static_cast<char>(kIQ4Values[15] + Bias),
        static_cast<char>(kIQ4Values[0] + Bias), static_cast<char>(kIQ4Values[1] + Bias),
        static_cast<char>(kIQ4Values[2] + Bias), static_cast<char>(kIQ4Values[3] + Bias),
        static_cast<char>(kIQ4Values[4] + Bias), static_cast<char>(kIQ4Values[5] + Bias),
        static_cast<char>(kIQ4Values[6] + Bias), static_cast<char>(kIQ4Values[7] + Bias),
        static_cast<char>(kIQ4Values[8] + Bias), static_cast<char>(kIQ4Values[9] + Bias),
        static_cast<char>(kIQ4Values[10] + Bias), static_cast<char>(kIQ4Values[11] + Bias),
        static_cast<char>(kIQ4Values[12] + Bias), static_cast<char>(kIQ4Values[13] + Bias),
        static_cast<char>(kIQ4Values[14] + Bias), static_cast<char>(kIQ4Values[15] + Bias));
}

// Integer step policies: a run of run(...) groups sums the 4-element dots of w (codes) and x
// (broadcast group) from zero with step(), then widen() adds the run to the int32 block sum.
#if defined(LLMWB_Q5_AVX2_VNNI)
struct Q5Avx2Dot {
    static constexpr int run(bool /*fifth_bit*/) { return 8; }
    static __m256i step(__m256i acc, __m256i w, __m256i x) {
        return _mm256_dpbusd_avx_epi32(acc, w, x);
    }
    static __m256i widen(__m256i acc, __m256i s) { return _mm256_add_epi32(acc, s); }
};
#else
// Plain AVX2: vpmaddubsw pairs summed in int16 over a run of kRun groups, widened once per run
// (vpmaddwd by ones): a 5-bit code pair is at most 2 * 31 * 127 = 7874, so 4 groups stay below
// 32768 (4-bit codes: 3810 per pair, 8 groups). Half the vpmaddwd of one widening per group,
// and the same integer sums.
struct Q5Avx2Dot {
    static constexpr int run(bool fifth_bit) { return fifth_bit ? 4 : 8; }
    static __m256i step(__m256i acc, __m256i w, __m256i x) {
        __m256i r = _mm256_add_epi16(acc, _mm256_maddubs_epi16(w, x));
        __asm__("" : "+x"(r)); // a chain, not a re-associated tree (see panel_kq_avx2_kernels.h)
        return r;
    }
    static __m256i widen(__m256i acc, __m256i s16) {
        return _mm256_add_epi32(acc, _mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
    }
};
#endif

// Weight policies: group(codes, qh, g, v): row vector v of group g (columns 4g .. 4g + 3);
// K: the code offset removed by starting at -K * sum(q_x); kRun / step / widen: the integer
// dot's runs.
template <class Panel, int Offset> struct Avx2Nib {
    using P = Panel;
    static constexpr int K = Offset;
    static constexpr int kRun = Q5Avx2Dot::run(P::kHasH);
    static __m256i widen(__m256i acc, __m256i s) { return Q5Avx2Dot::widen(acc, s); }
    static __m256i group(const uint8_t* codes, const uint8_t* qh, int g, int v) {
        const __m256i lo = q5_avx2_nibbles(codes, g, v);
        if constexpr (P::kHasH)
            return q5_avx2_high(lo, qh, g, v);
        else
            return lo;
    }
    static __m256i step(__m256i acc, __m256i w, __m256i x) { return Q5Avx2Dot::step(acc, w, x); }
};
using Avx2Q5_0 = Avx2Nib<Q5_0Panel, 16>;
using Avx2Q5_1 = Avx2Nib<Q5_1Panel, 0>;
using Avx2Q4_1 = Avx2Nib<Q4_1Panel, 0>;

#if defined(LLMWB_Q5_AVX2_VNNI)
struct Avx2IQ4_NL {
    using P = IQ4_NLPanel;
    static constexpr int K = 128;
    static constexpr int kRun = Q5Avx2Dot::run(false);
    static __m256i group(const uint8_t* codes, const uint8_t*, int g, int v) {
        return _mm256_shuffle_epi8(iq4nl_table<128>(), q5_avx2_nibbles(codes, g, v));
    }
    static __m256i step(__m256i acc, __m256i w, __m256i x) { return Q5Avx2Dot::step(acc, w, x); }
    static __m256i widen(__m256i acc, __m256i s) { return Q5Avx2Dot::widen(acc, s); }
};
#else
struct Avx2IQ4_NL {
    using P = IQ4_NLPanel;
    static constexpr int K = 0;
    static constexpr int kRun = 8; // int32 steps: one run per block
    static __m256i group(const uint8_t* codes, const uint8_t*, int g, int v) {
        return _mm256_shuffle_epi8(iq4nl_table<0>(), q5_avx2_nibbles(codes, g, v));
    }
    static __m256i step(__m256i acc, __m256i w, __m256i x) {
        const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
        return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
    }
    static __m256i widen(__m256i acc, __m256i s) { return _mm256_add_epi32(acc, s); }
};
#endif

// One panel (2 row vectors) x NT tokens; y[t * ldy + row]. kStream: matrix-vector.
template <class D, int NT, bool kStream>
void q5_avx2_micro(const uint8_t* w, int64_t cols, const uint8_t* const* xa, float* y, int64_t ldy,
                   Avx2Prefetch& pf) {
    using P = typename D::P;
    const PanelQ5ActLayout L(cols);
    const int64_t nb = cols / 32;
    const float* xd[NT];
    const int32_t* xs[NT];
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        xd[t] = reinterpret_cast<const float*>(xa[t] + L.d_off);
        xs[t] = reinterpret_cast<const int32_t*>(xa[t] + L.sum_off);
    }
    __m256 facc[2][NT];
    LLMWB_UNROLL for (int v = 0; v < 2; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) facc[v][t] =
        _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const auto o = P::offsets(nb, b);
        avx2_prefetch_block<kStream>(pf, w, b, P::kColBytes);
        __m256i acc[2][NT];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int v = 0; v < 2; ++v)
            acc[v][t] = _mm256_set1_epi32(-D::K * xs[t][b]);
        LLMWB_UNROLL for (int g0 = 0; g0 < 8; g0 += D::kRun) {
            __m256i s[2][NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int v = 0; v < 2; ++v)
                s[v][t] = _mm256_setzero_si256();
            LLMWB_UNROLL for (int g = g0; g < g0 + D::kRun; ++g) {
                __m256i wv[2];
                LLMWB_UNROLL for (int v = 0; v < 2; ++v) wv[v] =
                    D::group(w + o.codes, w + o.qh, g, v);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    int32_t xw;
                    __builtin_memcpy(&xw, xa[t] + 32 * b + 4 * g, 4);
                    const __m256i xb = _mm256_set1_epi32(xw);
                    LLMWB_UNROLL for (int v = 0; v < 2; ++v) s[v][t] = D::step(s[v][t], wv[v], xb);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int v = 0; v < 2; ++v)
                acc[v][t] = D::widen(acc[v][t], s[v][t]);
        }
        __m256 dw[2], mw[2];
        LLMWB_UNROLL for (int v = 0; v < 2; ++v) {
            dw[v] = _mm256_cvtph_ps(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + o.d + 16 * v)));
            if constexpr (P::kHasM)
                mw[v] = _mm256_cvtph_ps(
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + o.m + 16 * v)));
        }
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            const __m256 dx = _mm256_set1_ps(xd[t][b]);
            LLMWB_UNROLL for (int v = 0; v < 2; ++v) facc[v][t] = _mm256_fmadd_ps(
                _mm256_cvtepi32_ps(acc[v][t]), _mm256_mul_ps(dw[v], dx), facc[v][t]);
            if constexpr (P::kHasM) {
                const __m256 sx = _mm256_set1_ps(xd[t][b] * static_cast<float>(xs[t][b]));
                LLMWB_UNROLL for (int v = 0; v < 2; ++v) facc[v][t] =
                    _mm256_fmadd_ps(mw[v], sx, facc[v][t]);
            }
        }
    }
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int v = 0; v < 2; ++v)
        _mm256_storeu_ps(y + t * ldy + 8 * v, facc[v][t]);
}

template <class D> struct Q5Avx2Micro {
    template <int NT, bool kStream>
    static void run(const uint8_t* w, int64_t cols, const uint8_t* const* xa, float* y, int64_t ldy,
                    Avx2Prefetch& pf) {
        q5_avx2_micro<D, NT, kStream>(w, cols, xa, y, ldy, pf);
    }
};

template <class D> constexpr PanelKernel make_q5_avx2_panel_kernel() {
    return PanelKernel{panel_q5_act_bytes, q5_avx2_prep, sweep_a32_panels<Q5Avx2Micro<D>>};
}

// The level's kernels of this file's policy (Plain or Vnni).
inline const PanelKernel* q5_avx2_kernel_of(DType t) {
    static const PanelKernel kQ5_0 = make_q5_avx2_panel_kernel<Avx2Q5_0>();
    static const PanelKernel kQ5_1 = make_q5_avx2_panel_kernel<Avx2Q5_1>();
    static const PanelKernel kQ4_1 = make_q5_avx2_panel_kernel<Avx2Q4_1>();
    static const PanelKernel kIQ4_NL = make_q5_avx2_panel_kernel<Avx2IQ4_NL>();
    switch (t) {
    case DType::Q5_0:
        return &kQ5_0;
    case DType::Q5_1:
        return &kQ5_1;
    case DType::Q4_1:
        return &kQ4_1;
    case DType::IQ4_NL:
        return &kIQ4_NL;
    default:
        return nullptr;
    }
}

} // namespace

} // namespace llmwb::kernels::detail
