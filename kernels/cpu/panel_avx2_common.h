// Pieces shared by the AVX2 panel kernels: the sweeps over a thread's panels [p0, p1) of the
// 32-column families (panel_q32_avx2.h: Q8_0, Q4_0; panel_q5_avx2.h: Q5_0, Q5_1, Q4_1, IQ4_NL) and
// of the 256-column families (panel_kq_avx2_kernels.h: Q4_K, Q5_K, Q6_K; panel_kx_avx2.h: IQ4_XS,
// Q3_K, Q2_K), the 32-column families' activation block quantizer and horizontal reductions.
// Internal to kernels/cpu; everything here has internal linkage (one copy per including file, so
// each ISA's copy stays its own).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/avx2_util.h"
#include "kernels/cpu/matmul_kernels.h"

namespace llmwb::kernels::detail {

namespace {

// ---- 32-column families -------------------------------------------------------------------

// One block of 32 activations, the rounding of every activation quantizer: q = round_even(x * 127
// / amax) as int8 at q (natural order). Returns amax; *sum: the sum of the q.
__attribute__((always_inline)) inline float quantize_a32_block(const float* x, uint8_t* q,
                                                               int32_t* sum) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 v[4];
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
        v[i] = _mm256_loadu_ps(x + 8 * i);
        m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[i]));
    }
    const float amax = hmax_ps(m);
    const __m256 vid = _mm256_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
    __m256i qi[4];
    for (int i = 0; i < 4; ++i)
        qi[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], vid));
    const __m256i s =
        _mm256_add_epi32(_mm256_add_epi32(qi[0], qi[1]), _mm256_add_epi32(qi[2], qi[3]));
    // packs interleave the 128-bit lanes: dwords (0, 4, 1, 5, 2, 6, 3, 7) restore the order
    const __m256i p =
        _mm256_packs_epi16(_mm256_packs_epi32(qi[0], qi[1]), _mm256_packs_epi32(qi[2], qi[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q),
                        _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    *sum = hsum_epi32(s);
    return amax;
}

// Software prefetch: `next` advances to a target (matrix-vector stream, into L1) or by `step`
// bytes per block up to `end` (the next panel into L2 while token tiles sweep this one).
struct Avx2Prefetch {
    const char* next = nullptr;
    const char* end = nullptr;
    int64_t step = 0;
};

// The prefetch of a micro-kernel before column block b of its panel w (kColBytes per block):
// matrix-vector, every line up to 4 KiB ahead of the block, non-temporal (see
// panel_q32_avx512.cpp); token tiles, the next `step` bytes of the next panel into L2.
template <bool kStream>
__attribute__((always_inline)) inline void avx2_prefetch_block(Avx2Prefetch& pf, const uint8_t* w,
                                                               int64_t b, size_t col_bytes) {
    if constexpr (kStream) {
        const char* target =
            reinterpret_cast<const char*>(w) + (b + 1) * static_cast<int64_t>(col_bytes) + 4096;
        for (; pf.next < target; pf.next += 64)
            _mm_prefetch(pf.next, _MM_HINT_NTA);
    } else {
        const char* stop = std::min(pf.next + pf.step, pf.end);
        for (; pf.next < stop; pf.next += 64)
            _mm_prefetch(pf.next, _MM_HINT_T1);
    }
}

// M::run<NT, kStream>(w, cols, xa, y, ldy, pf): one panel (16 rows at w) x NT tokens (activation
// rows xa[0..NT)) into y[t * ldy + row]; kStream: the matrix-vector call. One token: the panels
// in one stream. More: token tiles of at most 3, as even as possible, each panel (L1/L2 resident)
// swept once per tile while the next one is prefetched.
template <class M> void sweep_a32_panels(const PanelArgs& a, int64_t p0, int64_t p1) {
    constexpr int kMaxNT = 3;
    const size_t panel_bytes = a.row_bytes * 16;
    if (a.n_tokens == 1) {
        Avx2Prefetch pf;
        // (from the first byte: the first block requests 4 KiB ahead at once)
        pf.next = reinterpret_cast<const char*>(a.w + static_cast<size_t>(p0) * panel_bytes);
        for (int64_t p = p0; p < p1; ++p)
            M::template run<1, true>(a.w + static_cast<size_t>(p) * panel_bytes, a.cols, &a.a,
                                     a.y + 16 * p, a.ldy, pf);
        return;
    }
    const int64_t tiles = (a.n_tokens + kMaxNT - 1) / kMaxNT;
    const int64_t base = a.n_tokens / tiles, extra = a.n_tokens % tiles;
    for (int64_t p = p0; p < p1; ++p) {
        const uint8_t* w = a.w + static_cast<size_t>(p) * panel_bytes;
        Avx2Prefetch pf;
        pf.next = reinterpret_cast<const char*>(w + panel_bytes);
        pf.end = p + 1 < p1 ? pf.next + panel_bytes : pf.next;
        pf.step = (static_cast<int64_t>(panel_bytes) / (tiles * (a.cols / 32)) + 64) & ~int64_t{63};
        const uint8_t* xa[kMaxNT];
        for (int64_t i = 0, t0 = 0; i < tiles; ++i) {
            const int nt = static_cast<int>(base + (i < extra ? 1 : 0));
            for (int t = 0; t < nt; ++t)
                xa[t] = a.a + static_cast<size_t>(t0 + t) * a.a_stride;
            float* y = a.y + t0 * a.ldy + 16 * p;
            if (nt == 1)
                M::template run<1, false>(w, a.cols, xa, y, a.ldy, pf);
            else if (nt == 2)
                M::template run<2, false>(w, a.cols, xa, y, a.ldy, pf);
            else
                M::template run<3, false>(w, a.cols, xa, y, a.ldy, pf);
            t0 += nt;
        }
    }
}

// ---- 256-column families ------------------------------------------------------------------

// F<H, NT>::run(a, p, h0, t0): halves [h0, h0 + H) (8 rows each) of panel p for NT tokens from t0.
// One token: both halves of each panel per call (one sequential stream). 2+ tokens: chunks of
// panels that stay in L2 (~kChunkBytes) while tiles of kTile tokens (then 2, then 1 for the rest)
// pass over them, one half at a time: a panel's codes are decoded once per tile, so a wider tile
// spends fewer instructions per product until its accumulators no longer fit the 16 ymm registers.
// Each (row, token) value is computed alone in a fixed order, so the tile that holds a token does
// not change its bits.
template <template <int, int> class F, int kTile>
void sweep_kp_panels(const PanelArgs& a, int64_t p0, int64_t p1) {
    static_assert(kTile >= 2);
    constexpr size_t kChunkBytes = 192 << 10;
    if (a.n_tokens == 1) {
        for (int64_t p = p0; p < p1; ++p)
            F<2, 1>::run(a, p, 0, 0);
        return;
    }
    const size_t panel_bytes = kPanelRows * a.row_bytes;
    const int64_t chunk =
        std::max<int64_t>(1, static_cast<int64_t>(kChunkBytes / std::max<size_t>(panel_bytes, 1)));
    for (int64_t c0 = p0; c0 < p1; c0 += chunk) {
        const int64_t c1 = std::min(p1, c0 + chunk);
        for (int64_t t0 = 0; t0 < a.n_tokens;) {
            const int64_t left = a.n_tokens - t0;
            const int nt = left >= kTile ? kTile : left >= 2 ? 2 : 1;
            for (int64_t p = c0; p < c1; ++p)
                for (int h = 0; h < 2; ++h) {
                    if (nt == kTile)
                        F<1, kTile>::run(a, p, h, t0);
                    else if (nt == 2)
                        F<1, 2>::run(a, p, h, t0);
                    else
                        F<1, 1>::run(a, p, h, t0);
                }
            t0 += nt;
        }
    }
}

} // namespace

} // namespace llmwb::kernels::detail
