// AVX-512 (F, BW, VL, DQ, VNNI) matmul kernels. Compiled with AVX-512 flags and selected only
// after the CPU check. Each tile loads a weight block once and multiplies it with up to
// kMaxTileTokens activation rows held in registers (NT template parameter).
//
// Integer products use vpdpbusd (u8 x s8 -> s32):
//   Q8_0: activations biased by +128 (u8); the bias is removed by starting the accumulator at
//         -128 * sum(w), computed once per weight block and reused for every token.
//   Q4_0, Q4_K, Q6_K: the weight codes are unsigned (4 or 6 bits) and the activations signed;
//         the weight offsets (8, the Q4_K mins, 32) are applied through the activation sums.
#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant_blocks.h"

// Loops over the register block (NR rows x NT tokens) must be fully unrolled so the
// accumulators live in registers; GCC does not always do that at -O2 on its own.
#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

// Activation layout of the Q4_K kernel: within each 256-block, the 32-element sub-blocks are
// stored in the order 0,2,1,3,4,6,5,7 so that one 64-byte load matches the low (or high)
// nibbles of 64 bytes of weight codes. The per-16 sums stay in natural order.
constexpr int kQ4KSubOrder[8] = {0, 2, 1, 3, 4, 6, 5, 7};

inline float h2f(uint16_t h) {
    return _cvtsh_ss(h);
}

inline __mmask16 tail_mask(int64_t n) {
    return static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << n) - 1);
}

template <int NT> inline const float* act_f32(const TileArgs& p, int t) {
    return reinterpret_cast<const float*>(p.a + static_cast<size_t>(t) * p.a_stride);
}

// ---- activation quantizers -----------------------------------------------------------------

template <bool kQ4KOrder> void prep_ak(const float* x, int64_t cols, uint8_t* dst) {
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
            int pos = 16 * g;
            if (kQ4KOrder)
                pos = 32 * kQ4KSubOrder[g / 2] + 16 * (g % 2); // the order is its own inverse
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 256 * b + pos),
                             _mm512_cvtsepi32_epi8(q));
        }
    }
}

// ---- float weights -------------------------------------------------------------------------

struct LoadF32 {
    static constexpr int64_t kElemBytes = 4;
    static __m512 load(const uint8_t* w, int64_t c) {
        return _mm512_loadu_ps(reinterpret_cast<const float*>(w) + c);
    }
    static __m512 load(const uint8_t* w, int64_t c, __mmask16 m) {
        return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(w) + c);
    }
};
struct LoadF16 {
    static constexpr int64_t kElemBytes = 2;
    static __m512 load(const uint8_t* w, int64_t c) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 2 * c)));
    }
    static __m512 load(const uint8_t* w, int64_t c, __mmask16 m) {
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, w + 2 * c));
    }
};
struct LoadBF16 {
    static constexpr int64_t kElemBytes = 2;
    static __m512 widen(__m256i v) {
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
    }
    static __m512 load(const uint8_t* w, int64_t c) {
        return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 2 * c)));
    }
    static __m512 load(const uint8_t* w, int64_t c, __mmask16 m) {
        return widen(_mm256_maskz_loadu_epi16(m, w + 2 * c));
    }
};

