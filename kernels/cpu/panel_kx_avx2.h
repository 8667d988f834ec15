// AVX2 panel kernels of IQ4_XS, Q3_K and Q2_K, included by panel_kx_avx2.cpp (plain AVX2,
// LLMWB_KX_AVX2_VNNI 0) and panel_kx_vnni_avx2.cpp (AVX-VNNI, 1): see panel_kx_avx2.cpp. Everything
// here has internal linkage (one copy per including file).
#pragma once

#include <immintrin.h>

#include "kernels/cpu/panel_kp_avx2.h"
#include "kernels/cpu/panel_kx.h"
#include "kernels/cpu/quant_blocks.h"

#ifndef LLMWB_KX_AVX2_VNNI
#error "define LLMWB_KX_AVX2_VNNI (0 or 1) before including panel_kx_avx2.h"
#endif

namespace llmwb::kernels::detail {

namespace {

constexpr size_t kPrefetchBytes = 4096;

// Q3_K and Q2_K prefetch every weight line 4 KB ahead at one token; IQ4_XS does not. Measured on
// AMD Zen 3 (plain AVX2), 151936 x 1536, one token, 2 threads, the same kernel with and without
// the prefetch in one binary, 200 alternating calls, same bits, means: IQ4_XS 10.3 -> 8.7 and
// 10.1 -> 8.3 ms without it; Q3_K 9.4 -> 10.2 and 8.9 -> 9.2 ms, Q2_K 5.7 -> 5.7 and 6.0 -> 6.2 ms
// (their lower bytes per weight leave the loop nearer its compute limit, where the early
// requests help it overlap).
// always_inline: called from an always_inline lambda (GCC 12 drops a plain inline function's
// prefetch there).
__attribute__((always_inline)) inline void prefetch_ahead(const uint8_t* p) {
    _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes), _MM_HINT_NTA);
}

// The dot step and the scale multipliers of this file's level (panel_kp_avx2.h).
constexpr bool kKxVnni = LLMWB_KX_AVX2_VNNI != 0;

// ---- IQ4_XS --------------------------------------------------------------------------------

// The 6-bit scales ls_j (0..63, biased by 32) of an IQ4_XS super-block for the 8 rows of half h:
// even = (ls_0, ls_2, ls_4, ls_6) and odd = (ls_1, ls_3, ls_5, ls_7), the bytes of each row's
// dword (low bits: nibbles of scales_l; high bits: pairs of scales_h).
inline void iq4xs_scale_bytes(const uint8_t* g, int h, __m256i* even, __m256i* odd) {
    const __m256i sl = load(g + 64 + 32 * h);
    const __m256i sh =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 32 + 16 * h)));
    // Nibble k of scales_h to byte k: bytes (b0, b0, b1, b1), the odd ones shifted down by 4.
    const __m256i dup =
        _mm256_shuffle_epi8(sh, _mm256_setr_epi32(0x01010000, 0x05050404, 0x09090808, 0x0D0D0C0C,
                                                  0x01010000, 0x05050404, 0x09090808, 0x0D0D0C0C));
    const __m256i nib =
        _mm256_or_si256(_mm256_and_si256(dup, _mm256_set1_epi16(0x000F)),
                        _mm256_and_si256(_mm256_srli_epi16(dup, 4), _mm256_set1_epi16(0x0F00)));
    const __m256i low4 = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30);
    *even = _mm256_or_si256(_mm256_and_si256(sl, low4),
                            _mm256_and_si256(_mm256_slli_epi16(nib, 4), bits45));
    *odd = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(sl, 4), low4),
                           _mm256_and_si256(_mm256_slli_epi16(nib, 2), bits45));
}

