// AVX2 panel kernels for Q8_0 and Q4_0 (layout: panel_q32.h), included by panel_q32_avx2.cpp
// (plain AVX2: vpmaddubsw + vpmaddwd) and panel_q32_vnni_avx2.cpp (compiled for AVX-VNNI:
// vpdpbusd on ymm). Everything here has internal linkage: each file gets its own copy, built
// with its own target flags.
//
// A panel's 16 rows are two ymm row vectors (rows 0..7: the low 32 bytes of each 64-byte code
// chunk, rows 8..15: the high 32 bytes). Per block and (row vector, token) the int32 sum of the
// block is exact, then facc = fma(float(sum), d_w * d_x, facc) in block order: the same sequence
// for every register block and token count (bit-identical alone or in any batch).
//
// Integer products (exact in every policy):
//   Vnni     u8 codes (Q8_0: code ^ 0x80, Q4_0: 0..15) x s8 activations; start -K * sum(q_x).
//   Plain    Q8_0: |w| x sign(x, w) with vpmaddubsw (2 * 127 * 127 < 32768, no saturation),
//            vpmaddwd to int32 per group; no offset. Q4_0: 4-bit codes x s8 (at most 2 * 15 *
//            127 per int16 pair); the 8 groups of a block summed in int16 (8 * 3810 < 32768),
//            one vpmaddwd per block; start -8 * sum(q_x).
#pragma once

#include "kernels/cpu/panel_avx2_common.h"
#include "kernels/cpu/panel_q32.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

// Same rounding as the other activation quantizers: q = round_even(x * 127 / amax); the same
// bytes as the AVX-512 quantizer.
template <int K> void avx2_prep(const float* x, int64_t cols, uint8_t* dst) {
    const PanelA32Layout L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* corr = reinterpret_cast<int32_t*>(dst + L.corr_off);
    for (int64_t b = 0; b < cols / 32; ++b) {
        int32_t sum = 0;
        d[b] = quantize_a32_block(x + 32 * b, dst + 32 * b, &sum) / 127.0f;
        corr[b] = -K * sum;
    }
}

// Policies: group(codes, g, v): row vector v of group g (columns 4g .. 4g + 3);
// start(corr) / step(acc, w, x) / finish(acc): the exact int32 block sum.
struct VnniQ8_0 {
    using P = Q8_0Panel;
    static constexpr int K = 128;
    static __m256i group(const uint8_t* codes, int g, int v) {
        return _mm256_xor_si256(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 64 * g + 32 * v)),
            _mm256_set1_epi8(static_cast<char>(0x80)));
    }
    static __m256i start(__m256i corr) { return corr; }
    static __m256i step(__m256i acc, __m256i w, __m256i x) {
        return _mm256_dpbusd_avx_epi32(acc, w, x);
    }
    static __m256i finish(__m256i acc) { return acc; }
};

inline __m256i q4_group(const uint8_t* codes, int g, int v) {
    __m256i r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 64 * (g % 4) + 32 * v));
    if (g >= 4)
        r = _mm256_srli_epi16(r, 4);
    return _mm256_and_si256(r, _mm256_set1_epi8(0x0F));
}

struct VnniQ4_0 {
    using P = Q4_0Panel;
    static constexpr int K = 8;
    static __m256i group(const uint8_t* codes, int g, int v) { return q4_group(codes, g, v); }
    static __m256i start(__m256i corr) { return corr; }
    static __m256i step(__m256i acc, __m256i w, __m256i x) {
        return _mm256_dpbusd_avx_epi32(acc, w, x);
    }
    static __m256i finish(__m256i acc) { return acc; }
};

struct PlainQ8_0 {
    using P = Q8_0Panel;
    static constexpr int K = 0;
    static __m256i group(const uint8_t* codes, int g, int v) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 64 * g + 32 * v));
    }
    static __m256i start(__m256i corr) { return corr; }
    static __m256i step(__m256i acc, __m256i w, __m256i x) {
        const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
        __m256i r = _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
        __asm__("" : "+x"(r)); // a chain, not a re-associated tree (see panel_kq_avx2_kernels.h)
        return r;
    }
    static __m256i finish(__m256i acc) { return acc; }
};

