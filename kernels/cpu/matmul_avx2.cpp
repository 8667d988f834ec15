// AVX2 + FMA + F16C matmul kernels (compiled with those flags; selected after a CPU check).
// Integer products use vpmaddubsw (u8 x s8 -> saturating s16 pairs) + vpmaddwd. No overflow:
// Q8_0 multiplies |w| <= 127 by sign-adjusted activations (2 * 127 * 127 < 32768), and the
// 4/6-bit codes of Q4_0/Q4_K/Q6_K are at most 63. Activations use the scalar quantizers.
#include <immintrin.h>

#include "kernels/cpu/avx2_util.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_blocks.h"

// Loops over the register block (NR rows x NT tokens) must be fully unrolled so the
// accumulators live in registers; GCC does not always do that at -O2 on its own.
#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

inline float h2f(uint16_t h) {
    return _cvtsh_ss(h);
}

inline __m256i dot_u8s8(__m256i u, __m256i s) { // 8 x int32 sums of 4 products
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

// ---- float weights -------------------------------------------------------------------------

struct LoadF32 {
    static __m256 load(const uint8_t* w, int64_t c) {
        return _mm256_loadu_ps(reinterpret_cast<const float*>(w) + c);
    }
    static float at(const uint8_t* w, int64_t c) { return reinterpret_cast<const float*>(w)[c]; }
};
struct LoadF16 {
    static __m256 load(const uint8_t* w, int64_t c) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 2 * c)));
    }
    static float at(const uint8_t* w, int64_t c) {
        return h2f(reinterpret_cast<const uint16_t*>(w)[c]);
    }
};
struct LoadBF16 {
    static __m256 load(const uint8_t* w, int64_t c) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 2 * c));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
    }
    static float at(const uint8_t* w, int64_t c) {
        return bf16_to_fp32(reinterpret_cast<const uint16_t*>(w)[c]);
    }
};

template <class W> struct FloatTile {
    template <int NT> struct K {
        static void run(const TileArgs& p) {
            const float* x[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) x[t] =
                reinterpret_cast<const float*>(p.a + static_cast<size_t>(t) * p.a_stride);
            for (int r = 0; r < p.nr; ++r) {
                const uint8_t* w = p.w + static_cast<size_t>(r) * p.w_stride;
                __m256 acc0[NT], acc1[NT];
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc0[t] = acc1[t] = _mm256_setzero_ps();
                int64_t c = 0;
                for (; c + 16 <= p.cols; c += 16) {
                    const __m256 w0 = W::load(w, c), w1 = W::load(w, c + 8);
                    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                        acc0[t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[t] + c), acc0[t]);
                        acc1[t] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x[t] + c + 8), acc1[t]);
                    }
                }
                for (; c + 8 <= p.cols; c += 8) {
                    const __m256 w0 = W::load(w, c);
                    LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc0[t] =
                        _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[t] + c), acc0[t]);
                }
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    float s = hsum_ps(_mm256_add_ps(acc0[t], acc1[t]));
                    for (int64_t k = c; k < p.cols; ++k)
                        s += W::at(w, k) * x[t][k];
                    p.y[t * p.ldy + r] = s;
                }
            }
        }
    };
};

// ---- Q8_0 / Q4_0 -----------------------------------------------------------------------------

template <int NT> struct Q8_0Tile {
    static void run(const TileArgs& p) {
        const A32Layout L(p.cols);
        const int64_t nb = p.cols / 32;
        const uint8_t* a[NT];
        const float* ad[NT];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            a[t] = p.a + static_cast<size_t>(t) * p.a_stride;
            ad[t] = reinterpret_cast<const float*>(a[t] + L.d_off);
        }
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockQ8_0*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m256 acc[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
            for (int64_t b = 0; b < nb; ++b) {
                const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs));
                const __m256i aw = _mm256_sign_epi8(wq, wq);
                const float dw = h2f(w[b].d);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const __m256i x =
                        _mm256_load_si256(reinterpret_cast<const __m256i*>(a[t] + 32 * b));
                    const __m256i s = dot_u8s8(aw, _mm256_sign_epi8(x, wq));
                    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(dw * ad[t][b]),
                                             acc[t]);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] = hsum_ps(acc[t]);
        }
    }
};

