// AVX-512 (F, BW, VL, VNNI) panel kernels of Q4_K, Q5_K and Q6_K (arrangement in panel_kq.h).
// Compiled with AVX-512 flags and selected only after the CPU check.
//
// One 64-byte weight vector holds the same 4 columns of the panel's 16 rows; one vpdpbusd
// multiplies its 16 x 4 unsigned codes by a token's 4 int8 activations (broadcast), giving one
// int32 lane per row: no horizontal sums, one sequential stream per panel. Per super-block
// (256 columns), row and token: each sub-block's dot is exact in int32; the Q4_K/Q5_K mins term
// is exact in int32 (vpmaddwd of the mins against the activation's sub-block sums), Q6_K's code
// offset (32) enters through the accumulator's start value. The float part runs in one fixed
// order: acc = -dmin * msum, acc += (d * sc_j) * dot_j for each sub-block j in a fixed order,
// y += d_x * acc per super-block in column order. So a (row, token) value is the same bits
// whatever the number of tokens, the tiling or the panels sharing a register block (the
// contract of matmul_kernels.h's PanelKernel).
//
// One token: one panel at a time, weights prefetched kPrefetchBytes ahead. More tokens: two
// panels (32 rows) x up to 4 tokens per register block (each broadcast feeds two vpdpbusd),
// panels swept in chunks that stay in L2 while the token tiles go by.
#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/panel_kq.h"
#include "kernels/cpu/quant_blocks.h"

#include <algorithm>
#include <cmath>

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

// Tokens per register block of two panels (32 rows); measured on Zen 4 (interleaved with the
// Rows path, 8 / 32 / 512 tokens): 3 tokens or one panel were slower.
constexpr int kTileQ4K = 4; // Q4_K, Q5_K
constexpr int kTileQ6K = 4;
constexpr size_t kChunkBytes = 192 << 10; // panels per chunk: ~192 KiB of weights (L2)
constexpr int kTernSelect = 0xE4;         // (A & C) | (B & ~C)

// Matrix-vector: software prefetch of every weight line kPrefetchBytes ahead of its use in the
// thread's one stream, non-temporal (the weights are read once per token; the hint keeps them
// from displacing activations and the KV cache in L2/L3). always_inline: called from the
// always_inline lambdas below, a plain inline function's prefetch was silently dropped by GCC 12
// (only the 4 header lines of a group were prefetched, none of its 32 code lines). Measured on
// the Qwen2.5-1.5B Q4_K_M matrices in decode order, 2 threads, interleaved in one process: the
// matrix-vector products 24.6 -> 15.9-16.1 ms per token (0.66 -> ~1.0 of the bandwidth probe,
// ~0.95 of a plain read of the same bytes); T0 or NTA at 4-16 KiB within noise of each other.
constexpr size_t kPrefetchBytes = 4096;
__attribute__((always_inline)) inline void prefetch_ahead(const uint8_t* p) {
    _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes), _MM_HINT_NTA);
}

