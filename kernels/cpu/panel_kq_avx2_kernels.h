// AVX2 panel kernels of Q4_K, Q5_K and Q6_K, included by panel_kq_avx2.cpp (plain AVX2,
// LLMWB_KQ_AVX2_VNNI 0) and panel_kq_avxvnni_avx2.cpp (AVX-VNNI, 1): see panel_kq_avx2.cpp.
// Everything here has internal linkage (one copy per including file).
#pragma once

#include <immintrin.h>

#include "kernels/cpu/panel_kp_avx2.h"

#ifndef LLMWB_KQ_AVX2_VNNI
#error "define LLMWB_KQ_AVX2_VNNI (0 or 1) before including panel_kq_avx2_kernels.h"
#endif

namespace llmwb::kernels::detail {

namespace {

// No software prefetch: a panel is one sequential stream per thread, which the hardware
// prefetchers follow. The AVX-512 kernels' prefetch of every weight line 4 KB ahead (NTA) made
// these kernels slower where it was measured (AMD Zen 3, plain AVX2, one token, matrices streamed
// from memory, the same kernel with and without it in one binary, GB/s of weights: Q4_K 19.1 vs
// 22.5 at 151936 x 1536, Q5_K 16.0 vs 19.4 and Q6_K 16.2 vs 18.4 at 8960 x 1536 / 1536 x 8960,
// means of 60 alternating calls); distances of 2 to 32 KB and the T0 hint did no better than none.

// The dot step: AVX-VNNI accumulates u8 x s8 products in int32 directly (vpdpbusd); plain AVX2
// adds vpmaddubsw pairs into int16 sums that become int32 before they could overflow: vpmaddwd
// by the sub-block's scale pair (Q4_K, Q5_K: scaled_sum, panel_kp_avx2.h) or by ones (widen(),
// Q6_K). Both give the same integers, so the same bits.
// The empty asm keeps each plain run of sums a chain: GCC 12 otherwise re-associates a run of
// integer adds into a tree whose products are all live at once and spills them (a store and a
// load per product; objdump: 139 stack moves per 16 x 256 Q4_K weights). Q4_K 1.3-1.4x, Q5_K
// 1.1x at 1-512 tokens; Q6_K's runs of two gain nothing (kChain false).
template <bool kVnni, bool kChain = true>
inline __m256i dot_step(__m256i acc, __m256i codes, __m256i x) {
    if constexpr (kVnni) {
        return _mm256_dpbusd_avx_epi32(acc, codes, x);
    } else {
        __m256i r = _mm256_add_epi16(acc, _mm256_maddubs_epi16(codes, x));
        if constexpr (kChain)
            __asm__("" : "+x"(r));
        return r;
    }
}
template <bool kVnni> inline __m256i widen(__m256i s) {
    if constexpr (kVnni)
        return s;
    else
        return _mm256_madd_epi16(s, _mm256_set1_epi16(1));
}

// (a & 0x0F) | (b & 0x30 or 0x10 already applied): the low nibble of a with b's high bits.
inline __m256i merge(__m256i a, __m256i b, __m256i low4) {
    return _mm256_or_si256(_mm256_and_si256(a, low4), b);
}

template <int S> inline __m256i shift16(__m256i v) {
    if constexpr (S > 0)
        return _mm256_slli_epi16(v, S);
    else if constexpr (S < 0)
        return _mm256_srli_epi16(v, -S);
    else
        return v;
}

// ---- Q4_K and Q5_K -------------------------------------------------------------------------

// Halves [h0, h0 + H) (8 rows each) of panel p for NT tokens from t0. Per (row, token) and
// group two sums exact in int32: sc_j x (the codes' dot) over the 8 sub-blocks j of 32 (<= 8 x
// 63 x 32 x 31 x 127 < 2^31) and the mins m_j x (the sub-block's activation sum, from the KP
// row), then y += d_x x (d x sums - dmin x mins).
template <bool kVnni, bool kQ5, int H, int NT>
void q45_halves(const PanelArgs& a, int64_t p, int h0, int64_t t0) {
    constexpr size_t kGroup = kQ5 ? kQ5KGroupBytes : kQ4KGroupBytes;
    constexpr size_t kCodes = kQ5 ? 768 : 256;
    constexpr int kRun = kQ5 && !kVnni ? 4 : 8; // k-groups per int16 accumulator
    const int64_t nb = a.cols / 256;
    const uint8_t* panel = a.w + static_cast<size_t>(p) * kPanelRows * a.row_bytes;
    Act act[NT];
    acts_of<NT>(a, t0, act);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i bits45 = _mm256_set1_epi8(0x30);
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    const __m256i words = _mm256_set1_epi32(0x00FF00FF);
    __m256 y[H][NT];
    LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
        _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* g = panel + static_cast<size_t>(b) * kGroup;
        __m256 acc[H][NT];
        __m256i sc03[H], sc47[H], sum[H][NT];
        LLMWB_UNROLL for (int v = 0; v < H; ++v) {
            const int o = 32 * (h0 + v); // this half's bytes in a [16 rows][4 bytes] vector
            const __m256i sc_lo = load(g + 64 + o), mn_lo = load(g + 128 + o),
                          hi = load(g + 192 + o);
            sc03[v] = merge(sc_lo, _mm256_and_si256(_mm256_slli_epi16(hi, 4), bits45), low4);
            sc47[v] = merge(_mm256_srli_epi16(sc_lo, 4),
                            _mm256_and_si256(_mm256_slli_epi16(hi, 2), bits45), low4);
            const __m256i m03 = merge(mn_lo, _mm256_and_si256(hi, bits45), low4);
            const __m256i m47 = merge(_mm256_srli_epi16(mn_lo, 4),
                                      _mm256_and_si256(_mm256_srli_epi16(hi, 2), bits45), low4);
            const __m256i w02 = _mm256_and_si256(m03, words);
            const __m256i w13 = _mm256_and_si256(_mm256_srli_epi32(m03, 8), words);
            const __m256i w46 = _mm256_and_si256(m47, words);
            const __m256i w57 = _mm256_and_si256(_mm256_srli_epi32(m47, 8), words);
            const __m256 ndm =
                _mm256_sub_ps(_mm256_setzero_ps(), load_f16x8(g + 32 + 16 * (h0 + v)));
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const int16_t* s = act[t].s32 + 8 * b;
                __m256i ms = _mm256_madd_epi16(w02, bcast32(s));
                ms = _mm256_add_epi32(ms, _mm256_madd_epi16(w13, bcast32(s + 2)));
                ms = _mm256_add_epi32(ms, _mm256_madd_epi16(w46, bcast32(s + 4)));
                ms = _mm256_add_epi32(ms, _mm256_madd_epi16(w57, bcast32(s + 6)));
                acc[v][t] = _mm256_mul_ps(ndm, _mm256_cvtepi32_ps(ms));
                sum[v][t] = _mm256_setzero_si256();
            }
        }
        const auto chunk = [&]<int C>() __attribute__((always_inline)) {
            // The scales of sub-blocks 2C and 2C + 1 as multipliers (panel_kp_avx2.h).
            __m256i s_lo[H], s_hi[H];
            LLMWB_UNROLL for (int v = 0; v < H; ++v) {
                s_lo[v] = scale_lanes<kVnni, (2 * C) % 4>(C < 2 ? sc03[v] : sc47[v]);
                s_hi[v] = scale_lanes<kVnni, (2 * C + 1) % 4>(C < 2 ? sc03[v] : sc47[v]);
            }
            [[maybe_unused]] __m256i dl[H][NT], dh[H][NT];
            if constexpr (kVnni) {
                LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    dl[v][t] = _mm256_setzero_si256();
                    dh[v][t] = _mm256_setzero_si256();
                }
            }
            LLMWB_UNROLL for (int r = 0; r < 8 / kRun; ++r) {
                __m256i sl[H][NT], sh[H][NT];
                LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    sl[v][t] = _mm256_setzero_si256();
                    sh[v][t] = _mm256_setzero_si256();
                }
                LLMWB_UNROLL for (int k = kRun * r; k < kRun * (r + 1); ++k) {
                    LLMWB_UNROLL for (int v = 0; v < H; ++v) {
                        const uint8_t* cp = g + kCodes + 64 * (8 * C + k) + 32 * (h0 + v);
                        const __m256i q = load(cp);
                        __m256i lo, hv;
                        if constexpr (kQ5) {
                            const __m256i h = load(g + 256 + 64 * k + 32 * (h0 + v));
                            lo = merge(q, _mm256_and_si256(shift16<4 - 2 * C>(h), bit4), low4);
                            hv = merge(_mm256_srli_epi16(q, 4),
                                       _mm256_and_si256(shift16<3 - 2 * C>(h), bit4), low4);
                        } else {
                            lo = _mm256_and_si256(q, low4);
                            hv = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
                        }
                        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                            const int8_t* x = act[t].q + 256 * b + 64 * C + 4 * k;
                            sl[v][t] = dot_step<kVnni>(sl[v][t], lo, bcast32(x));
                            sh[v][t] = dot_step<kVnni>(sh[v][t], hv, bcast32(x + 32));
                        }
                    }
                }
                LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    if constexpr (kVnni) {
                        dl[v][t] = _mm256_add_epi32(dl[v][t], sl[v][t]);
                        dh[v][t] = _mm256_add_epi32(dh[v][t], sh[v][t]);
                    } else { // the runs times their scales
                        sum[v][t] = _mm256_add_epi32(
                            sum[v][t], _mm256_add_epi32(_mm256_madd_epi16(sl[v][t], s_lo[v]),
                                                        _mm256_madd_epi16(sh[v][t], s_hi[v])));
                    }
                }
            }
            if constexpr (kVnni) {
                LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
                    sum[v][t] = _mm256_add_epi32(
                        sum[v][t], _mm256_add_epi32(_mm256_mullo_epi32(dl[v][t], s_lo[v]),
                                                    _mm256_mullo_epi32(dh[v][t], s_hi[v])));
            }
        };
        chunk.template operator()<0>();
        chunk.template operator()<1>();
        chunk.template operator()<2>();
        chunk.template operator()<3>();
        LLMWB_UNROLL for (int v = 0; v < H; ++v) {
            const __m256 dw = load_f16x8(g + 16 * (h0 + v));
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
                _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[v][t]), dw, acc[v][t]),
                                _mm256_set1_ps(act[t].d[b]), y[v][t]);
        }
    }
    LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        _mm256_storeu_ps(a.y + (t0 + t) * a.ldy + p * kPanelRows + 8 * (h0 + v), y[v][t]);
}