// Halves [h0, h0 + H) (8 rows each) of panel p for NT tokens from t0. Per (row, token) and
// group the sum over the 8 sub-blocks j of (ls_j - 32) x (the dot of the codes' values with the
// activations) is exact in int32 (|sum| <= 8 x 32 x 32 x 127 x 127 < 2^31), then y += d_x x (d
// x sum). The dot step multiplies |a| by b with a's sign (vpmaddubsw; pairs <= 2 x 127 x 127,
// no int16 saturation): a = the value, b = the activation; at one token a = the activation (its
// |x| shared by both halves).
template <int H, int NT> void iq4xs_halves(const PanelArgs& a, int64_t p, int h0, int64_t t0) {
    const int64_t nb = a.cols / 256;
    const uint8_t* panel = a.w + static_cast<size_t>(p) * kPanelRows * a.row_bytes;
    Act act[NT];
    acts_of<NT>(a, t0, act);
    const __m256i table =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Values)));
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    __m256 y[H][NT];
    LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
        _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* g = panel + static_cast<size_t>(b) * kIQ4XSGroupBytes;
        __m256i even[H], odd[H], sum[H][NT];
        LLMWB_UNROLL for (int v = 0; v < H; ++v) {
            iq4xs_scale_bytes(g, h0 + v, &even[v], &odd[v]);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) sum[v][t] = _mm256_setzero_si256();
        }
        const auto sub = [&]<int J>() __attribute__((always_inline)) {
            __m256i sc[H];
            LLMWB_UNROLL for (int v = 0; v < H; ++v) sc[v] =
                scale_lanes_sub<kKxVnni>(scale_lanes<kKxVnni, J / 2>(J % 2 ? odd[v] : even[v]), 32);
#if LLMWB_KX_AVX2_VNNI
            __m256i dot[H][NT];
            LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
                dot[v][t] = _mm256_setzero_si256();
#endif
            // acc += the products of |u| and s (int8 lanes) for half v and token t.
            const auto step = [&](int v, int t, __m256i u, __m256i s)
                __attribute__((always_inline)) {
#if LLMWB_KX_AVX2_VNNI
                dot[v][t] = _mm256_dpbusd_avx_epi32(dot[v][t], u, s);
#else
                __m256i r = _mm256_add_epi32(sum[v][t],
                                             _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), sc[v]));
                __asm__("" : "+x"(r)); // a chain, not a re-associated tree
                sum[v][t] = r;
#endif
            };
            LLMWB_UNROLL for (int m = 0; m < 4; ++m) {
                const uint8_t* cp = g + 128 + 64 * (4 * J + m);
                __m256i lo[H], hi[H];
                LLMWB_UNROLL for (int v = 0; v < H; ++v) {
                    const __m256i q = load(cp + 32 * (h0 + v));
                    lo[v] = _mm256_shuffle_epi8(table, _mm256_and_si256(q, low4));
                    hi[v] =
                        _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(q, 4), low4));
                }
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const int8_t* x = act[t].q + 256 * b + 32 * J + 4 * m;
                    const __m256i xl = bcast32(x), xh = bcast32(x + 16);
                    if constexpr (NT == 1) {
                        const __m256i al = _mm256_abs_epi8(xl), ah = _mm256_abs_epi8(xh);
                        LLMWB_UNROLL for (int v = 0; v < H; ++v) {
                            step(v, t, al, _mm256_sign_epi8(lo[v], xl));
                            step(v, t, ah, _mm256_sign_epi8(hi[v], xh));
                        }
                    } else {
                        LLMWB_UNROLL for (int v = 0; v < H; ++v) {
                            step(v, t, _mm256_abs_epi8(lo[v]), _mm256_sign_epi8(xl, lo[v]));
                            step(v, t, _mm256_abs_epi8(hi[v]), _mm256_sign_epi8(xh, hi[v]));
                        }
                    }
                }
            }
#if LLMWB_KX_AVX2_VNNI
            LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
                sum[v][t] = _mm256_add_epi32(sum[v][t], scaled_sum<kKxVnni>(dot[v][t], sc[v]));
#endif
        };
        sub.template operator()<0>();
        sub.template operator()<1>();
        sub.template operator()<2>();
        sub.template operator()<3>();
        sub.template operator()<4>();
        sub.template operator()<5>();
        sub.template operator()<6>();
        sub.template operator()<7>();
        LLMWB_UNROLL for (int v = 0; v < H; ++v) {
            const __m256 dw = load_f16x8(g + 16 * (h0 + v));
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
                _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(sum[v][t]), dw),
                                _mm256_set1_ps(act[t].d[b]), y[v][t]);
        }
    }
    LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        _mm256_storeu_ps(a.y + (t0 + t) * a.ldy + p * kPanelRows + 8 * (h0 + v), y[v][t]);
}

