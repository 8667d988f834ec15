// AVX-512 (F, BW, VL, VNNI) panel kernels of IQ4_XS, Q3_K and Q2_K (arrangement in panel_kx.h).
// Compiled with AVX-512 flags and selected only after the CPU check.
//
// One 64-byte weight vector holds the same 4 code bytes of the panel's 16 rows; its nibbles go
// through the IQ4_NL table (+ 128, u8 1..241) with vpshufb, and one vpdpbusd multiplies 16 x 4
// such codes by a token's 4 int8 activations (broadcast), one int32 lane per row. Per
// super-block, row and token: each sub-block's dot is exact in int32 (its accumulator starts at
// -128 x the activations' sum over the sub-block, which takes the table's offset back out); the
// float part runs in one fixed order: acc = 0, acc += (d * (ls_j - 32)) * dot_j for j = 0..7,
// y += d_x * acc per super-block in column order. So a (row, token) value is the same bits
// whatever the number of tokens, the tiling or the panels sharing a register block (the
// contract of matmul_kernels.h's PanelKernel). Q3_K and Q2_K (16 sub-blocks of 16): unsigned
// codes straight into vpdpbusd, Q3_K's -4 offset in the accumulator's start value, Q2_K's mins
// term exact in int32 (acc starts at -dmin * msum); see q3k_panels / q2k_panels.
//
// One token: one panel at a time, every weight line prefetched kPrefetchBytes ahead
// (non-temporal). More tokens: two panels (32 rows) x up to 4 tokens per register block, panels
// swept in chunks that stay in L2 while the token tiles go by.
#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/panel_kq.h"
#include "kernels/cpu/panel_kx.h"
#include "kernels/cpu/quant_blocks.h"

#include <algorithm>

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

constexpr int kTile = 4;
constexpr size_t kChunkBytes = 192 << 10; // panels per chunk: ~192 KiB of weights (L2)
constexpr size_t kPrefetchBytes = 4096;

// always_inline: called from an always_inline lambda (GCC 12 drops a plain inline function's
// prefetch there).
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

// ---- activations: the bytes of prepare_act_kp (KP rows, panel_kq.h) ---------------------------

void prep_kp(const float* x, int64_t cols, uint8_t* dst) {
    const KPLayout L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* s32 = reinterpret_cast<int16_t*>(dst + L.s32_off);
    auto* n16 = reinterpret_cast<int32_t*>(dst + L.n16_off);
    const __m512i ones = _mm512_set1_epi8(1);
    for (int64_t b = 0; b < cols / 256; ++b) {
        const float* xb = x + 256 * b;
        __m512 m = _mm512_setzero_ps();
        LLMWB_UNROLL for (int i = 0; i < 16; ++i) m =
            _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(xb + 16 * i)));
        const float amax = _mm512_reduce_max_ps(m);
        // The plain quantizer's steps: id = 127 / amax, q = round-half-even(x * id).
        const __m512 vid = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
        d[b] = amax / 127.0f;
        alignas(64) int32_t sums[4][16];
        for (int c = 0; c < 4; ++c) {
            // 64 codes, one 128-bit lane per 16 (a sub-block of 16); their sums by vpdpbusd
            // against ones and two in-lane folds.
            // (Inserts with literal lane numbers: at -O1, the sanitizer build's level, a loop
            // index is not folded into the intrinsic's immediate.)
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
            _mm512_store_si512(sums[c], sv);
        }
        int sum16[16];
        for (int j = 0; j < 16; ++j) {
            sum16[j] = sums[j / 4][4 * (j % 4)];
            n16[16 * b + j] = -32 * sum16[j];
        }
        for (int j = 0; j < 8; ++j)
            s32[8 * b + kKPSumPos[j]] = static_cast<int16_t>(sum16[2 * j] + sum16[2 * j + 1]);
    }
}

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

// ---- IQ4_XS ------------------------------------------------------------------------------