// ---- Q6_K ----------------------------------------------------------------------------------

template <int S> inline __m256i q6_code(const uint8_t* v, __m256i low4, __m256i bits45) {
    const __m256i qh = load(v + 128);
    if constexpr (S == 0)
        return merge(load(v), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45), low4);
    else if constexpr (S == 1)
        return merge(load(v + 64), _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45), low4);
    else if constexpr (S == 2)
        return merge(_mm256_srli_epi16(load(v), 4), _mm256_and_si256(qh, bits45), low4);
    else
        return merge(_mm256_srli_epi16(load(v + 64), 4),
                     _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45), low4);
}

template <bool kVnni, int H, int NT>
void q6k_halves(const PanelArgs& a, int64_t p, int h0, int64_t t0) {
    const int64_t nb = a.cols / 256;
    const uint8_t* panel = a.w + static_cast<size_t>(p) * kPanelRows * a.row_bytes;
    Act act[NT];
    acts_of<NT>(a, t0, act);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i bits45 = _mm256_set1_epi8(0x30);
    __m256 y[H][NT];
    LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
        _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* g = panel + static_cast<size_t>(b) * kQ6KGroupBytes;
        __m256 dw[H], acc[H][NT];
        LLMWB_UNROLL for (int v = 0; v < H; ++v) {
            dw[v] = load_f16x8(g + 3328 + 16 * (h0 + v));
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] = _mm256_setzero_ps();
        }
        for (int h = 0; h < 2; ++h) {
            LLMWB_UNROLL for (int half = 0; half < 2; ++half) {
                const auto sub = [&]<int S>() __attribute__((always_inline)) {
                    const int j = 8 * h + 2 * S + half;
                    __m256i dot[H][NT];
                    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                        const __m256i init = _mm256_set1_epi32(act[t].n16[16 * b + j]);
                        LLMWB_UNROLL for (int v = 0; v < H; ++v) dot[v][t] = init;
                    }
                    // Plain: 2 k-groups per int16 sum. VNNI: one per vpdpbusd from zero, added to
                    // the dot (no chain of dependent vpdpbusd: its latency bound the loop).
                    constexpr int kRun = kVnni ? 1 : 2;
                    LLMWB_UNROLL for (int r = 0; r < 4 / kRun; ++r) {
                        __m256i s16[H][NT];
                        LLMWB_UNROLL for (int v = 0; v < H; ++v)
                            LLMWB_UNROLL for (int t = 0; t < NT; ++t) s16[v][t] =
                                _mm256_setzero_si256();
                        LLMWB_UNROLL for (int k = 4 * half + kRun * r;
                                          k < 4 * half + kRun * (r + 1); ++k) {
                            LLMWB_UNROLL for (int v = 0; v < H; ++v) {
                                const uint8_t* vp = g + 256 + 192 * (8 * h + k) + 32 * (h0 + v);
                                const __m256i c = q6_code<S>(vp, low4, bits45);
                                LLMWB_UNROLL for (int t = 0; t < NT; ++t) s16[v][t] =
                                    dot_step<kVnni, false>(
                                        s16[v][t], c,
                                        bcast32(act[t].q + 256 * b + 128 * h + 32 * S + 4 * k));
                            }
                        }
                        LLMWB_UNROLL for (int v = 0; v < H; ++v)
                            LLMWB_UNROLL for (int t = 0; t < NT; ++t) dot[v][t] =
                                _mm256_add_epi32(dot[v][t], widen<kVnni>(s16[v][t]));
                    }
                    LLMWB_UNROLL for (int v = 0; v < H; ++v) {
                        const __m256 sc = _mm256_mul_ps(
                            dw[v],
                            _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(
                                reinterpret_cast<const __m128i*>(g + 16 * j + 8 * (h0 + v))))));
                        LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] =
                            _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[v][t]), sc, acc[v][t]);
                    }
                };
                sub.template operator()<0>();
                sub.template operator()<1>();
                sub.template operator()<2>();
                sub.template operator()<3>();
            }
        }
        LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
            _mm256_fmadd_ps(acc[v][t], _mm256_set1_ps(act[t].d[b]), y[v][t]);
    }
    LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        _mm256_storeu_ps(a.y + (t0 + t) * a.ldy + p * kPanelRows + 8 * (h0 + v), y[v][t]);
}