// ---- Q3_K ----------------------------------------------------------------------------------

// The dot step of unsigned codes u <= 7 (Q3_K), u <= 3 (Q2_K): AVX-VNNI's vpdpbusd, or vpmaddubsw
// pairs added in int16 (a sub-block of 16 is 4 steps: |sum| <= 4 x 2 x 7 x 127), which
// scaled_sum multiplies by the sub-block's scale pair (vpmaddwd).
// kChain: keep the plain run a chain (see panel_kq_avx2_kernels.h); Q2_K's kernel ran ~10%
// slower with it at 32 tokens and does without.
template <bool kChain = true> inline __m256i dot_step_u(__m256i acc, __m256i u, __m256i x) {
#if LLMWB_KX_AVX2_VNNI
    return _mm256_dpbusd_avx_epi32(acc, u, x);
#else
    __m256i r = _mm256_add_epi16(acc, _mm256_maddubs_epi16(u, x));
    if constexpr (kChain)
        __asm__("" : "+x"(r));
    return r;
#endif
}

// The biased 6-bit scales (0..63) of sub-blocks 4 QQ .. 4 QQ + 3 of the 8 rows of half h: byte
// jj of row r's dword is sub-block 4 QQ + jj (ggml's 12 scale bytes: the low nibbles of
// sub-blocks 0..7 and 8..15 in bytes 0..3 and 4..7, their high bit pairs in bytes 8..11).
template <int QQ> inline __m256i q3k_scale_bytes(const uint8_t* g, int h) {
    const int o = 32 * h;
    const __m256i shi = load(g + 1664 + o);
    const __m256i lo = load(g + (QQ % 2 ? 1600 : 1536) + o);
    const __m256i lo4 = QQ < 2 ? lo : _mm256_srli_epi16(lo, 4);
    __m256i hi2; // bits 2 QQ, 2 QQ + 1 of each byte at bits 4, 5
    if constexpr (QQ < 2)
        hi2 = _mm256_slli_epi16(shi, 4 - 2 * QQ);
    else if constexpr (QQ == 2)
        hi2 = shi;
    else
        hi2 = _mm256_srli_epi16(shi, 2);
    return _mm256_or_si256(_mm256_and_si256(lo4, _mm256_set1_epi8(0x0F)),
                           _mm256_and_si256(hi2, _mm256_set1_epi8(0x30)));
}