// y[t][16p .. 16p + 16 NP) for NT tokens from t0 (NP panels side by side: each broadcast
// activation feeds NP vpdpbusd).
template <int NP, int NT> void iq4xs_panels(const PanelArgs& a, int64_t p, int64_t t0) {
    // One panel and token: the low and high nibbles' products in two accumulators (two
    // dependency chains); integer sums, so the same bits.
    constexpr bool kOne = NP * NT == 1;
    const int64_t nb = a.cols / 256;
    const size_t panel_bytes = kPanelRows * a.row_bytes;
    const uint8_t* panel = a.w + static_cast<size_t>(p) * panel_bytes;
    Act act[NT];
    acts_of<NT>(a, t0, act);
    alignas(16) static constexpr uint8_t kTable[16] = {
        static_cast<uint8_t>(kIQ4Values[0] + 128),  static_cast<uint8_t>(kIQ4Values[1] + 128),
        static_cast<uint8_t>(kIQ4Values[2] + 128),  static_cast<uint8_t>(kIQ4Values[3] + 128),
        static_cast<uint8_t>(kIQ4Values[4] + 128),  static_cast<uint8_t>(kIQ4Values[5] + 128),
        static_cast<uint8_t>(kIQ4Values[6] + 128),  static_cast<uint8_t>(kIQ4Values[7] + 128),
        static_cast<uint8_t>(kIQ4Values[8] + 128),  static_cast<uint8_t>(kIQ4Values[9] + 128),
        static_cast<uint8_t>(kIQ4Values[10] + 128), static_cast<uint8_t>(kIQ4Values[11] + 128),
        static_cast<uint8_t>(kIQ4Values[12] + 128), static_cast<uint8_t>(kIQ4Values[13] + 128),
        static_cast<uint8_t>(kIQ4Values[14] + 128), static_cast<uint8_t>(kIQ4Values[15] + 128)};
    const __m512i table =
        _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kTable)));
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i lo4_32 = _mm512_set1_epi32(15);
    const __m512i lo2_32 = _mm512_set1_epi32(3);
    const __m512i bias32 = _mm512_set1_epi32(32);
    __m512 y[NP][NT];
    LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
        _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* g[NP];
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) g[v] =
            panel + v * panel_bytes + static_cast<size_t>(b) * kIQ4XSGroupBytes;
        if constexpr (kOne) // the two header lines of a later group
            LLMWB_UNROLL for (size_t i = 0; i < 128; i += 64) prefetch_ahead(g[0] + i);
        else // the activations of two groups later (from L3 when the batch is large)
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) prefetch_act(act[t], b + 2);
        __m512 dw[NP], acc[NP][NT];
        __m512i sh[NP], sl[NP];
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
            dw[v] = load_f16x16(g[v]);
            sh[v] = _mm512_cvtepu16_epi32(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g[v] + 32)));
            sl[v] = load(g[v] + 64);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] = _mm512_setzero_ps();
        }
        const auto sub = [&]<int J>() __attribute__((always_inline)) {
            __m512i dl[NP][NT], dh[NP][NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m512i init = _mm512_set1_epi32(-128 * act[t].s32[8 * b + kKPSumPos[J]]);
                LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                    dl[v][t] = init;
                    dh[v][t] = _mm512_setzero_si512();
                }
            }
            LLMWB_UNROLL for (int m = 0; m < 4; ++m) {
                __m512i lo[NP], hi[NP];
                LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                    const uint8_t* cp = g[v] + 128 + 64 * (4 * J + m);
                    if constexpr (kOne)
                        prefetch_ahead(cp);
                    const __m512i q = load(cp);
                    lo[v] = _mm512_shuffle_epi8(table, _mm512_and_si512(q, low4));
                    hi[v] =
                        _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(q, 4), low4));
                }
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const int8_t* x = act[t].q + 256 * b + 32 * J + 4 * m;
                    const __m512i xl = bcast32(x), xh = bcast32(x + 16);
                    LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                        dl[v][t] = _mm512_dpbusd_epi32(dl[v][t], lo[v], xl);
                        dh[v][t] = _mm512_dpbusd_epi32(dh[v][t], hi[v], xh);
                    }
                }
            }
            LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                const __m512i ls = _mm512_or_si512(
                    _mm512_and_si512(_mm512_srli_epi32(sl[v], 4 * J), lo4_32),
                    _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(sh[v], 2 * J), lo2_32),
                                      4));
                const __m512 sc =
                    _mm512_mul_ps(dw[v], _mm512_cvtepi32_ps(_mm512_sub_epi32(ls, bias32)));
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] = _mm512_fmadd_ps(
                    _mm512_cvtepi32_ps(_mm512_add_epi32(dl[v][t], dh[v][t])), sc, acc[v][t]);
            }
        };
        sub.template operator()<0>();
        sub.template operator()<1>();
        sub.template operator()<2>();
        sub.template operator()<3>();
        sub.template operator()<4>();
        sub.template operator()<5>();
        sub.template operator()<6>();
        sub.template operator()<7>();
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
            y[v][t] = _mm512_fmadd_ps(acc[v][t], _mm512_set1_ps(act[t].d[b]), y[v][t]);
    }
    LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        _mm512_storeu_ps(a.y + (t0 + t) * a.ldy + (p + v) * kPanelRows, y[v][t]);
}

