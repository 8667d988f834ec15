// AVX2 matmul kernels for Q2_K, Q3_K, Q5_K and IQ4_XS, reading the weights in place and the AK
// activations (matmul_kernels.h). Each tile decodes a weight super-block
// once into eight registers of 32 codes (elements 32i .. 32i + 31) and the matching sub-block
// scales as 16-bit words, then multiplies it with up to kMaxTileTokens activation rows:
// vpmaddubsw (u8 code x s8 activation; pair sums fit int16) and vpmaddwd with the scales. Code
// offsets (Q2_K/Q5_K mins, Q3_K's 4) go through the activation sums per 16. IQ4_XS codes are
// looked up (vpshufb) as int8 values: |value| times the sign-adjusted activation (vpsignb). The
// activations are quantized with AVX2 into the same bytes as the scalar quantizer's.
#include <immintrin.h>

#include "kernels/cpu/avx2_util.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant_blocks.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

inline float h2f(uint16_t h) {
    return _cvtsh_ss(h);
}

inline __m256i load256(const void* p) {
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// vpshufb index selecting byte a into every word of the low 128 bits and byte b into every word
// of the high 128 bits: zero-extended (hi = false: [byte, 0]) or as the word's high byte
// (hi = true: [0, byte], for a sign-extending shift right by 8).
inline __m256i word_idx(int a, int b, bool hi) {
    const auto w = [hi](int j) { return static_cast<int16_t>(hi ? (j << 8) | 0x80 : 0x8000 | j); };
    return _mm256_setr_m128i(_mm_set1_epi16(w(a)), _mm_set1_epi16(w(b)));
}

// The 6-bit scales and mins of the 8 sub-blocks of a Q4_K/Q5_K block, one byte each.
inline void k4_scales_mins(const uint8_t* scales, uint64_t* sc, uint64_t* mn) {
    uint32_t u[3];
    __builtin_memcpy(u, scales, 12);
    *sc = (u[0] & 0x3F3F3F3Fu) |
          static_cast<uint64_t>((u[2] & 0x0F0F0F0Fu) | (((u[0] >> 6) & 0x03030303u) << 4)) << 32;
    *mn = (u[1] & 0x3F3F3F3Fu) |
          static_cast<uint64_t>(((u[2] >> 4) & 0x0F0F0F0Fu) | (((u[1] >> 6) & 0x03030303u) << 4))
              << 32;
}

// The 16 signed sub-block scales of a Q3_K block (sc - 32) as int8.
inline __m128i q3k_scales(const uint8_t* s) {
    uint32_t a[3];
    __builtin_memcpy(a, s, 12);
    const uint32_t m2 = 0x0F0F0F0Fu, m1 = 0x03030303u;
    const uint32_t w0 = (a[0] & m2) | ((a[2] & m1) << 4);
    const uint32_t w1 = (a[1] & m2) | (((a[2] >> 2) & m1) << 4);
    const uint32_t w2 = ((a[0] >> 4) & m2) | (((a[2] >> 4) & m1) << 4);
    const uint32_t w3 = ((a[1] >> 4) & m2) | (((a[2] >> 6) & m1) << 4);
    return _mm_sub_epi8(_mm_setr_epi32(static_cast<int>(w0), static_cast<int>(w1),
                                       static_cast<int>(w2), static_cast<int>(w3)),
                        _mm_set1_epi8(32));
}

} // namespace

