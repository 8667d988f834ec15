// AVX-512 (F, BW, VL, VNNI) matmul kernels for Q2_K, Q3_K, Q5_K and IQ4_XS, reading the weights
// in place and the AK activations (matmul_kernels.h; natural element order, except for IQ4_XS: see
// its tile). Each tile decodes a weight super-block once into four registers of 64 codes plus the
// matching sub-block scales as 16-bit words, then multiplies it with up to kMaxTileTokens
// activation rows: vpmaddubsw (u8 code x s8 activation, pair sums fit int16) and vpdpwssd with
// the scales. Code offsets (Q2_K/Q5_K mins, Q3_K's 4) go through the activation sums per 16.
// IQ4_XS codes are looked up (vpshufb) as |value| <= 127 (u8) times the activation with the
// value's sign applied (codes 0..7 are the negative ones), which keeps vpmaddubsw exact. Every
// token's result is computed by the same instructions whatever the tile's token count.
#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant_blocks.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

inline float h2f(uint16_t h) {
    return _cvtsh_ss(h);
}

// ---- activations (same values as the scalar prepare_act_ak) --------------------------------

// Activation orders within a 256-block, matching how a kernel's code registers come out of the
// weight bytes (every 64-byte register = four 128-bit lanes of 16 elements each):
//   kNatural: natural order.
//   kIQ4: register 2z + half holds, in lane L, half `half` of sub-block 4z + L (32 elements each).
//   kQ2: register k (codes at bits 2k of qs) holds elements 32k .. 32k + 31 in its low 256 bits
//        and 128 + 32k .. in its high 256 bits.
enum class Order { kNatural, kIQ4, kQ2 };

// Byte position of the 16 activations of group g (elements 16g ..).
template <Order O> constexpr int group_pos(int g) {
    if constexpr (O == Order::kIQ4) {
        const int j = g / 2, half = g % 2;
        return 64 * (2 * (j / 4) + half) + 16 * (j % 4);
    } else if constexpr (O == Order::kQ2) {
        return 64 * ((g % 8) / 2) + 32 * (g / 8) + 16 * (g % 2);
    }
    return 16 * g;
}

template <Order O> void prep_ak(const float* x, int64_t cols, uint8_t* dst) {
    const AKLayout L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* bsum = reinterpret_cast<int16_t*>(dst + L.bsum_off);
    for (int64_t b = 0; b < cols / 256; ++b) {
        const float* xb = x + 256 * b;
        __m512 m = _mm512_setzero_ps();
        LLMWB_UNROLL for (int i = 0; i < 16; ++i) m =
            _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(xb + 16 * i)));
        const float amax = _mm512_reduce_max_ps(m);
        const __m512 vid = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
        d[b] = amax / 127.0f;
        for (int g = 0; g < 16; ++g) {
            const __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xb + 16 * g), vid));
            bsum[16 * b + g] = static_cast<int16_t>(_mm512_reduce_add_epi32(q));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 256 * b + group_pos<O>(g)),
                             _mm512_cvtsepi32_epi8(q));
        }
    }
}

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

// Word-index vectors for vpermw: per-32 scales (word j in the low half, j + 1 in the high half)
// and per-16 scales (words k .. k + 3, each over 8 words).
inline __m512i idx_per32(int j) {
    return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(j)),
                              _mm256_set1_epi16(static_cast<int16_t>(j + 1)), 1);
}
inline __m512i idx_per16(int k) {
    return _mm512_set_epi16(k + 3, k + 3, k + 3, k + 3, k + 3, k + 3, k + 3, k + 3, k + 2, k + 2,
                            k + 2, k + 2, k + 2, k + 2, k + 2, k + 2, k + 1, k + 1, k + 1, k + 1,
                            k + 1, k + 1, k + 1, k + 1, k, k, k, k, k, k, k, k);
}
// Byte vector: a in the low 256 bits, b in the high 256 bits.
inline __m512i halves_epi8(int a, int b) {
    return _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(a)),
                              _mm256_set1_epi8(static_cast<char>(b)), 1);
}
inline __m512i halves_epi16(int a, int b) {
    return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(a)),
                              _mm256_set1_epi16(static_cast<int16_t>(b)), 1);
}

// Sum over the block of scale(i) * maddubs(q[i], x[64 i ..]) as int32 lanes.
inline __m512i dot4(const __m512i q[4], const __m512i sc[4], const uint8_t* x) {
    __m512i s = _mm512_madd_epi16(_mm512_maddubs_epi16(q[0], _mm512_load_si512(x)), sc[0]);
    s = _mm512_dpwssd_epi32(s, _mm512_maddubs_epi16(q[1], _mm512_load_si512(x + 64)), sc[1]);
    s = _mm512_dpwssd_epi32(s, _mm512_maddubs_epi16(q[2], _mm512_load_si512(x + 128)), sc[2]);
    return _mm512_dpwssd_epi32(s, _mm512_maddubs_epi16(q[3], _mm512_load_si512(x + 192)), sc[3]);
}