inline __m512i bcast32(const int8_t* p) {
    int32_t v;
    __builtin_memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

inline __m512i load(const uint8_t* p) {
    return _mm512_loadu_si512(p);
}

inline __m512 load_f16x16(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

template <int S> inline __m512i shift16(__m512i v) {
    if constexpr (S > 0)
        return _mm512_slli_epi16(v, S);
    else if constexpr (S < 0)
        return _mm512_srli_epi16(v, -S);
    else
        return v;
}

// Byte k of every dword, zero-extended (the sub-block scale or min k of each row).
inline __m512i dword_byte(__m512i v, int k) {
    const __m512i base =
        _mm512_set4_epi32(static_cast<int>(0x8080800C), static_cast<int>(0x80808008),
                          static_cast<int>(0x80808004), static_cast<int>(0x80808000));
    return _mm512_shuffle_epi8(v, _mm512_add_epi32(base, _mm512_set1_epi32(k)));
}

// ---- activations (KP rows, panel_kq.h) ------------------------------------------------------

void prep_kp(const float* x, int64_t cols, uint8_t* dst) {
    const KPLayout L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* s32 = reinterpret_cast<int16_t*>(dst + L.s32_off);
    auto* n16 = reinterpret_cast<int32_t*>(dst + L.n16_off);
    static constexpr int kPairOrder[8] = {0, 2, 1, 3, 4, 6, 5, 7};
    for (int64_t b = 0; b < cols / 256; ++b) {
        const float* xb = x + 256 * b;
        __m512 m = _mm512_setzero_ps();
        LLMWB_UNROLL for (int i = 0; i < 16; ++i) m =
            _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(xb + 16 * i)));
        const float amax = _mm512_reduce_max_ps(m);
        const __m512 vid = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
        d[b] = amax / 127.0f;
        // 64 elements at a time: int8 codes, then the sums of 16 by vpdpbusd against ones and
        // two in-lane folds (one 128-bit lane = 16 codes).
        alignas(64) int32_t lanes[16];
        int sum16[16];
        const __m512i ones = _mm512_set1_epi8(1);
        for (int c = 0; c < 4; ++c) {
            __m128i q8[4];
            LLMWB_UNROLL for (int i = 0; i < 4; ++i) q8[i] = _mm512_cvtsepi32_epi8(
                _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xb + 64 * c + 16 * i), vid)));
            __m512i z = _mm512_castsi128_si512(q8[0]);
            z = _mm512_inserti32x4(z, q8[1], 1);
            z = _mm512_inserti32x4(z, q8[2], 2);
            z = _mm512_inserti32x4(z, q8[3], 3);
            _mm512_storeu_si512(dst + 256 * b + 64 * c, z);
            __m512i sv = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, z);
            sv = _mm512_add_epi32(sv, _mm512_shuffle_epi32(sv, _MM_PERM_BADC));
            sv = _mm512_add_epi32(sv, _mm512_shuffle_epi32(sv, _MM_PERM_CDAB));
            _mm512_store_si512(lanes, sv);
            LLMWB_UNROLL for (int i = 0; i < 4; ++i) {
                sum16[4 * c + i] = lanes[4 * i];
                n16[16 * b + 4 * c + i] = -32 * lanes[4 * i];
            }
        }
        for (int k = 0; k < 8; ++k) {
            const int j = kPairOrder[k];
            s32[8 * b + k] = static_cast<int16_t>(sum16[2 * j] + sum16[2 * j + 1]);
        }
    }
}

// One token's pointers into its KP row.
struct Act {
    const int8_t* q;
    const float* d;
    const int16_t* s32;
    const int32_t* n16;
};

inline void prefetch_act(const Act& x, int64_t b) {
    LLMWB_UNROLL for (int i = 0; i < 4; ++i)
        _mm_prefetch(reinterpret_cast<const char*>(x.q + 256 * b + 64 * i), _MM_HINT_T0);
}

template <int NT> void acts_of(const PanelArgs& a, int64_t t0, Act* out) {
    const KPLayout L(a.cols);
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        const uint8_t* r = a.a + static_cast<size_t>(t0 + t) * a.a_stride;
        out[t] = {reinterpret_cast<const int8_t*>(r), reinterpret_cast<const float*>(r + L.d_off),
                  reinterpret_cast<const int16_t*>(r + L.s32_off),
                  reinterpret_cast<const int32_t*>(r + L.n16_off)};
    }
}

// ---- Q4_K and Q5_K -----------------------------------------------------------------------

// The 5th bit of Q5_K's codes: bit 2c (low nibble) / 2c + 1 (high nibble) of the QH vector
// moved to bit 4.
template <int C, bool kHigh> inline __m512i q5_bit(__m512i h, __m512i bit4) {
    constexpr int kFrom = 2 * C + (kHigh ? 1 : 0);
    return _mm512_and_si512(shift16<4 - kFrom>(h), bit4);
}