template <int NT> struct Q4_0Tile {
    static void run(const TileArgs& p) {
        const A32Layout L(p.cols);
        const int64_t nb = p.cols / 32;
        const uint8_t* a[NT];
        const float *ad[NT], *ads[NT];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            a[t] = p.a + static_cast<size_t>(t) * p.a_stride;
            ad[t] = reinterpret_cast<const float*>(a[t] + L.d_off);
            ads[t] = reinterpret_cast<const float*>(a[t] + L.ds_off);
        }
        const __m256i low4 = _mm256_set1_epi8(0x0F);
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockQ4_0*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m256 acc[NT];
            float corr[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                acc[t] = _mm256_setzero_ps();
                corr[t] = 0.0f;
            }
            for (int64_t b = 0; b < nb; ++b) {
                const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].qs));
                const __m256i wq = _mm256_and_si256(
                    _mm256_inserti128_si256(_mm256_castsi128_si256(raw), _mm_srli_epi16(raw, 4), 1),
                    low4);
                const float dw = h2f(w[b].d);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const __m256i s = dot_u8s8(
                        wq, _mm256_load_si256(reinterpret_cast<const __m256i*>(a[t] + 32 * b)));
                    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(dw * ad[t][b]),
                                             acc[t]);
                    corr[t] += dw * ads[t][b];
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] =
                hsum_ps(acc[t]) - 8.0f * corr[t];
        }
    }
};