inline __m256i load256(const void* p) {
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// ---- Q5_K ------------------------------------------------------------------------------------

template <int NT> struct Q5_KTile {
    static void run(const TileArgs& p) {
        const Acts<NT> A(p);
        const int64_t nb = p.cols / 256;
        const __m512i low4 = _mm512_set1_epi8(0x0F), b4 = _mm512_set1_epi8(0x10);
        const __m512i cnt = halves_epi16(0, 4);
        __m512i idx[4], hsel[4];
        LLMWB_UNROLL for (int c = 0; c < 4; ++c) {
            idx[c] = idx_per32(2 * c);
            hsel[c] = halves_epi8(1 << (2 * c), 1 << (2 * c + 1));
        }
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockQ5_K*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m512 acc[NT];
            __m256 macc[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                acc[t] = _mm512_setzero_ps();
                macc[t] = _mm256_setzero_ps();
            }
            for (int64_t b = 0; b < nb; ++b) {
                const BlockQ5_K& B = w[b];
                uint32_t u[3];
                __builtin_memcpy(u, B.scales, 12);
                const uint64_t sc =
                    (u[0] & 0x3F3F3F3Fu) |
                    static_cast<uint64_t>((u[2] & 0x0F0F0F0Fu) | (((u[0] >> 6) & 0x03030303u) << 4))
                        << 32;
                const uint64_t mn =
                    (u[1] & 0x3F3F3F3Fu) | static_cast<uint64_t>(((u[2] >> 4) & 0x0F0F0F0Fu) |
                                                                 (((u[1] >> 6) & 0x03030303u) << 4))
                                               << 32;
                const __m512i scv = _mm512_cvtepu8_epi16(
                    _mm256_zextsi128_si256(_mm_cvtsi64_si128(static_cast<long long>(sc))));
                const __m128i m8 = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<long long>(mn)));
                const __m256i mins16 =
                    _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi16(m8, m8)),
                                            _mm_unpackhi_epi16(m8, m8), 1);
                const __m512i qh = _mm512_broadcast_i64x4(load256(B.qh));
                __m512i q[4], s[4];
                LLMWB_UNROLL for (int c = 0; c < 4; ++c) {
                    const __m512i raw = _mm512_broadcast_i64x4(load256(B.qs + 32 * c));
                    const __m512i lo = _mm512_and_si512(_mm512_srlv_epi16(raw, cnt), low4);
                    q[c] = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(qh, hsel[c]), lo, b4);
                    s[c] = _mm512_permutexvar_epi16(idx[c], scv);
                }
                const float d = h2f(B.d), dmin = h2f(B.dmin);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const __m512i si = dot4(q, s, A.q[t] + 256 * b);
                    const float dx = A.d[t][b];
                    acc[t] =
                        _mm512_fmadd_ps(_mm512_cvtepi32_ps(si), _mm512_set1_ps(d * dx), acc[t]);
                    const __m256i mi = _mm256_madd_epi16(load256(A.sum[t] + 16 * b), mins16);
                    macc[t] =
                        _mm256_fmadd_ps(_mm256_cvtepi32_ps(mi), _mm256_set1_ps(dmin * dx), macc[t]);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] =
                hsum_ps_512(acc[t]) - hsum_ps(macc[t]);
        }
    }
};

// ---- Q2_K / Q3_K: 2-bit codes (+ Q3_K's high bit) ---------------------------------------------

// q[k] = the codes at bits 2k .. 2k + 1 of qs[0 .. 64) (Order::kQ2). One shift in all: codes 1 and
// 3 come from the nibbles through a vpshufb table (n >> 2), which keeps port 0 (shifts, multiplies)
// for the dot products.
inline void q2_codes(const uint8_t* qs, __m512i q[4]) {
    const __m512i three = _mm512_set1_epi8(3), low4 = _mm512_set1_epi8(0x0F);
    const __m512i upper2 =
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
    const __m512i z = _mm512_loadu_si512(qs);
    const __m512i lo = _mm512_and_si512(z, low4);
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(z, 4), low4);
    q[0] = _mm512_and_si512(z, three);
    q[1] = _mm512_shuffle_epi8(upper2, lo);
    q[2] = _mm512_and_si512(hi, three);
    q[3] = _mm512_shuffle_epi8(upper2, hi);
}