// Halves [h0, h0 + H) (8 rows each) of panel p for NT tokens from t0. Per (row, token) and
// group the whole sum is exact in int32: for each sub-block J of 16, (ls_J - 32) x (the codes'
// dot + the -4 offset, -4 x the sum of its activations from the KP row), then y += d_x x (d x
// that sum) (|sum| <= 16 x 32 x 16 x 4 x 127 < 2^24, exact in float).
template <int H, int NT> void q3k_halves(const PanelArgs& a, int64_t p, int h0, int64_t t0) {
    const int64_t nb = a.cols / 256;
    const uint8_t* panel = a.w + static_cast<size_t>(p) * kPanelRows * a.row_bytes;
    Act act[NT];
    acts_of<NT>(a, t0, act);
    const __m256i three = _mm256_set1_epi8(3);
    const __m256i four = _mm256_set1_epi8(4);
    __m256 y[H][NT];
    LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
        _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* g = panel + static_cast<size_t>(b) * kQ3KGroupBytes;
        if constexpr (NT == 1 && H == 2) {
            LLMWB_UNROLL for (size_t i = 0; i < 512; i += 64) prefetch_ahead(g + i);
            LLMWB_UNROLL for (size_t i = 1536; i < 1760; i += 64) prefetch_ahead(g + i);
        }
        __m256i sum[H][NT];
        LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
            sum[v][t] = _mm256_setzero_si256();
        const auto sub = [&]<int HH, int K, int S>(const __m256i* scale_bytes)
            __attribute__((always_inline)) {
            constexpr int J = 8 * HH + 2 * K + S;
            // The int16 pair sums start at (offset, 0) (plain) or the int32 offset (AVX-VNNI):
            // |offset| <= 4 x 16 x 127 and |pair sum| <= 4 x 2 x 7 x 127, no int16 overflow.
            __m256i s16[H][NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const int32_t off = act[t].n16[16 * b + J] / 8;
                const __m256i init = _mm256_set1_epi32(LLMWB_KX_AVX2_VNNI ? off : off & 0xFFFF);
                LLMWB_UNROLL for (int v = 0; v < H; ++v) s16[v][t] = init;
            }
            LLMWB_UNROLL for (int m = 0; m < 4; ++m) {
                const uint8_t* qp = g + 512 + 64 * (8 * HH + 4 * S + m);
                if constexpr (NT == 1 && H == 2 && K == 0)
                    prefetch_ahead(qp);
                __m256i u[H];
                LLMWB_UNROLL for (int v = 0; v < H; ++v) {
                    const __m256i q = load(qp + 32 * (h0 + v));
                    const __m256i hm = load(g + 64 * (4 * S + m) + 32 * (h0 + v));
                    constexpr int kBit = 4 * HH + K;
                    const __m256i hb = kBit >= 2 ? _mm256_srli_epi16(hm, kBit - 2)
                                                 : _mm256_slli_epi16(hm, 2 - kBit);
                    u[v] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2 * K), three),
                                           _mm256_and_si256(hb, four));
                }
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const __m256i x =
                        bcast32(act[t].q + 256 * b + 128 * HH + 32 * K + 16 * S + 4 * m);
                    LLMWB_UNROLL for (int v = 0; v < H; ++v) s16[v][t] =
                        dot_step_u(s16[v][t], u[v], x);
                }
            }
            LLMWB_UNROLL for (int v = 0; v < H; ++v) {
                const __m256i sc =
                    scale_lanes_sub<kKxVnni>(scale_lanes<kKxVnni, J % 4>(scale_bytes[v]), 32);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) sum[v][t] =
                    _mm256_add_epi32(sum[v][t], scaled_sum<kKxVnni>(s16[v][t], sc));
            }
        };
        // Sub-blocks 4 QQ .. 4 QQ + 3: (HH, K) = (QQ / 2, 2 (QQ % 2)) and (QQ / 2, 2 (QQ % 2) + 1).
        const auto quad = [&]<int QQ>() __attribute__((always_inline)) {
            __m256i sb[H];
            LLMWB_UNROLL for (int v = 0; v < H; ++v) sb[v] = q3k_scale_bytes<QQ>(g, h0 + v);
            constexpr int HH = QQ / 2, K = 2 * (QQ % 2);
            sub.template operator()<HH, K, 0>(sb);
            sub.template operator()<HH, K, 1>(sb);
            sub.template operator()<HH, K + 1, 0>(sb);
            sub.template operator()<HH, K + 1, 1>(sb);
        };
        quad.template operator()<0>();
        quad.template operator()<1>();
        quad.template operator()<2>();
        quad.template operator()<3>();
        LLMWB_UNROLL for (int v = 0; v < H; ++v) {
            const __m256 dw = load_f16x8(g + 1728 + 16 * (h0 + v));
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
                _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(sum[v][t]), dw),
                                _mm256_set1_ps(act[t].d[b]), y[v][t]);
        }
    }
    LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        _mm256_storeu_ps(a.y + (t0 + t) * a.ldy + p * kPanelRows + 8 * (h0 + v), y[v][t]);
}

// ---- Q2_K ----------------------------------------------------------------------------------