// The AK activation format (the same bytes as the scalar prepare_act_ak: x * (127 / amax)
// rounded to nearest even).
void avx2_prepare_act_ak(const float* x, int64_t cols, uint8_t* dst) {
    const AKLayout L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* bsum = reinterpret_cast<int16_t*>(dst + L.bsum_off);
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    for (int64_t b = 0; b < cols / 256; ++b) {
        const float* xb = x + 256 * b;
        __m256 m = _mm256_setzero_ps();
        LLMWB_UNROLL for (int i = 0; i < 32; ++i) m =
            _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(xb + 8 * i), abs_mask));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        const float amax = _mm_cvtss_f32(h);
        const __m256 vid = _mm256_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
        d[b] = amax / 127.0f;
        for (int g = 0; g < 16; ++g) {
            const __m256i q0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xb + 16 * g), vid));
            const __m256i q1 =
                _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xb + 16 * g + 8), vid));
            __m128i s = _mm_add_epi32(
                _mm_add_epi32(_mm256_castsi256_si128(q0), _mm256_extracti128_si256(q0, 1)),
                _mm_add_epi32(_mm256_castsi256_si128(q1), _mm256_extracti128_si256(q1, 1)));
            s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
            s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
            bsum[16 * b + g] = static_cast<int16_t>(_mm_cvtsi128_si32(s));
            const __m128i w0 =
                _mm_packs_epi32(_mm256_castsi256_si128(q0), _mm256_extracti128_si256(q0, 1));
            const __m128i w1 =
                _mm_packs_epi32(_mm256_castsi256_si128(q1), _mm256_extracti128_si256(q1, 1));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 256 * b + 16 * g),
                             _mm_packs_epi16(w0, w1));
        }
    }
}

namespace {

template <int NT> struct Acts {
    const uint8_t* q[NT];
    const float* d[NT];
    const int16_t* sum[NT];
    Acts(const TileArgs& p) {
        const AKLayout L(p.cols);
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            q[t] = p.a + static_cast<size_t>(t) * p.a_stride;
            d[t] = reinterpret_cast<const float*>(q[t] + L.d_off);
            sum[t] = reinterpret_cast<const int16_t*>(q[t] + L.bsum_off);
        }
    }
};

// Sum over the block of scale(i) * maddubs(q[i], x[32 i ..]) as int32 lanes.
inline __m256i dot8(const __m256i q[8], const __m256i sc[8], const uint8_t* x) {
    __m256i s = _mm256_setzero_si256();
    LLMWB_UNROLL for (int i = 0; i < 8; ++i) {
        const __m256i xv = _mm256_load_si256(reinterpret_cast<const __m256i*>(x + 32 * i));
        s = _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_maddubs_epi16(q[i], xv), sc[i]));
    }
    return s;
}

// y = sum over tokens of d * dx * dot - dmin * dx * (mins . bsum)  (Q2_K, Q5_K)
template <int NT, class Decode>
void tile_with_mins(const TileArgs& p, size_t block_bytes, Decode decode) {
    const Acts<NT> A(p);
    const int64_t nb = p.cols / 256;
    for (int r = 0; r < p.nr; ++r) {
        const uint8_t* w = p.w + static_cast<size_t>(r) * p.w_stride;
        __m256 acc[NT], macc[NT];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[t] = macc[t] = _mm256_setzero_ps();
        for (int64_t b = 0; b < nb; ++b) {
            __m256i q[8], s[8], mins16;
            float d, dmin;
            decode(w + static_cast<size_t>(b) * block_bytes, q, s, &mins16, &d, &dmin);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m256i si = dot8(q, s, A.q[t] + 256 * b);
                const float dx = A.d[t][b];
                acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(si), _mm256_set1_ps(d * dx), acc[t]);
                const __m256i mi = _mm256_madd_epi16(load256(A.sum[t] + 16 * b), mins16);
                macc[t] =
                    _mm256_fmadd_ps(_mm256_cvtepi32_ps(mi), _mm256_set1_ps(dmin * dx), macc[t]);
            }
        }
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] =
            hsum_ps(acc[t]) - hsum_ps(macc[t]);
    }
}

// ---- Q5_K ------------------------------------------------------------------------------------