// Register block of up to 4 rows x NT (<= 4) tokens: every activation vector loaded feeds up to
// 4 FMAs and every weight vector NT FMAs.
template <class W, int NR, int NT> void float_block(const TileArgs& p, int r0, int t0) {
    const float* x[NT];
    const uint8_t* w[NR];
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) x[t] = act_f32<NT>(p, t0 + t);
    LLMWB_UNROLL for (int i = 0; i < NR; ++i) w[i] = p.w + static_cast<size_t>(r0 + i) * p.w_stride;
    __m512 acc[NR][NT];
    LLMWB_UNROLL for (int i = 0; i < NR; ++i) LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[i][t] =
        _mm512_setzero_ps();
    int64_t c = 0;
    for (; c + 16 <= p.cols; c += 16) {
        __m512 wv[NR];
        LLMWB_UNROLL for (int i = 0; i < NR; ++i) wv[i] = W::load(w[i], c);
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            const __m512 xv = _mm512_loadu_ps(x[t] + c);
            LLMWB_UNROLL for (int i = 0; i < NR; ++i) acc[i][t] =
                _mm512_fmadd_ps(wv[i], xv, acc[i][t]);
        }
    }
    if (c < p.cols) {
        const __mmask16 m = tail_mask(p.cols - c);
        __m512 wv[NR];
        LLMWB_UNROLL for (int i = 0; i < NR; ++i) wv[i] = W::load(w[i], c, m);
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            const __m512 xv = _mm512_maskz_loadu_ps(m, x[t] + c);
            LLMWB_UNROLL for (int i = 0; i < NR; ++i) acc[i][t] =
                _mm512_fmadd_ps(wv[i], xv, acc[i][t]);
        }
    }
    LLMWB_UNROLL for (int i = 0; i < NR; ++i) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        p.y[(t0 + t) * p.ldy + r0 + i] = hsum_ps_512(acc[i][t]);
}

template <class W, int NT> void float_rows(const TileArgs& p, int t0) {
    int r = 0;
    for (; r + 4 <= p.nr; r += 4)
        float_block<W, 4, NT>(p, r, t0);
    for (; r < p.nr; ++r)
        float_block<W, 1, NT>(p, r, t0);
}

template <class W> struct FloatTile {
    template <int NT> struct K {
        static void run(const TileArgs& p) {
            if constexpr (NT == 1) {
                // Matrix-vector: one row at a time, two accumulators per row.
                const float* x = act_f32<1>(p, 0);
                for (int r = 0; r < p.nr; ++r) {
                    const uint8_t* w = p.w + static_cast<size_t>(r) * p.w_stride;
                    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
                    int64_t c = 0;
                    for (; c + 32 <= p.cols; c += 32) {
                        // Keep the weight stream 8 KiB ahead (one 64-byte line per iteration).
                        _mm_prefetch(reinterpret_cast<const char*>(w + c * W::kElemBytes + 8192),
                                     _MM_HINT_T0);
                        a0 = _mm512_fmadd_ps(W::load(w, c), _mm512_loadu_ps(x + c), a0);
                        a1 = _mm512_fmadd_ps(W::load(w, c + 16), _mm512_loadu_ps(x + c + 16), a1);
                    }
                    for (; c < p.cols; c += 16) {
                        const __mmask16 m = tail_mask(p.cols - c);
                        a0 = _mm512_fmadd_ps(W::load(w, c, m), _mm512_maskz_loadu_ps(m, x + c), a0);
                    }
                    p.y[r] = hsum_ps_512(_mm512_add_ps(a0, a1));
                }
            } else {
                int t = 0;
                for (; t + 4 <= NT; t += 4)
                    float_rows<W, 4>(p, t);
                if constexpr (NT % 4 == 3)
                    float_rows<W, 3>(p, t);
                if constexpr (NT % 4 == 2)
                    float_rows<W, 2>(p, t);
                if constexpr (NT % 4 == 1)
                    float_rows<W, 1>(p, t);
            }
        }
    };
};

// ---- Q4_K ------------------------------------------------------------------------------------