// y[t][16p .. 16p + 16 NP) for NT tokens from t0 (NP panels side by side: each broadcast
// activation feeds NP vpdpbusd); kQ5: Q5_K (QH plane), else Q4_K.
template <bool kQ5, int NP, int NT> void q45_panels(const PanelArgs& a, int64_t p, int64_t t0) {
    constexpr size_t kGroup = kQ5 ? kQ5KGroupBytes : kQ4KGroupBytes;
    constexpr size_t kCodes = kQ5 ? 768 : 256;
    // One panel and token: two accumulators per sub-block (even / odd k-groups) halve the
    // dependency chains; integer sums, so the result is the same bits.
    constexpr int kSplit = NP * NT == 1 ? 2 : 1;
    const int64_t nb = a.cols / 256;
    const size_t panel_bytes = kPanelRows * a.row_bytes;
    const uint8_t* panel = a.w + static_cast<size_t>(p) * panel_bytes;
    Act act[NT];
    acts_of<NT>(a, t0, act);
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i bits45 = _mm512_set1_epi8(0x30);
    const __m512i bit4 = _mm512_set1_epi8(0x10);
    const __m512i words = _mm512_set1_epi32(0x00FF00FF);
    __m512 y[NP][NT];
    LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
        _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* g[NP];
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) g[v] =
            panel + v * panel_bytes + static_cast<size_t>(b) * kGroup;
        if constexpr (NP * NT == 1) // the header lines (Q5_K: and the QH plane) of a later group
            LLMWB_UNROLL for (size_t i = 0; i < kCodes; i += 64) prefetch_ahead(g[0] + i);
        else // the activations of two groups later (from L3 when the batch is large)
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) prefetch_act(act[t], b + 2);
        // Full 6-bit scales, 4 per row dword: sub-blocks 0..3 and 4..7.
        __m512i sc03[NP], sc47[NP];
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
            const __m512i sc_lo = load(g[v] + 64), hi = load(g[v] + 192);
            sc03[v] = _mm512_ternarylogic_epi32(
                sc_lo, _mm512_and_si512(_mm512_slli_epi16(hi, 4), bits45), low4, kTernSelect);
            sc47[v] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(sc_lo, 4),
                                                _mm512_and_si512(_mm512_slli_epi16(hi, 2), bits45),
                                                low4, kTernSelect);
        }
        // Per (row, token) and group: acc = -dmin * sum_j m_j * s_j (exact int32, one rounding),
        // then + (d * sc_j) * dot_j for j = 0..7 in order, then y += d_x * acc.
        __m512 acc[NP][NT];
        __m512 dw[NP];
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
            dw[v] = load_f16x16(g[v]);
            // Mins: words (m[k], m[k + 2]) of each row against the sums in pair order.
            const __m512i mn_lo = load(g[v] + 128), hi = load(g[v] + 192);
            const __m512i m03 =
                _mm512_ternarylogic_epi32(mn_lo, _mm512_and_si512(hi, bits45), low4, kTernSelect);
            const __m512i m47 = _mm512_ternarylogic_epi32(
                _mm512_srli_epi16(mn_lo, 4), _mm512_and_si512(_mm512_srli_epi16(hi, 2), bits45),
                low4, kTernSelect);
            const __m512i w02 = _mm512_and_si512(m03, words);
            const __m512i w13 = _mm512_and_si512(_mm512_srli_epi32(m03, 8), words);
            const __m512i w46 = _mm512_and_si512(m47, words);
            const __m512i w57 = _mm512_and_si512(_mm512_srli_epi32(m47, 8), words);
            const __m512 ndm = _mm512_sub_ps(_mm512_setzero_ps(), load_f16x16(g[v] + 32));
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const auto* s = reinterpret_cast<const int8_t*>(act[t].s32 + 8 * b);
                __m512i ms = _mm512_madd_epi16(w02, bcast32(s));
                ms = _mm512_add_epi32(ms, _mm512_madd_epi16(w13, bcast32(s + 4)));
                ms = _mm512_add_epi32(ms, _mm512_madd_epi16(w46, bcast32(s + 8)));
                ms = _mm512_add_epi32(ms, _mm512_madd_epi16(w57, bcast32(s + 12)));
                acc[v][t] = _mm512_mul_ps(ndm, _mm512_cvtepi32_ps(ms));
            }
        }
        const auto chunk = [&]<int C>() __attribute__((always_inline)) {
            __m512i dl[NP][NT][kSplit], dh[NP][NT][kSplit];
            LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
                LLMWB_UNROLL for (int s = 0; s < kSplit; ++s) {
                dl[v][t][s] = _mm512_setzero_si512();
                dh[v][t][s] = _mm512_setzero_si512();
            }
            LLMWB_UNROLL for (int k = 0; k < 8; ++k) {
                __m512i lo[NP], hv[NP];
                LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                    const uint8_t* cp = g[v] + kCodes + 64 * (8 * C + k);
                    if constexpr (NP * NT == 1)
                        prefetch_ahead(cp);
                    const __m512i q = load(cp);
                    if constexpr (kQ5) {
                        const __m512i h = load(g[v] + 256 + 64 * k);
                        // (Operands first: clang's intrinsic is a macro, and a template
                        // argument list's comma would split its arguments.)
                        const __m512i b_lo = q5_bit<C, false>(h, bit4);
                        const __m512i b_hi = q5_bit<C, true>(h, bit4);
                        const __m512i q_hi = _mm512_srli_epi16(q, 4);
                        lo[v] = _mm512_ternarylogic_epi32(q, b_lo, low4, kTernSelect);
                        hv[v] = _mm512_ternarylogic_epi32(q_hi, b_hi, low4, kTernSelect);
                    } else {
                        // The high nibble in place: 16 x the code (u8 <= 240), divided out below.
                        lo[v] = _mm512_and_si512(q, low4);
                        hv[v] = _mm512_andnot_si512(low4, q);
                    }
                }
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const int8_t* x = act[t].q + 256 * b + 64 * C + 4 * k;
                    const __m512i xl = bcast32(x), xh = bcast32(x + 32);
                    LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                        dl[v][t][k % kSplit] = _mm512_dpbusd_epi32(dl[v][t][k % kSplit], lo[v], xl);
                        dh[v][t][k % kSplit] = _mm512_dpbusd_epi32(dh[v][t][k % kSplit], hv[v], xh);
                    }
                }
            }
            LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                const __m512i scv = C < 2 ? sc03[v] : sc47[v];
                const __m512 s_lo =
                    _mm512_mul_ps(dw[v], _mm512_cvtepi32_ps(dword_byte(scv, (2 * C) % 4)));
                // Q4_K's high nibbles were summed as 16 x the code: d / 16 (exact) instead.
                const __m512 dh_scale = kQ5 ? dw[v] : _mm512_mul_ps(dw[v], _mm512_set1_ps(0.0625f));
                const __m512 s_hi =
                    _mm512_mul_ps(dh_scale, _mm512_cvtepi32_ps(dword_byte(scv, (2 * C + 1) % 4)));
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    __m512i l = dl[v][t][0], h = dh[v][t][0];
                    if constexpr (kSplit == 2) {
                        l = _mm512_add_epi32(l, dl[v][t][1]);
                        h = _mm512_add_epi32(h, dh[v][t][1]);
                    }
                    acc[v][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(l), s_lo, acc[v][t]);
                    acc[v][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(h), s_hi, acc[v][t]);
                }
            }
        };
        chunk.template operator()<0>();
        chunk.template operator()<1>();
        chunk.template operator()<2>();
        chunk.template operator()<3>();
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
            y[v][t] = _mm512_fmadd_ps(acc[v][t], _mm512_set1_ps(act[t].d[b]), y[v][t]);
    }
    LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        _mm512_storeu_ps(a.y + (t0 + t) * a.ldy + (p + v) * kPanelRows, y[v][t]);
}