// Q4_0 without VNNI: the block's int16 pair sums, widened once; the offset is added by finish
// (acc starts at 0 in int16 and the correction waits in the start value's place: see micro).
struct PlainQ4_0 {
    using P = Q4_0Panel;
    static constexpr int K = 8;
    static constexpr bool kInt16 = true;
    static __m256i group(const uint8_t* codes, int g, int v) { return q4_group(codes, g, v); }
    static __m256i step(__m256i acc, __m256i w, __m256i x) {
        __m256i r = _mm256_add_epi16(acc, _mm256_maddubs_epi16(w, x));
        __asm__("" : "+x"(r)); // a chain, not a re-associated tree (see panel_kq_avx2_kernels.h)
        return r;
    }
};

template <class D> constexpr bool int16_sums() {
    if constexpr (requires { D::kInt16; })
        return D::kInt16;
    return false;
}

// One panel (2 row vectors) x NT tokens; y[t * ldy + row]. kStream: matrix-vector.
template <class D, int NT, bool kStream>
void avx2_micro(const uint8_t* w, int64_t cols, const uint8_t* const* xa, float* y, int64_t ldy,
                Avx2Prefetch& pf) {
    using P = typename D::P;
    const PanelA32Layout L(cols);
    const int64_t nb = cols / 32;
    const float* xd[NT];
    const int32_t* xc[NT];
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        xd[t] = reinterpret_cast<const float*>(xa[t] + L.d_off);
        xc[t] = reinterpret_cast<const int32_t*>(xa[t] + L.corr_off);
    }
    __m256 facc[2][NT];
    LLMWB_UNROLL for (int v = 0; v < 2; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) facc[v][t] =
        _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        size_t sc = 0, cd = 0;
        P::offsets(nb, b, &sc, &cd);
        avx2_prefetch_block<kStream>(pf, w, b, P::kColBytes);
        __m256i acc[2][NT];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int v = 0; v < 2; ++v) {
            if constexpr (int16_sums<D>())
                acc[v][t] = _mm256_setzero_si256();
            else
                acc[v][t] = D::start(_mm256_set1_epi32(xc[t][b]));
        }
        LLMWB_UNROLL for (int g = 0; g < 8; ++g) {
            __m256i wv[2];
            LLMWB_UNROLL for (int v = 0; v < 2; ++v) wv[v] = D::group(w + cd, g, v);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                int32_t xw;
                __builtin_memcpy(&xw, xa[t] + 32 * b + 4 * g, 4);
                const __m256i xb = _mm256_set1_epi32(xw);
                LLMWB_UNROLL for (int v = 0; v < 2; ++v) acc[v][t] = D::step(acc[v][t], wv[v], xb);
            }
        }
        __m256 dw[2];
        LLMWB_UNROLL for (int v = 0; v < 2; ++v) dw[v] =
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + sc + 16 * v)));
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            const __m256 dx = _mm256_set1_ps(xd[t][b]);
            LLMWB_UNROLL for (int v = 0; v < 2; ++v) {
                __m256i s = acc[v][t];
                if constexpr (int16_sums<D>())
                    s = _mm256_add_epi32(_mm256_madd_epi16(s, _mm256_set1_epi16(1)),
                                         _mm256_set1_epi32(xc[t][b]));
                else
                    s = D::finish(s);
                facc[v][t] =
                    _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(dw[v], dx), facc[v][t]);
            }
        }
    }
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int v = 0; v < 2; ++v)
        _mm256_storeu_ps(y + t * ldy + 8 * v, facc[v][t]);
}

template <class D> struct Avx2Micro {
    template <int NT, bool kStream>
    static void run(const uint8_t* w, int64_t cols, const uint8_t* const* xa, float* y, int64_t ldy,
                    Avx2Prefetch& pf) {
        avx2_micro<D, NT, kStream>(w, cols, xa, y, ldy, pf);
    }
};

template <class D> constexpr PanelKernel make_avx2_panel_kernel() {
    return PanelKernel{panel_a32_bytes, avx2_prep<D::K>, sweep_a32_panels<Avx2Micro<D>>};
}

} // namespace

} // namespace llmwb::kernels::detail