// Halves [h0, h0 + H) (8 rows each) of panel p for NT tokens from t0. Per (row, token) and
// group two sums exact in int32: sc_J x (the codes' dot) over the 16 sub-blocks J (vpmaddwd of
// the int16 pair sums by the scale pair; <= 16 x 15 x 16 x 3 x 127 < 2^24) and m_J x (the sum
// of the sub-block's activations, from the KP row) (vpmaddwd of (m_J, m_J+1) by (S_J, S_J+1)),
// then y += d_x x (d x sums - dmin x mins).
template <int H, int NT> void q2k_halves(const PanelArgs& a, int64_t p, int h0, int64_t t0) {
    const int64_t nb = a.cols / 256;
    const uint8_t* panel = a.w + static_cast<size_t>(p) * kPanelRows * a.row_bytes;
    Act act[NT];
    acts_of<NT>(a, t0, act);
    const __m256i three = _mm256_set1_epi8(3);
    // Bytes 2k, 2k + 1 of every dword to the low bytes of its words (the mins' pairs).
    const auto pair_sel = [](int k) {
        const int w = (2 * k) | static_cast<int>(0x80008000) | (2 * k + 1) << 16;
        return _mm256_setr_epi32(w, w + 0x40004, w + 0x80008, w + 0xC000C, w, w + 0x40004,
                                 w + 0x80008, w + 0xC000C);
    };
    __m256 y[H][NT];
    LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
        _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* g = panel + static_cast<size_t>(b) * kQ2KGroupBytes;
        if constexpr (NT == 1 && H == 2) {
            LLMWB_UNROLL for (size_t i = 0; i < 256; i += 64) prefetch_ahead(g + i);
            prefetch_ahead(g + 1280);
            prefetch_ahead(g + 1343);
        }
        __m256i mins[H][NT], sum[H][NT];
        LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            mins[v][t] = _mm256_setzero_si256();
            sum[v][t] = _mm256_setzero_si256();
        }
        LLMWB_UNROLL for (int j = 0; j < 16; j += 2) {
            __m256i mp[H]; // (m_j, m_j+1) of each row, int16
            LLMWB_UNROLL for (int v = 0; v < H; ++v) mp[v] = _mm256_srli_epi16(
                _mm256_shuffle_epi8(load(g + 64 * (j / 4) + 32 * (h0 + v)), pair_sel(j % 4 / 2)),
                4);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const int32_t* n = act[t].n16 + 16 * b + j; // -32 x the sums, |sum| <= 16 x 127
                const uint32_t sp = static_cast<uint16_t>(n[0] / -32) |
                                    static_cast<uint32_t>(static_cast<uint16_t>(n[1] / -32)) << 16;
                const __m256i s = _mm256_set1_epi32(static_cast<int32_t>(sp));
                LLMWB_UNROLL for (int v = 0; v < H; ++v) mins[v][t] =
                    _mm256_add_epi32(mins[v][t], _mm256_madd_epi16(mp[v], s));
            }
        }
        const auto sub = [&]<int HH, int K, int S>() __attribute__((always_inline)) {
            constexpr int J = 8 * HH + 2 * K + S;
            __m256i s16[H][NT];
            LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
                s16[v][t] = _mm256_setzero_si256();
            LLMWB_UNROLL for (int m = 0; m < 4; ++m) {
                const uint8_t* qp = g + 256 + 64 * (8 * HH + 4 * S + m);
                if constexpr (NT == 1 && H == 2 && K == 0)
                    prefetch_ahead(qp);
                __m256i u[H];
                LLMWB_UNROLL for (int v = 0; v < H; ++v) u[v] =
                    _mm256_and_si256(_mm256_srli_epi16(load(qp + 32 * (h0 + v)), 2 * K), three);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const __m256i x =
                        bcast32(act[t].q + 256 * b + 128 * HH + 32 * K + 16 * S + 4 * m);
                    LLMWB_UNROLL for (int v = 0; v < H; ++v) s16[v][t] =
                        dot_step_u<false>(s16[v][t], u[v], x);
                }
            }
            LLMWB_UNROLL for (int v = 0; v < H; ++v) {
                const __m256i sc = _mm256_and_si256(
                    scale_lanes<kKxVnni, J % 4>(load(g + 64 * (J / 4) + 32 * (h0 + v))),
                    _mm256_set1_epi8(0x0F));
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) sum[v][t] =
                    _mm256_add_epi32(sum[v][t], scaled_sum<kKxVnni>(s16[v][t], sc));
            }
        };
        const auto half = [&]<int HH>() __attribute__((always_inline)) {
            sub.template operator()<HH, 0, 0>();
            sub.template operator()<HH, 0, 1>();
            sub.template operator()<HH, 1, 0>();
            sub.template operator()<HH, 1, 1>();
            sub.template operator()<HH, 2, 0>();
            sub.template operator()<HH, 2, 1>();
            sub.template operator()<HH, 3, 0>();
            sub.template operator()<HH, 3, 1>();
        };
        half.template operator()<0>();
        half.template operator()<1>();
        LLMWB_UNROLL for (int v = 0; v < H; ++v) {
            const __m256 dw = load_f16x8(g + 1280 + 16 * (h0 + v));
            const __m256 dm = load_f16x8(g + 1312 + 16 * (h0 + v));
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m256 acc =
                    _mm256_fmsub_ps(_mm256_cvtepi32_ps(sum[v][t]), dw,
                                    _mm256_mul_ps(_mm256_cvtepi32_ps(mins[v][t]), dm));
                y[v][t] = _mm256_fmadd_ps(acc, _mm256_set1_ps(act[t].d[b]), y[v][t]);
            }
        }
    }
    LLMWB_UNROLL for (int v = 0; v < H; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        _mm256_storeu_ps(a.y + (t0 + t) * a.ldy + p * kPanelRows + 8 * (h0 + v), y[v][t]);
}