// ---- Q3_K --------------------------------------------------------------------------------

// y[t][16p .. 16p + 16 NP) for NT tokens from t0. Codes u = (2-bit code | high bit << 2), 0..7;
// per (row, token) and group: dot_j = sum u x - 4 sum x (exact int32: the accumulator starts at
// a KP row's n16 / 8), acc = 0, acc += (d * (sc_j - 32)) * dot_j for j = 0..15, then
// y += d_x * acc.
template <int NP, int NT> void q3k_panels(const PanelArgs& a, int64_t p, int64_t t0) {
    constexpr bool kOne = NP * NT == 1;
    const int64_t nb = a.cols / 256;
    const size_t panel_bytes = kPanelRows * a.row_bytes;
    const uint8_t* panel = a.w + static_cast<size_t>(p) * panel_bytes;
    Act act[NT];
    acts_of<NT>(a, t0, act);
    const __m512i three = _mm512_set1_epi8(3);
    const __m512i four = _mm512_set1_epi8(4);
    const __m512i lo4_32 = _mm512_set1_epi32(15);
    const __m512i lo2_32 = _mm512_set1_epi32(3);
    const __m512i bias32 = _mm512_set1_epi32(32);
    __m512 y[NP][NT];
    LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
        _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* g[NP];
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) g[v] =
            panel + v * panel_bytes + static_cast<size_t>(b) * kQ3KGroupBytes;
        if constexpr (kOne) { // the HM and scale lines of a later group
            LLMWB_UNROLL for (size_t i = 0; i < 512; i += 64) prefetch_ahead(g[0] + i);
            LLMWB_UNROLL for (size_t i = 1536; i < 1760; i += 64) prefetch_ahead(g[0] + i);
        } else {
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) prefetch_act(act[t], b + 2);
        }
        __m512 dw[NP], acc[NP][NT];
        __m512i sa[NP], sb[NP], shi[NP];
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
            dw[v] = load_f16x16(g[v] + 1728);
            sa[v] = load(g[v] + 1536);
            sb[v] = load(g[v] + 1600);
            shi[v] = load(g[v] + 1664);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] = _mm512_setzero_ps();
        }
        // Sub-blocks j = 8h + 2k + s: columns 128h + 32k + 16s .. + 16, QS vectors 8h + 4s ..
        // + 4 (bits 2k), HM vectors 4s .. + 4 (bit 4h + k).
        const auto sub = [&]<int H, int K, int S>() __attribute__((always_inline)) {
            constexpr int J = 8 * H + 2 * K + S;
            __m512i dot[NP][NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m512i init = _mm512_set1_epi32(act[t].n16[16 * b + J] / 8);
                LLMWB_UNROLL for (int v = 0; v < NP; ++v) dot[v][t] = init;
            }
            LLMWB_UNROLL for (int m = 0; m < 4; ++m) {
                __m512i u[NP];
                LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                    const uint8_t* qp = g[v] + 512 + 64 * (8 * H + 4 * S + m);
                    if constexpr (kOne && K == 0)
                        prefetch_ahead(qp);
                    const __m512i q = load(qp), hm = load(g[v] + 64 * (4 * S + m));
                    constexpr int kBit = 4 * H + K; // hmask bit, moved to bit 2
                    const __m512i hb = kBit >= 2 ? _mm512_srli_epi16(hm, kBit - 2)
                                                 : _mm512_slli_epi16(hm, 2 - kBit);
                    u[v] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q, 2 * K), three),
                                           _mm512_and_si512(hb, four));
                }
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const __m512i x =
                        bcast32(act[t].q + 256 * b + 128 * H + 32 * K + 16 * S + 4 * m);
                    LLMWB_UNROLL for (int v = 0; v < NP; ++v) dot[v][t] =
                        _mm512_dpbusd_epi32(dot[v][t], u[v], x);
                }
            }
            LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                constexpr int jj = J % 4, qq = J / 4;
                const __m512i lo = _mm512_and_si512(
                    _mm512_srli_epi32(qq % 2 ? sb[v] : sa[v], 8 * jj + 4 * (qq / 2)), lo4_32);
                const __m512i hi =
                    _mm512_and_si512(_mm512_srli_epi32(shi[v], 8 * jj + 2 * qq), lo2_32);
                const __m512i sc =
                    _mm512_sub_epi32(_mm512_or_si512(lo, _mm512_slli_epi32(hi, 4)), bias32);
                const __m512 scf = _mm512_mul_ps(dw[v], _mm512_cvtepi32_ps(sc));
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] =
                    _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[v][t]), scf, acc[v][t]);
            }
        };
        const auto half = [&]<int H>() __attribute__((always_inline)) {
            sub.template operator()<H, 0, 0>();
            sub.template operator()<H, 0, 1>();
            sub.template operator()<H, 1, 0>();
            sub.template operator()<H, 1, 1>();
            sub.template operator()<H, 2, 0>();
            sub.template operator()<H, 2, 1>();
            sub.template operator()<H, 3, 0>();
            sub.template operator()<H, 3, 1>();
        };
        half.template operator()<0>();
        half.template operator()<1>();
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
            y[v][t] = _mm512_fmadd_ps(acc[v][t], _mm512_set1_ps(act[t].d[b]), y[v][t]);
    }
    LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        _mm512_storeu_ps(a.y + (t0 + t) * a.ldy + (p + v) * kPanelRows, y[v][t]);
}