// Word indices for vpermw: word a over the 8 words of lane 0, b of lane 1, c, d.
inline __m512i idx_lanes(int a, int b, int c, int d) {
    __m512i v = _mm512_castsi128_si512(_mm_set1_epi16(static_cast<int16_t>(a)));
    v = _mm512_inserti32x4(v, _mm_set1_epi16(static_cast<int16_t>(b)), 1);
    v = _mm512_inserti32x4(v, _mm_set1_epi16(static_cast<int16_t>(c)), 2);
    return _mm512_inserti32x4(v, _mm_set1_epi16(static_cast<int16_t>(d)), 3);
}
// Register k of q2_codes holds sub-blocks 2k, 2k + 1, 8 + 2k, 9 + 2k in its four lanes.
inline __m512i idx_q2(int k) {
    return idx_lanes(2 * k, 2 * k + 1, 8 + 2 * k, 9 + 2 * k);
}

template <int NT> struct Q2_KTile {
    static void run(const TileArgs& p) {
        const Acts<NT> A(p);
        const int64_t nb = p.cols / 256;
        const __m128i low4 = _mm_set1_epi8(0x0F);
        __m512i idx[4];
        LLMWB_UNROLL for (int i = 0; i < 4; ++i) idx[i] = idx_q2(i);
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockQ2_K*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m512 acc[NT];
            __m256 macc[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                acc[t] = _mm512_setzero_ps();
                macc[t] = _mm256_setzero_ps();
            }
            for (int64_t b = 0; b < nb; ++b) {
                const BlockQ2_K& B = w[b];
                const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(B.scales));
                const __m512i scv =
                    _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_and_si128(sc8, low4)));
                const __m256i mins16 =
                    _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc8, 4), low4));
                __m512i q[4], s[4];
                q2_codes(B.qs, q);
                LLMWB_UNROLL for (int i = 0; i < 4; ++i) s[i] =
                    _mm512_permutexvar_epi16(idx[i], scv);
                const float d = h2f(B.d), dmin = h2f(B.dmin);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const __m512i si = dot4(q, s, A.q[t] + 256 * b);
                    const float dx = A.d[t][b];
                    acc[t] =
                        _mm512_fmadd_ps(_mm512_cvtepi32_ps(si), _mm512_set1_ps(d * dx), acc[t]);
                    const __m256i mi = _mm256_madd_epi16(load256(A.sum[t] + 16 * b), mins16);
                    macc[t] =
                        _mm256_fmadd_ps(_mm256_cvtepi32_ps(mi), _mm256_set1_ps(dmin * dx), macc[t]);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] =
                hsum_ps_512(acc[t]) - hsum_ps(macc[t]);
        }
    }
};

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

template <int NT> struct Q3_KTile {
    static void run(const TileArgs& p) {
        const Acts<NT> A(p);
        const int64_t nb = p.cols / 256;
        const __m512i four = _mm512_set1_epi8(4);
        __m512i idx[4], hsel[4];
        LLMWB_UNROLL for (int i = 0; i < 4; ++i) {
            idx[i] = idx_q2(i);
            // register k holds half 0 in its low 256 bits (hmask bit k), half 1 in its high 256
            // bits (bit 4 + k)
            hsel[i] = halves_epi8(1 << i, 1 << (4 + i));
        }
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockQ3_K*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m512 acc[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
            for (int64_t b = 0; b < nb; ++b) {
                const BlockQ3_K& B = w[b];
                const __m256i sc16 = _mm256_cvtepi8_epi16(q3k_scales(B.scales));
                const __m256i sc16x4 = _mm256_slli_epi16(sc16, 2); // the code offset 4
                const __m512i scv = _mm512_castsi256_si512(sc16);
                const __m512i hm = _mm512_broadcast_i64x4(load256(B.hmask));
                __m512i q[4], s[4];
                q2_codes(B.qs, q);
                LLMWB_UNROLL for (int i = 0; i < 4; ++i) {
                    q[i] =
                        _mm512_mask_add_epi8(q[i], _mm512_test_epi8_mask(hm, hsel[i]), q[i], four);
                    s[i] = _mm512_permutexvar_epi16(idx[i], scv);
                }
                const float d = h2f(B.d);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    __m512i si = dot4(q, s, A.q[t] + 256 * b);
                    // codes are u - 4: subtract 4 * sum(sc * bsum)
                    const __m256i corr = _mm256_madd_epi16(load256(A.sum[t] + 16 * b), sc16x4);
                    si = _mm512_sub_epi32(si, _mm512_zextsi256_si512(corr));
                    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(si), _mm512_set1_ps(d * A.d[t][b]),
                                             acc[t]);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] = hsum_ps_512(acc[t]);
        }
    }
};