template <int NT> struct Q5_KTile {
    static void run(const TileArgs& p) {
        tile_with_mins<NT>(
            p, sizeof(BlockQ5_K),
            [](const uint8_t* wb, __m256i* q, __m256i* s, __m256i* mins16, float* d, float* dmin) {
                const auto& B = *reinterpret_cast<const BlockQ5_K*>(wb);
                const __m256i low4 = _mm256_set1_epi8(0x0F);
                const __m256i b4 = _mm256_set1_epi8(0x10);
                uint64_t sc, mn;
                k4_scales_mins(B.scales, &sc, &mn);
                const __m256i qh = load256(B.qh);
                LLMWB_UNROLL for (int c = 0; c < 4; ++c) {
                    const __m256i raw = load256(B.qs + 32 * c);
                    // fifth bit of element 32j + l: bit j of qh[l], moved to bit 4
                    const int j0 = 2 * c, j1 = 2 * c + 1;
                    const __m256i h0 =
                        j0 <= 4 ? _mm256_slli_epi16(qh, 4 - j0) : _mm256_srli_epi16(qh, j0 - 4);
                    const __m256i h1 =
                        j1 <= 4 ? _mm256_slli_epi16(qh, 4 - j1) : _mm256_srli_epi16(qh, j1 - 4);
                    q[j0] = _mm256_or_si256(_mm256_and_si256(raw, low4), _mm256_and_si256(h0, b4));
                    q[j1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(raw, 4), low4),
                                            _mm256_and_si256(h1, b4));
                }
                const __m256i scb =
                    _mm256_broadcastsi128_si256(_mm_cvtsi64_si128(static_cast<long long>(sc)));
                LLMWB_UNROLL for (int j = 0; j < 8; ++j) s[j] =
                    _mm256_shuffle_epi8(scb, word_idx(j, j, false));
                const __m128i m8 = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<long long>(mn)));
                *mins16 =
                    _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi16(m8, m8)),
                                            _mm_unpackhi_epi16(m8, m8), 1);
                *d = h2f(B.d);
                *dmin = h2f(B.dmin);
            });
    }
};

// ---- Q2_K / Q3_K -----------------------------------------------------------------------------

// q[4h + k] = elements 128h + 32k .. + 31 = (qs[32h + l] >> 2k) & 3
inline void q2_codes(const uint8_t* qs, __m256i q[8]) {
    const __m256i three = _mm256_set1_epi8(3);
    LLMWB_UNROLL for (int h = 0; h < 2; ++h) {
        const __m256i raw = load256(qs + 32 * h);
        q[4 * h + 0] = _mm256_and_si256(raw, three);
        q[4 * h + 1] = _mm256_and_si256(_mm256_srli_epi16(raw, 2), three);
        q[4 * h + 2] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), three);
        q[4 * h + 3] = _mm256_and_si256(_mm256_srli_epi16(raw, 6), three);
    }
}

template <int NT> struct Q2_KTile {
    static void run(const TileArgs& p) {
        tile_with_mins<NT>(
            p, sizeof(BlockQ2_K),
            [](const uint8_t* wb, __m256i* q, __m256i* s, __m256i* mins16, float* d, float* dmin) {
                const auto& B = *reinterpret_cast<const BlockQ2_K*>(wb);
                q2_codes(B.qs, q);
                const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(B.scales));
                const __m256i scb =
                    _mm256_broadcastsi128_si256(_mm_and_si128(sc8, _mm_set1_epi8(0x0F)));
                LLMWB_UNROLL for (int i = 0; i < 8; ++i) s[i] =
                    _mm256_shuffle_epi8(scb, word_idx(2 * i, 2 * i + 1, false));
                *mins16 = _mm256_cvtepu8_epi16(
                    _mm_and_si128(_mm_srli_epi16(sc8, 4), _mm_set1_epi8(0x0F)));
                *d = h2f(B.d);
                *dmin = h2f(B.dmin);
            });
    }
};