// ---- Q2_K --------------------------------------------------------------------------------

// y[t][16p .. 16p + 16 NP) for NT tokens from t0. Codes 0..3; per (row, token) and group: the
// mins term msum = sum_j m_j * (sum of x over sub-block j) exact in int32 (the sums from a KP
// row's n16 / -32), acc = -dmin * msum, acc += (d * sc_j) * dot_j for j = 0..15 (dot_j exact
// in int32), then y += d_x * acc.
template <int NP, int NT> void q2k_panels(const PanelArgs& a, int64_t p, int64_t t0) {
    constexpr bool kOne = NP * NT == 1;
    const int64_t nb = a.cols / 256;
    const size_t panel_bytes = kPanelRows * a.row_bytes;
    const uint8_t* panel = a.w + static_cast<size_t>(p) * panel_bytes;
    Act act[NT];
    acts_of<NT>(a, t0, act);
    const __m512i three = _mm512_set1_epi8(3);
    const __m512i lo4_32 = _mm512_set1_epi32(15);
    __m512 y[NP][NT];
    LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
        _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* g[NP];
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) g[v] =
            panel + v * panel_bytes + static_cast<size_t>(b) * kQ2KGroupBytes;
        if constexpr (kOne) { // the scale and d / dmin lines of a later group
            LLMWB_UNROLL for (size_t i = 0; i < 256; i += 64) prefetch_ahead(g[0] + i);
            prefetch_ahead(g[0] + 1280);
            prefetch_ahead(g[0] + 1343);
        } else {
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) prefetch_act(act[t], b + 2);
        }
        __m512 dw[NP], acc[NP][NT];
        __m512i sv[NP][4];
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
            dw[v] = load_f16x16(g[v] + 1280);
            const __m512 ndm = _mm512_sub_ps(_mm512_setzero_ps(), load_f16x16(g[v] + 1312));
            LLMWB_UNROLL for (int i = 0; i < 4; ++i) sv[v][i] = load(g[v] + 64 * i);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                __m512i ms = _mm512_setzero_si512();
                LLMWB_UNROLL for (int j = 0; j < 16; ++j) {
                    const __m512i m =
                        _mm512_and_si512(_mm512_srli_epi32(sv[v][j / 4], 8 * (j % 4) + 4), lo4_32);
                    ms = _mm512_add_epi32(
                        ms, _mm512_mullo_epi32(m, _mm512_set1_epi32(act[t].n16[16 * b + j] / -32)));
                }
                acc[v][t] = _mm512_mul_ps(ndm, _mm512_cvtepi32_ps(ms));
            }
        }
        const auto sub = [&]<int H, int K, int S>() __attribute__((always_inline)) {
            constexpr int J = 8 * H + 2 * K + S;
            __m512i dot[NP][NT];
            LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
                dot[v][t] = _mm512_setzero_si512();
            LLMWB_UNROLL for (int m = 0; m < 4; ++m) {
                __m512i u[NP];
                LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                    const uint8_t* qp = g[v] + 256 + 64 * (8 * H + 4 * S + m);
                    if constexpr (kOne && K == 0)
                        prefetch_ahead(qp);
                    u[v] = _mm512_and_si512(_mm512_srli_epi16(load(qp), 2 * K), three);
                }
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const __m512i x =
                        bcast32(act[t].q + 256 * b + 128 * H + 32 * K + 16 * S + 4 * m);
                    LLMWB_UNROLL for (int v = 0; v < NP; ++v) dot[v][t] =
                        _mm512_dpbusd_epi32(dot[v][t], u[v], x);
                }
            }
            LLMWB_UNROLL for (int v = 0; v < NP; ++v) {
                const __m512i sc =
                    _mm512_and_si512(_mm512_srli_epi32(sv[v][J / 4], 8 * (J % 4)), lo4_32);
                const __m512 scf = _mm512_mul_ps(dw[v], _mm512_cvtepi32_ps(sc));
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] =
                    _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[v][t]), scf, acc[v][t]);
            }
        };
        const auto half = [&]<int H>() __attribute__((always_inline)) {
            sub.template operator()<H, 0, 0>();
            sub.template operator()<H, 0, 1>();
            sub.template operator()<H, 1, 0>();
            sub.template operator()<H, 1, 1>();
            sub.template operator()<H, 2, 0>();
            sub.template operator()<H, 2, 1>();
            sub.template operator()<H, 3, 0>();
            sub.template operator()<H, 3, 1>();
        };
        half.template operator()<0>();
        half.template operator()<1>();
        LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
            y[v][t] = _mm512_fmadd_ps(acc[v][t], _mm512_set1_ps(act[t].d[b]), y[v][t]);
    }
    LLMWB_UNROLL for (int v = 0; v < NP; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        _mm512_storeu_ps(a.y + (t0 + t) * a.ldy + (p + v) * kPanelRows, y[v][t]);
}