template <int NT> struct Q4_KTile {
    static void run(const TileArgs& p) {
        const AKLayout L(p.cols);
        const int64_t nb = p.cols / 256;
        const uint8_t* a[NT];
        const float* ad[NT];
        const int16_t* as[NT];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            a[t] = p.a + static_cast<size_t>(t) * p.a_stride;
            ad[t] = reinterpret_cast<const float*>(a[t] + L.d_off);
            as[t] = reinterpret_cast<const int16_t*>(a[t] + L.bsum_off);
        }
        const __m512i low4 = _mm512_set1_epi8(0x0F);
        // word indices: [scale a x 16 words | scale b x 16 words]
        const __m512i i02 = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
        const __m512i i13 = _mm512_add_epi16(i02, _mm512_set1_epi16(1));
        const __m512i i46 = _mm512_add_epi16(i02, _mm512_set1_epi16(4));
        const __m512i i57 = _mm512_add_epi16(i02, _mm512_set1_epi16(5));
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockQ4_K*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m512 acc[NT];
            __m256 macc[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                acc[t] = _mm512_setzero_ps();
                macc[t] = _mm256_setzero_ps();
            }
            for (int64_t b = 0; b < nb; ++b) {
                const BlockQ4_K& B = w[b];
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
                const __m512i s02 = _mm512_permutexvar_epi16(i02, scv),
                              s13 = _mm512_permutexvar_epi16(i13, scv);
                const __m512i s46 = _mm512_permutexvar_epi16(i46, scv),
                              s57 = _mm512_permutexvar_epi16(i57, scv);
                const __m128i m8 = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<long long>(mn)));
                const __m256i mins16 =
                    _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi16(m8, m8)),
                                            _mm_unpackhi_epi16(m8, m8), 1);
                const __m512i q01 = _mm512_loadu_si512(B.qs), q23 = _mm512_loadu_si512(B.qs + 64);
                const __m512i lo01 = _mm512_and_si512(q01, low4),
                              hi01 = _mm512_and_si512(_mm512_srli_epi16(q01, 4), low4);
                const __m512i lo23 = _mm512_and_si512(q23, low4),
                              hi23 = _mm512_and_si512(_mm512_srli_epi16(q23, 4), low4);
                const float d = h2f(B.d), dmin = h2f(B.dmin);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const uint8_t* x = a[t] + 256 * b;
                    // u4 x s8 pair sums fit int16 (2 * 15 * 127); vpdpwssd applies the sub-block
                    // scales.
                    __m512i s =
                        _mm512_madd_epi16(_mm512_maddubs_epi16(lo01, _mm512_load_si512(x)), s02);
                    s = _mm512_dpwssd_epi32(
                        s, _mm512_maddubs_epi16(hi01, _mm512_load_si512(x + 64)), s13);
                    s = _mm512_dpwssd_epi32(
                        s, _mm512_maddubs_epi16(lo23, _mm512_load_si512(x + 128)), s46);
                    s = _mm512_dpwssd_epi32(
                        s, _mm512_maddubs_epi16(hi23, _mm512_load_si512(x + 192)), s57);
                    const float dx = ad[t][b];
                    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_set1_ps(d * dx), acc[t]);
                    const __m256i mi = _mm256_madd_epi16(
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(as[t] + 16 * b)),
                        mins16);
                    macc[t] =
                        _mm256_fmadd_ps(_mm256_cvtepi32_ps(mi), _mm256_set1_ps(dmin * dx), macc[t]);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] =
                hsum_ps_512(acc[t]) - hsum_ps(macc[t]);
        }
    }
};

// ---- Q6_K ------------------------------------------------------------------------------------