template <int NT> struct Q3_KTile {
    static void run(const TileArgs& p) {
        const Acts<NT> A(p);
        const int64_t nb = p.cols / 256;
        const __m256i b2 = _mm256_set1_epi8(0x04);
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockQ3_K*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m256 acc[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
            for (int64_t b = 0; b < nb; ++b) {
                const BlockQ3_K& B = w[b];
                const __m128i sc8 = q3k_scales(B.scales);
                const __m256i scb = _mm256_broadcastsi128_si256(sc8);
                __m256i q[8], s[8];
                q2_codes(B.qs, q);
                const __m256i hm = load256(B.hmask);
                LLMWB_UNROLL for (int i = 0; i < 8; ++i) {
                    // high bit of element 32i + l: bit i of hmask[l], moved to bit 2
                    const __m256i hb =
                        i <= 2 ? _mm256_slli_epi16(hm, 2 - i) : _mm256_srli_epi16(hm, i - 2);
                    q[i] = _mm256_or_si256(q[i], _mm256_and_si256(hb, b2));
                    s[i] = _mm256_srai_epi16(
                        _mm256_shuffle_epi8(scb, word_idx(2 * i, 2 * i + 1, true)), 8);
                }
                const __m256i sc16x4 = // the code offset 4 times the scales
                    _mm256_slli_epi16(_mm256_cvtepi8_epi16(sc8), 2);
                const float d = h2f(B.d);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    __m256i si = dot8(q, s, A.q[t] + 256 * b);
                    const __m256i corr = _mm256_madd_epi16(load256(A.sum[t] + 16 * b), sc16x4);
                    si = _mm256_sub_epi32(si, corr);
                    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(si), _mm256_set1_ps(d * A.d[t][b]),
                                             acc[t]);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] = hsum_ps(acc[t]);
        }
    }
};

// ---- IQ4_XS ------------------------------------------------------------------------------------

template <int NT> struct IQ4_XSTile {
    static void run(const TileArgs& p) {
        const Acts<NT> A(p);
        const int64_t nb = p.cols / 256;
        const __m128i low4 = _mm_set1_epi8(0x0F);
        const __m256i table = _mm256_broadcastsi128_si256(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Values)));
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockIQ4_XS*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m256 acc[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
            for (int64_t b = 0; b < nb; ++b) {
                const BlockIQ4_XS& B = w[b];
                __m256i v[8], q[8], s[8];
                LLMWB_UNROLL for (int j = 0; j < 8; ++j) {
                    const __m128i raw =
                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(B.qs + 16 * j));
                    const __m256i codes =
                        _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_and_si128(raw, low4)),
                                                _mm_and_si128(_mm_srli_epi16(raw, 4), low4), 1);
                    v[j] = _mm256_shuffle_epi8(table, codes);
                    q[j] = _mm256_abs_epi8(v[j]);
                    s[j] = _mm256_set1_epi16(static_cast<int16_t>(iq4xs_scale(B, j) - 32));
                }
                const float d = h2f(B.d);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const uint8_t* x = A.q[t] + 256 * b;
                    __m256i si = _mm256_setzero_si256();
                    LLMWB_UNROLL for (int j = 0; j < 8; ++j) {
                        const __m256i xv =
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(x + 32 * j));
                        si = _mm256_add_epi32(
                            si, _mm256_madd_epi16(
                                    _mm256_maddubs_epi16(q[j], _mm256_sign_epi8(xv, v[j])), s[j]));
                    }
                    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(si), _mm256_set1_ps(d * A.d[t][b]),
                                             acc[t]);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] = hsum_ps(acc[t]);
        }
    }
};

const MatmulKernel kQ2_K{ak_bytes, avx2_prepare_act_ak, run_by_nt<Q2_KTile>};
const MatmulKernel kQ3_K{ak_bytes, avx2_prepare_act_ak, run_by_nt<Q3_KTile>};
const MatmulKernel kQ5_K{ak_bytes, avx2_prepare_act_ak, run_by_nt<Q5_KTile>};
const MatmulKernel kIQ4_XS{ak_bytes, avx2_prepare_act_ak, run_by_nt<IQ4_XSTile>};

} // namespace

const MatmulKernel* avx2_kx_matmul_kernel(DType t) {
    switch (t) {
    case DType::Q2_K:
        return &kQ2_K;
    case DType::Q3_K:
        return &kQ3_K;
    case DType::Q5_K:
        return &kQ5_K;
    case DType::IQ4_XS:
        return &kIQ4_XS;
    default:
        break;
    }
    return nullptr;
}

} // namespace llmwb::kernels::detail