// ---- driver over the panels of one thread ----------------------------------------------------

template <int NP, int NT> struct IQ4XSTile {
    static void run(const PanelArgs& a, int64_t p, int64_t t0) { iq4xs_panels<NP, NT>(a, p, t0); }
};
template <int NP, int NT> struct Q3KTile {
    static void run(const PanelArgs& a, int64_t p, int64_t t0) { q3k_panels<NP, NT>(a, p, t0); }
};

template <int NP, int NT> struct Q2KTile {
    static void run(const PanelArgs& a, int64_t p, int64_t t0) { q2k_panels<NP, NT>(a, p, t0); }
};

template <template <int, int> class F, int NP, int NTMax>
void run_tile(const PanelArgs& a, int64_t p, int64_t t0, int nt) {
    if constexpr (NTMax >= 1) {
        if (nt == NTMax)
            return F<NP, NTMax>::run(a, p, t0);
        run_tile<F, NP, NTMax - 1>(a, p, t0, nt);
    }
}

// Panels [p0, p1). One token: one panel at a time (one sequential stream per thread). More:
// chunks of panels that stay in L2 while every token tile sweeps them, two panels side by side
// where the chunk has them.
template <template <int, int> class F> void driver(const PanelArgs& a, int64_t p0, int64_t p1) {
    if (a.n_tokens == 1) {
        for (int64_t p = p0; p < p1; ++p)
            F<1, 1>::run(a, p, 0);
        return;
    }
    const size_t panel_bytes = kPanelRows * a.row_bytes;
    const int64_t chunk = std::max<int64_t>(
        2, static_cast<int64_t>(kChunkBytes / std::max<size_t>(panel_bytes, 1)) / 2 * 2);
    for (int64_t c0 = p0; c0 < p1; c0 += chunk) {
        const int64_t c1 = std::min(p1, c0 + chunk);
        for (int64_t t0 = 0; t0 < a.n_tokens; t0 += kTile) {
            const int nt = static_cast<int>(std::min<int64_t>(kTile, a.n_tokens - t0));
            int64_t p = c0;
            for (; p + 2 <= c1; p += 2)
                run_tile<F, 2, kTile>(a, p, t0, nt);
            for (; p < c1; ++p)
                run_tile<F, 1, kTile>(a, p, t0, nt);
        }
    }
}

const PanelKernel kIQ4XS{kp_bytes, prep_kp, driver<IQ4XSTile>};
const PanelKernel kQ3K{kp_bytes, prep_kp, driver<Q3KTile>};
const PanelKernel kQ2K{kp_bytes, prep_kp, driver<Q2KTile>};

} // namespace

const PanelKernel* avx512_kx_panel_kernel(DType t) {
    switch (t) {
    case DType::IQ4_XS:
        return &kIQ4XS;
    case DType::Q3_K:
        return &kQ3K;
    case DType::Q2_K:
        return &kQ2K;
    default:
        return nullptr;
    }
}

} // namespace llmwb::kernels::detail