template <int NT> struct Q6_KTile {
    static void run(const TileArgs& p) {
        const AKLayout L(p.cols);
        const int64_t nb = p.cols / 256;
        const uint8_t* a[NT];
        const float* ad[NT];
        const int16_t* as[NT];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            a[t] = p.a + static_cast<size_t>(t) * p.a_stride;
            ad[t] = reinterpret_cast<const float*>(a[t] + L.d_off);
            as[t] = reinterpret_cast<const int16_t*>(a[t] + L.bsum_off);
        }
        const __m512i low4 = _mm512_set1_epi8(0x0F), bits45 = _mm512_set1_epi8(0x30);
        // 16-bit shift counts: low 256 bits / high 256 bits.
        const __m512i shl_lo = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
        const __m512i shr_hi = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
        // word indices: scales k .. k + 3, each over 8 words (16 elements = 4 int32 lanes)
        const __m512i iA = _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_setzero_si128()), _mm_set1_epi16(1), 1)),
            _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16(2)), _mm_set1_epi16(3),
                                    1),
            1);
        const __m512i iB = _mm512_add_epi16(iA, _mm512_set1_epi16(4));
        const __m512i iC = _mm512_add_epi16(iA, _mm512_set1_epi16(8));
        const __m512i iD = _mm512_add_epi16(iA, _mm512_set1_epi16(12));
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockQ6_K*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m512 acc[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
            for (int64_t b = 0; b < nb; ++b) {
                const BlockQ6_K& B = w[b];
                const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(B.scales));
                const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
                const __m512i scv = _mm512_castsi256_si512(sc16);
                const __m512i sA = _mm512_permutexvar_epi16(iA, scv),
                              sB = _mm512_permutexvar_epi16(iB, scv);
                const __m512i sC = _mm512_permutexvar_epi16(iC, scv),
                              sD = _mm512_permutexvar_epi16(iD, scv);
                __m512i qlo[2], qhi[2];
                LLMWB_UNROLL for (int h = 0; h < 2; ++h) {
                    const __m512i l = _mm512_loadu_si512(B.ql + 64 * h);
                    const __m512i hb = _mm512_broadcast_i64x4(
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(B.qh + 32 * h)));
                    qlo[h] =
                        _mm512_or_si512(_mm512_and_si512(l, low4),
                                        _mm512_and_si512(_mm512_sllv_epi16(hb, shl_lo), bits45));
                    qhi[h] =
                        _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), low4),
                                        _mm512_and_si512(_mm512_srlv_epi16(hb, shr_hi), bits45));
                }
                const float d = h2f(B.d);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const uint8_t* x = a[t] + 256 * b;
                    // u6 x s8 pair sums fit int16 (2 * 63 * 127); vpdpwssd applies the sub-block
                    // scales.
                    __m512i s =
                        _mm512_madd_epi16(_mm512_maddubs_epi16(qlo[0], _mm512_load_si512(x)), sA);
                    s = _mm512_dpwssd_epi32(
                        s, _mm512_maddubs_epi16(qhi[0], _mm512_load_si512(x + 64)), sB);
                    s = _mm512_dpwssd_epi32(
                        s, _mm512_maddubs_epi16(qlo[1], _mm512_load_si512(x + 128)), sC);
                    s = _mm512_dpwssd_epi32(
                        s, _mm512_maddubs_epi16(qhi[1], _mm512_load_si512(x + 192)), sD);
                    const __m256i corr = _mm256_madd_epi16(
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(as[t] + 16 * b)), sc16);
                    s = _mm512_sub_epi32(s, _mm512_zextsi256_si512(
                                                _mm256_slli_epi32(corr, 5))); // 32 * sum(sc * bsum)
                    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_set1_ps(d * ad[t][b]),
                                             acc[t]);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] = hsum_ps_512(acc[t]);
        }
    }
};

const MatmulKernel kF32{nullptr, nullptr, run_by_nt<FloatTile<LoadF32>::K>};
const MatmulKernel kF16{nullptr, nullptr, run_by_nt<FloatTile<LoadF16>::K>};
const MatmulKernel kBF16{nullptr, nullptr, run_by_nt<FloatTile<LoadBF16>::K>};
const MatmulKernel kQ4_K{ak_bytes, prep_ak<true>, run_by_nt<Q4_KTile>};
const MatmulKernel kQ6_K{ak_bytes, prep_ak<false>, run_by_nt<Q6_KTile>};

} // namespace

const MatmulKernel* avx512_matmul_kernel(DType t) {
    switch (t) {
    case DType::F32:
        return &kF32;
    case DType::F16:
        return &kF16;
    case DType::BF16:
        return &kBF16;
    case DType::Q8_0:
    case DType::Q4_0:
        return avx512_q32_matmul_kernel(t);
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL:
        return avx512_q32x_matmul_kernel(t);
    case DType::Q4_K:
        return &kQ4_K;
    case DType::Q6_K:
        return &kQ6_K;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q5_K:
    case DType::IQ4_XS:
        return avx512_kx_matmul_kernel(t);
    default: // no kernel at this level: the caller falls back
        break;
    }
    return nullptr;
}

} // namespace llmwb::kernels::detail