// ---- Q6_K --------------------------------------------------------------------------------

// The 6-bit codes of position s (0..3: columns 32s + 4k .. + 4 of a half) from the LA / LB / QH
// vectors of k-group k.
template <int S> inline __m512i q6_code(const uint8_t* v, __m512i low4, __m512i bits45) {
    const __m512i qh = load(v + 128);
    if constexpr (S == 0)
        return _mm512_ternarylogic_epi32(
            load(v), _mm512_and_si512(_mm512_slli_epi16(qh, 4), bits45), low4, kTernSelect);
    else if constexpr (S == 1)
        return _mm512_ternarylogic_epi32(
            load(v + 64), _mm512_and_si512(_mm512_slli_epi16(qh, 2), bits45), low4, kTernSelect);
    else if constexpr (S == 2)
        return _mm512_ternarylogic_epi32(_mm512_srli_epi16(load(v), 4),
                                         _mm512_and_si512(qh, bits45), low4, kTernSelect);
    else
        return _mm512_ternarylogic_epi32(_mm512_srli_epi16(load(v + 64), 4),
                                         _mm512_and_si512(_mm512_srli_epi16(qh, 2), bits45), low4,
                                         kTernSelect);
}

// y[t][16p .. 16p + 16 NP) for NT tokens from t0. Per (row, token) and group: acc = sum over
// the 16 sub-blocks (a fixed order) of (d * sc_j) * dot_j, dot_j exact in int32 (its
// accumulator starts at -32 * the activations' sum over the sub-block), then y += d_x * acc.
template <int NP, int NT> void q6k_panels(const PanelArgs& a, int64_t p, int64_t t0) {
    const int64_t nb = a.cols / 256;
    const size_t panel_bytes = kPanelRows * a.row_bytes;
    const uint8_t* panel = a.w + static_cast<size_t>(p) * panel_bytes;
    Act act[NT];
    acts_of<NT>(a, t0, act);
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i bits45 = _mm512_set1_epi8(0x30);
    __m512 y[NP][NT];
    LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
        _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* g[NP];
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) g[v] =
            panel + v * panel_bytes + static_cast<size_t>(b) * kQ6KGroupBytes;
        if constexpr (NP * NT == 1)
            LLMWB_UNROLL for (int i = 0; i < 256; i += 64) prefetch_ahead(g[0] + i);
        else
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) prefetch_act(act[t], b + 2);
        __m512 dw[NP], acc[NP][NT];
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
            dw[v] = load_f16x16(g[v] + 3328);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] = _mm512_setzero_ps();
        }
        for (int h = 0; h < 2; ++h) {
            // k-groups 0..3 hold the first sub-block of 16 of each 32 columns, 4..7 the second.
            LLMWB_UNROLL for (int half = 0; half < 2; ++half) {
                const auto sub = [&]<int S>() __attribute__((always_inline)) {
                    const int j = 8 * h + 2 * S + half;
                    __m512i dot[NP][NT];
                    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                        const __m512i init = _mm512_set1_epi32(act[t].n16[16 * b + j]);
                        LLMWB_UNROLL for (int v = 0; v < NP; ++v) dot[v][t] = init;
                    }
                    LLMWB_UNROLL for (int k = 4 * half; k < 4 * half + 4; ++k) {
                        __m512i c[NP];
                        LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                            const uint8_t* vp = g[v] + 256 + 192 * (8 * h + k);
                            if constexpr (NP * NT == 1 && S == 0)
                                LLMWB_UNROLL for (int i = 0; i < 3; ++i)
                                    prefetch_ahead(vp + 64 * i);
                            c[v] = q6_code<S>(vp, low4, bits45);
                        }
                        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                            const __m512i x =
                                bcast32(act[t].q + 256 * b + 128 * h + 32 * S + 4 * k);
                            LLMWB_UNROLL for (int v = 0; v < NP; ++v) dot[v][t] =
                                _mm512_dpbusd_epi32(dot[v][t], c[v], x);
                        }
                    }
                    LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                        const __m512 sc = _mm512_mul_ps(
                            dw[v], _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(
                                       reinterpret_cast<const __m128i*>(g[v] + 16 * j)))));
                        LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] =
                            _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[v][t]), sc, acc[v][t]);
                    }
                };
                sub.template operator()<0>();
                sub.template operator()<1>();
                sub.template operator()<2>();
                sub.template operator()<3>();
            }
        }
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
            y[v][t] = _mm512_fmadd_ps(acc[v][t], _mm512_set1_ps(act[t].d[b]), y[v][t]);
    }
    LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        _mm512_storeu_ps(a.y + (t0 + t) * a.ldy + (p + v) * kPanelRows, y[v][t]);
}