// ---- driver --------------------------------------------------------------------------------

template <int H, int NT> struct IQ4XSTile {
    static void run(const PanelArgs& a, int64_t p, int h0, int64_t t0) {
        iq4xs_halves<H, NT>(a, p, h0, t0);
    }
};
template <int H, int NT> struct Q3KTile {
    static void run(const PanelArgs& a, int64_t p, int h0, int64_t t0) {
        q3k_halves<H, NT>(a, p, h0, t0);
    }
};
template <int H, int NT> struct Q2KTile {
    static void run(const PanelArgs& a, int64_t p, int h0, int64_t t0) {
        q2k_halves<H, NT>(a, p, h0, t0);
    }
};

// Tokens per tile at 2+ tokens (panel_avx2_common.h). Plain AVX2, measured on AMD Zen 3 (2
// threads, tiles of 2 and of 3 / 4 in one binary, alternating, same bits), best time per call:
// IQ4_XS (4) 4864 x 1536 at 32 tokens 2.53 -> 2.30 ms, 1536 x 8960 at 512 tokens 86.5 -> 78.7 ms;
// Q3_K (4) 2.85 -> 2.53 ms and 97.5 -> 73.4 ms (8 tokens 1.59 -> 1.26 ms). Tiles of 3 gained about
// half as much. Q2_K keeps 2: at 4 tokens it spilled (440 stack references against 117) and ran
// slower; with its sums exact in int32 (fewer vectors live) tiles of 3 and 4 still gained nothing
// (4864 x 1536 at 32 tokens 2.40 -> 2.39 ms, 2.19 -> 2.56 ms).
// AVX-VNNI keeps 2 (not measured on a CPU that has it).
constexpr int kTileIQ4XS = LLMWB_KX_AVX2_VNNI ? 2 : 4;
constexpr int kTileQ3K = LLMWB_KX_AVX2_VNNI ? 2 : 4;
constexpr int kTileQ2K = 2;

const PanelKernel kIQ4XS{kp_bytes, prep_kp, sweep_kp_panels<IQ4XSTile, kTileIQ4XS>};
const PanelKernel kQ3K{kp_bytes, prep_kp, sweep_kp_panels<Q3KTile, kTileQ3K>};
const PanelKernel kQ2K{kp_bytes, prep_kp, sweep_kp_panels<Q2KTile, kTileQ2K>};

inline const PanelKernel* kernel_of(DType t) {
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

} // namespace

} // namespace llmwb::kernels::detail