// ---- Q4_K / Q6_K -----------------------------------------------------------------------------

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
        const __m256i low4 = _mm256_set1_epi8(0x0F);
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockQ4_K*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m256 acc[NT], macc[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[t] = macc[t] = _mm256_setzero_ps();
            for (int64_t b = 0; b < nb; ++b) {
                const BlockQ4_K& B = w[b];
                uint8_t sc[8], mn[8];
                LLMWB_UNROLL for (int j = 0; j < 8; ++j) q4k_scale_min(B.scales, j, &sc[j], &mn[j]);
                __m256i s16[8], q[8];
                LLMWB_UNROLL for (int j = 0; j < 8; ++j) s16[j] = _mm256_set1_epi16(sc[j]);
                LLMWB_UNROLL for (int c = 0; c < 4; ++c) {
                    const __m256i raw =
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(B.qs + 32 * c));
                    q[2 * c] = _mm256_and_si256(raw, low4);
                    q[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
                }
                const __m128i m8 =
                    _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(mn)));
                const __m256i mins16 =
                    _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi16(m8, m8)),
                                            _mm_unpackhi_epi16(m8, m8), 1);
                const float d = h2f(B.d), dmin = h2f(B.dmin);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const uint8_t* x = a[t] + 256 * b;
                    __m256i s = _mm256_setzero_si256();
                    LLMWB_UNROLL for (int j = 0; j < 8; ++j) {
                        const __m256i xv =
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(x + 32 * j));
                        s = _mm256_add_epi32(
                            s, _mm256_madd_epi16(_mm256_maddubs_epi16(q[j], xv), s16[j]));
                    }
                    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(d * ad[t][b]),
                                             acc[t]);
                    const __m256i mi = _mm256_madd_epi16(
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(as[t] + 16 * b)),
                        mins16);
                    macc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mi),
                                              _mm256_set1_ps(dmin * ad[t][b]), macc[t]);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] =
                hsum_ps(acc[t]) - hsum_ps(macc[t]);
        }
    }
};

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
        const __m256i low4 = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30);
        for (int r = 0; r < p.nr; ++r) {
            const auto* w =
                reinterpret_cast<const BlockQ6_K*>(p.w + static_cast<size_t>(r) * p.w_stride);
            __m256 acc[NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
            for (int64_t b = 0; b < nb; ++b) {
                const BlockQ6_K& B = w[b];
                __m256i q[8], s16[8]; // q[k]: elements 32k .. 32k+31
                LLMWB_UNROLL for (int h = 0; h < 2; ++h) {
                    const __m256i l0 =
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(B.ql + 64 * h));
                    const __m256i l1 =
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(B.ql + 64 * h + 32));
                    const __m256i hb =
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(B.qh + 32 * h));
                    q[4 * h + 0] =
                        _mm256_or_si256(_mm256_and_si256(l0, low4),
                                        _mm256_and_si256(_mm256_slli_epi16(hb, 4), bits45));
                    q[4 * h + 1] =
                        _mm256_or_si256(_mm256_and_si256(l1, low4),
                                        _mm256_and_si256(_mm256_slli_epi16(hb, 2), bits45));
                    q[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                                                   _mm256_and_si256(hb, bits45));
                    q[4 * h + 3] =
                        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                                        _mm256_and_si256(_mm256_srli_epi16(hb, 2), bits45));
                }
                LLMWB_UNROLL for (int k = 0; k < 8; ++k) s16[k] =
                    _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16(B.scales[2 * k])),
                                            _mm_set1_epi16(B.scales[2 * k + 1]), 1);
                const __m256i sc16 = _mm256_cvtepi8_epi16(
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(B.scales)));
                const float d = h2f(B.d);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const uint8_t* x = a[t] + 256 * b;
                    __m256i s = _mm256_setzero_si256();
                    LLMWB_UNROLL for (int k = 0; k < 8; ++k) {
                        const __m256i xv =
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(x + 32 * k));
                        s = _mm256_add_epi32(
                            s, _mm256_madd_epi16(_mm256_maddubs_epi16(q[k], xv), s16[k]));
                    }
                    const __m256i corr = _mm256_madd_epi16(
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(as[t] + 16 * b)), sc16);
                    s = _mm256_sub_epi32(s, _mm256_slli_epi32(corr, 5));
                    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(d * ad[t][b]),
                                             acc[t]);
                }
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) p.y[t * p.ldy + r] = hsum_ps(acc[t]);
        }
    }
};

const MatmulKernel kF32{nullptr, nullptr, run_by_nt<FloatTile<LoadF32>::K>};
const MatmulKernel kF16{nullptr, nullptr, run_by_nt<FloatTile<LoadF16>::K>};
const MatmulKernel kBF16{nullptr, nullptr, run_by_nt<FloatTile<LoadBF16>::K>};
const MatmulKernel kQ8_0{a32_bytes, prep_a32, run_by_nt<Q8_0Tile>};
const MatmulKernel kQ4_0{a32_bytes, prep_a32, run_by_nt<Q4_0Tile>};
const MatmulKernel kQ4_K{ak_bytes, prepare_act_ak, run_by_nt<Q4_KTile>};
const MatmulKernel kQ6_K{ak_bytes, prepare_act_ak, run_by_nt<Q6_KTile>};

} // namespace

const MatmulKernel* avx2_matmul_kernel(DType t) {
    switch (t) {
    case DType::F32:
        return &kF32;
    case DType::F16:
        return &kF16;
    case DType::BF16:
        return &kBF16;
    case DType::Q8_0:
        return &kQ8_0;
    case DType::Q4_0:
        return &kQ4_0;
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL:
        return avx2_q32x_matmul_kernel(t);
    case DType::Q4_K:
        return &kQ4_K;
    case DType::Q6_K:
        return &kQ6_K;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q5_K:
    case DType::IQ4_XS:
        return avx2_kx_matmul_kernel(t);
    default: // no kernel at this level: the caller falls back
        break;
    }
    return nullptr;
}

} // namespace llmwb::kernels::detail