// ---- IQ4_XS ------------------------------------------------------------------------------------

// The 8 signed sub-block scales (ls - 32) of an IQ4_XS block as 16-bit words.
inline __m128i iq4xs_scales(const BlockIQ4_XS& B) {
    uint32_t sl;
    __builtin_memcpy(&sl, B.scales_l, 4);
    const __m128i v = _mm_cvtsi32_si128(static_cast<int>(sl));
    const __m128i low4 = _mm_set1_epi8(0x0F);
    const __m128i lo = _mm_unpacklo_epi8(_mm_and_si128(v, low4),
                                         _mm_and_si128(_mm_srli_epi16(v, 4), low4)); // j order
    const __m128i hi =
        _mm_and_si128(_mm_srlv_epi16(_mm_set1_epi16(static_cast<int16_t>(B.scales_h)),
                                     _mm_setr_epi16(0, 2, 4, 6, 8, 10, 12, 14)),
                      _mm_set1_epi16(3));
    return _mm_sub_epi16(_mm_or_si128(_mm_cvtepu8_epi16(lo), _mm_slli_epi16(hi, 4)),
                         _mm_set1_epi16(32));
}

// Activations in Order::kIQ4: the low and high nibbles of one 64-byte load of codes
// (sub-blocks 4z .. 4z + 3, one per 128-bit lane) each meet one 64-byte activation load, and one
// scale vector (a sub-block per lane) serves both.
template <int NT> struct IQ4_XSTile {
    static void run(const TileArgs& p) {
        const Acts<NT> A(p);
        const int64_t nb = p.cols / 256;
        const __m512i low4 = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8);
        // |kIQ4Values|; codes 0..7 are the negative entries
        const __m512i abs_table = _mm512_broadcast_i32x4(
            _mm_setr_epi8(127, 104, 83, 65, 49, 35, 22, 10, 1, 13, 25, 38, 53, 69, 89, 113));
        const __m512i idx0 = idx_per16(0), idx4 = idx_per16(4);
        const __m512i zero = _mm512_setzero_si512();
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockIQ4_XS*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m512 acc[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
            for (int64_t b = 0; b < nb; ++b) {
                const BlockIQ4_XS& B = w[b];
                const __m512i scv = _mm512_castsi128_si512(iq4xs_scales(B));
                const __m512i s[2] = {_mm512_permutexvar_epi16(idx0, scv),
                                      _mm512_permutexvar_epi16(idx4, scv)};
                __m512i q[4];
                __mmask64 neg[4];
                LLMWB_UNROLL for (int z = 0; z < 2; ++z) {
                    const __m512i raw = _mm512_loadu_si512(B.qs + 64 * z);
                    const __m512i c0 = _mm512_and_si512(raw, low4);
                    const __m512i c1 = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low4);
                    neg[2 * z] = _mm512_testn_epi8_mask(c0, eight);
                    neg[2 * z + 1] = _mm512_testn_epi8_mask(c1, eight);
                    q[2 * z] = _mm512_shuffle_epi8(abs_table, c0);
                    q[2 * z + 1] = _mm512_shuffle_epi8(abs_table, c1);
                }
                const float d = h2f(B.d);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const uint8_t* x = A.q[t] + 256 * b;
                    __m512i si = zero;
                    LLMWB_UNROLL for (int i = 0; i < 4; ++i) {
                        const __m512i xv = _mm512_load_si512(x + 64 * i);
                        const __m512i sx = _mm512_mask_sub_epi8(xv, neg[i], zero, xv);
                        si = _mm512_dpwssd_epi32(si, _mm512_maddubs_epi16(q[i], sx), s[i / 2]);
                    }
                    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(si), _mm512_set1_ps(d * A.d[t][b]),
                                             acc[t]);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] = hsum_ps_512(acc[t]);
        }
    }
};

const MatmulKernel kQ2_K{ak_bytes, prep_ak<Order::kQ2>, run_by_nt<Q2_KTile>};
const MatmulKernel kQ3_K{ak_bytes, prep_ak<Order::kQ2>, run_by_nt<Q3_KTile>};
const MatmulKernel kQ5_K{ak_bytes, prep_ak<Order::kNatural>, run_by_nt<Q5_KTile>};
const MatmulKernel kIQ4_XS{ak_bytes, prep_ak<Order::kIQ4>, run_by_nt<IQ4_XSTile>};

} // namespace

const MatmulKernel* avx512_kx_matmul_kernel(DType t) {
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