// ---- driver --------------------------------------------------------------------------------

template <int H, int NT> struct Q4KTile {
    static void run(const PanelArgs& a, int64_t p, int h0, int64_t t0) {
        q45_halves<LLMWB_KQ_AVX2_VNNI != 0, false, H, NT>(a, p, h0, t0);
    }
};
template <int H, int NT> struct Q5KTile {
    static void run(const PanelArgs& a, int64_t p, int h0, int64_t t0) {
        q45_halves<LLMWB_KQ_AVX2_VNNI != 0, true, H, NT>(a, p, h0, t0);
    }
};
template <int H, int NT> struct Q6KTile {
    static void run(const PanelArgs& a, int64_t p, int h0, int64_t t0) {
        q6k_halves<LLMWB_KQ_AVX2_VNNI != 0, H, NT>(a, p, h0, t0);
    }
};

// Tokens per tile at 2+ tokens (panel_avx2_common.h). Plain AVX2, measured on AMD Zen 3 (2
// threads, old and new driver in one binary, alternating, same bits), time per call against tiles
// of 2: Q4_K (4 tokens) 4864 x 1536 at 32 tokens 1.66 -> 1.31 ms, 1536 x 8960 at 512 tokens 48.5
// -> 42.3 ms; Q6_K (4) 2.75 -> 2.43 ms and 80.7 -> 69.6 ms. Q5_K (4): while each sub-block's
// dot went through a float step its int16 runs and high bits spilled at 4 tokens (7% slower than
// 2, so it took 3); with the sums exact in int32, 4 against 3: 256 x 1536 at 40 tokens, one
// thread, 0.27 -> 0.23 ms (1.12-1.16x), 4864 x 1536 at 32 tokens 2.60 -> 2.34 and 2.19 -> 1.97
// ms. AVX-VNNI (no int16 runs, other register needs) keeps 2: not measured on a CPU that has it.
constexpr int kTileQ4K = LLMWB_KQ_AVX2_VNNI ? 2 : 4;
constexpr int kTileQ5K = LLMWB_KQ_AVX2_VNNI ? 2 : 4;
constexpr int kTileQ6K = LLMWB_KQ_AVX2_VNNI ? 2 : 4;

const PanelKernel kQ4K{kp_bytes, prep_kp, sweep_kp_panels<Q4KTile, kTileQ4K>};
const PanelKernel kQ5K{kp_bytes, prep_kp, sweep_kp_panels<Q5KTile, kTileQ5K>};
const PanelKernel kQ6K{kp_bytes, prep_kp, sweep_kp_panels<Q6KTile, kTileQ6K>};

inline const PanelKernel* kernel_of(DType t) {
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

} // namespace

} // namespace llmwb::kernels::detail