// ---- driver over the panels of one thread ----------------------------------------------------

template <template <int> class F, int NTMax, int NP>
void run_tile(const PanelArgs& a, int64_t p, int64_t t0, int nt) {
    if constexpr (NTMax >= 1) {
        if (nt == NTMax) {
            if constexpr (NP == 2)
                return F<NTMax>::run2(a, p, t0);
            else
                return F<NTMax>::run(a, p, t0);
        }
        run_tile<F, NTMax - 1, NP>(a, p, t0, nt);
    }
}

template <int NT> struct Q4KTile {
    static constexpr int kPanels = 2;
    static void run(const PanelArgs& a, int64_t p, int64_t t0) {
        q45_panels<false, 1, NT>(a, p, t0);
    }
    static void run2(const PanelArgs& a, int64_t p, int64_t t0) {
        q45_panels<false, 2, NT>(a, p, t0);
    }
};
template <int NT> struct Q5KTile {
    static constexpr int kPanels = 2;
    static void run(const PanelArgs& a, int64_t p, int64_t t0) {
        q45_panels<true, 1, NT>(a, p, t0);
    }
    static void run2(const PanelArgs& a, int64_t p, int64_t t0) {
        q45_panels<true, 2, NT>(a, p, t0);
    }
};
template <int NT> struct Q6KTile {
    static constexpr int kPanels = 2;
    static void run(const PanelArgs& a, int64_t p, int64_t t0) { q6k_panels<1, NT>(a, p, t0); }
    static void run2(const PanelArgs& a, int64_t p, int64_t t0) { q6k_panels<2, NT>(a, p, t0); }
};

// Panels [p0, p1). One token: one panel at a time (one sequential stream per thread). More:
// chunks of panels that stay in L2 while every token tile sweeps them, kPanels panels side by
// side where the chunk has them.
template <template <int> class F, int kTile>
void panels(const PanelArgs& a, int64_t p0, int64_t p1) {
    if (a.n_tokens == 1) {
        for (int64_t p = p0; p < p1; ++p)
            F<1>::run(a, p, 0);
        return;
    }
    constexpr int NP = F<1>::kPanels;
    const size_t panel_bytes = kPanelRows * a.row_bytes;
    const int64_t chunk = std::max<int64_t>(
        NP, static_cast<int64_t>(kChunkBytes / std::max<size_t>(panel_bytes, 1)) / NP * NP);
    for (int64_t c0 = p0; c0 < p1; c0 += chunk) {
        const int64_t c1 = std::min(p1, c0 + chunk);
        for (int64_t t0 = 0; t0 < a.n_tokens; t0 += kTile) {
            const int nt = static_cast<int>(std::min<int64_t>(kTile, a.n_tokens - t0));
            int64_t p = c0;
            if constexpr (NP == 2)
                for (; p + 2 <= c1; p += 2)
                    run_tile<F, kTile, 2>(a, p, t0, nt);
            for (; p < c1; ++p)
                run_tile<F, kTile, 1>(a, p, t0, nt);
        }
    }
}

const PanelKernel kQ4K{kp_bytes, prep_kp, panels<Q4KTile, kTileQ4K>};
const PanelKernel kQ5K{kp_bytes, prep_kp, panels<Q5KTile, kTileQ4K>};
// Q6_K: from kQ6KGemmMinTokens tokens, pairs of panels through the decode-once product.
void q6k_driver(const PanelArgs& a, int64_t p0, int64_t p1) {
    if (a.n_tokens >= kQ6KGemmMinTokens && p1 - p0 >= 2) {
        thread_local AlignedBuffer scratch;
        const int64_t pairs_end = p0 + (p1 - p0) / 2 * 2;
        q6k_gemm_pairs_avx512(a, p0, pairs_end, scratch.get(q6k_gemm_scratch_bytes(a.cols)));
        p0 = pairs_end;
    }
    if (p0 < p1)
        panels<Q6KTile, kTileQ6K>(a, p0, p1);
}

const PanelKernel kQ6K{kp_bytes, prep_kp, q6k_driver};

} // namespace

const PanelKernel* avx512_kq_panel_kernel(DType t) {
    switch (t) {
    case DType::Q4_K:
        return &kQ4K;
    case DType::Q5_K:
        return &kQ5K;
    case DType::Q6_K:
        return &kQ6K;
    default:
        return nullptr;
    }
}

} // namespace llmwb::kernels::detail
