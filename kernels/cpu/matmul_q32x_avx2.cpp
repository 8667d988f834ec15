// AVX2 + FMA + F16C kernels for Q4_1, Q5_0, Q5_1 and IQ4_NL weights (used in place), with the
// activations in the A32 format (matmul_kernels.h). Integer products use vpmaddubsw (u8 x s8 ->
// s16 pairs, no saturation: codes <= 31 times |q| <= 127, or for IQ4_NL |table| <= 127 times
// sign-adjusted q) + vpmaddwd. Per block and token (S = the integer dot product):
//   Q4_1, Q5_1: d_w * d_x * S + m * ds        (value = d_w * code + m)
//   Q5_0:       d_w * (d_x * S - 16 * ds)     (value = d_w * (code - 16))
//   IQ4_NL:     d_w * d_x * S, code -> kIQ4Values[code] by vpshufb
// Per (row, token) the arithmetic does not depend on how many tokens share the tile: blocks are
// accumulated in order into two chains (block b into chain b % 2), summed at the end. Tiles of
// more than 4 tokens run in groups of 4 (16 ymm registers).
#include <immintrin.h>

#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_blocks.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

inline float hsum(__m256 v) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

// Bytes per block, byte offsets of qs and qh (-1: none), additive offset m (fp16 after d), code
// offset K (applied through ds), codes through kIQ4Values.
struct FmtQ4_1 {
    static constexpr int kBytes = 20, kQs = 4, kQh = -1, K = 0;
    static constexpr bool kMins = true, kTable = false;
};
struct FmtQ5_0 {
    static constexpr int kBytes = 22, kQs = 6, kQh = 2, K = 16;
    static constexpr bool kMins = false, kTable = false;
};
struct FmtQ5_1 {
    static constexpr int kBytes = 24, kQs = 8, kQh = 4, K = 0;
    static constexpr bool kMins = true, kTable = false;
};
struct FmtIQ4_NL {
    static constexpr int kBytes = 18, kQs = 2, kQh = -1, K = 0;
    static constexpr bool kMins = false, kTable = true;
};
static_assert(FmtQ4_1::kBytes == sizeof(BlockQ4_1) && FmtQ5_0::kBytes == sizeof(BlockQ5_0) &&
              FmtQ5_1::kBytes == sizeof(BlockQ5_1) && FmtIQ4_NL::kBytes == sizeof(BlockIQ4_NL));

struct Decoded {
    __m256i wq;   // the unsigned operand: 32 codes (IQ4_NL: |table value|)
    __m256i sign; // IQ4_NL: the signed table values (to sign the activations with)
    float d, m;
};

template <class F> inline Decoded decode(const uint8_t* blk) {
    Decoded r;
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + F::kQs));
    __m256i q = _mm256_and_si256(
        _mm256_inserti128_si256(_mm256_castsi128_si256(raw), _mm_srli_epi16(raw, 4), 1),
        _mm256_set1_epi8(0x0F));
    if constexpr (F::kQh >= 0) { // byte j of 0xFF where bit j of qh is set, then bit 4
        uint32_t h;
        __builtin_memcpy(&h, blk + F::kQh, 4);
        const __m256i spread = _mm256_shuffle_epi8(
            _mm256_set1_epi32(static_cast<int>(h)),
            _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
        const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
        const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
        q = _mm256_or_si256(q, _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
    }
    if constexpr (F::kTable) {
        const __m256i table = _mm256_broadcastsi128_si256(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Values)));
        r.sign = _mm256_shuffle_epi8(table, q);
        q = _mm256_sign_epi8(r.sign, r.sign);
    }
    r.wq = q;
    uint16_t h16;
    __builtin_memcpy(&h16, blk, 2);
    r.d = _cvtsh_ss(h16);
    if constexpr (F::kMins) {
        __builtin_memcpy(&h16, blk + 2, 2);
        r.m = _cvtsh_ss(h16);
    }
    return r;
}

template <class F, int NT> void rows(const TileArgs& p, int t0) {
    const A32Layout L(p.cols);
    const int64_t nb = p.cols / 32;
    const uint8_t* a[NT];
    const float *ad[NT], *ads[NT];
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        a[t] = p.a + static_cast<size_t>(t0 + t) * p.a_stride;
        ad[t] = reinterpret_cast<const float*>(a[t] + L.d_off);
        ads[t] = reinterpret_cast<const float*>(a[t] + L.ds_off);
    }
    const __m256i ones = _mm256_set1_epi16(1);
    for (int r = 0; r < p.nr; ++r) {
        const uint8_t* w = p.w + static_cast<size_t>(r) * p.w_stride;
        __m256 acc[2][NT];
        float corr[2][NT];
        LLMWB_UNROLL for (int u = 0; u < 2; ++u) LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            acc[u][t] = _mm256_setzero_ps();
            corr[u][t] = 0.0f;
        }
        auto step = [&](int64_t b, __m256(&ac)[NT], float(&co)[NT]) {
            const Decoded k = decode<F>(w + b * F::kBytes);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(a[t] + 32 * b));
                if constexpr (F::kTable)
                    x = _mm256_sign_epi8(x, k.sign);
                const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(k.wq, x), ones);
                ac[t] =
                    _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(k.d * ad[t][b]), ac[t]);
                if constexpr (F::kMins)
                    co[t] += k.m * ads[t][b];
                else if constexpr (F::K != 0)
                    co[t] += k.d * ads[t][b];
            }
        };
        int64_t b = 0;
        for (; b + 2 <= nb; b += 2) {
            // Keep the weight stream ahead (one 64-byte line per two blocks is enough).
            _mm_prefetch(reinterpret_cast<const char*>(w + b * F::kBytes + 4096), _MM_HINT_T0);
            step(b, acc[0], corr[0]);
            step(b + 1, acc[1], corr[1]);
        }
        if (b < nb)
            step(b, acc[0], corr[0]);
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            const float v = hsum(_mm256_add_ps(acc[0][t], acc[1][t]));
            const float c = corr[0][t] + corr[1][t];
            if constexpr (F::kMins)
                p.y[(t0 + t) * p.ldy + r] = v + c;
            else
                p.y[(t0 + t) * p.ldy + r] = v - static_cast<float>(F::K) * c;
        }
    }
}

template <class F> void tile(const TileArgs& p) {
    int t = 0;
    for (; t + 4 <= p.nt; t += 4)
        rows<F, 4>(p, t);
    switch (p.nt - t) {
    case 3:
        rows<F, 3>(p, t);
        break;
    case 2:
        rows<F, 2>(p, t);
        break;
    case 1:
        rows<F, 1>(p, t);
        break;
    default:
        break;
    }
}

const MatmulKernel kQ4_1{a32_bytes, prep_a32, tile<FmtQ4_1>};
const MatmulKernel kQ5_0{a32_bytes, prep_a32, tile<FmtQ5_0>};
const MatmulKernel kQ5_1{a32_bytes, prep_a32, tile<FmtQ5_1>};
const MatmulKernel kIQ4_NL{a32_bytes, prep_a32, tile<FmtIQ4_NL>};

} // namespace

const MatmulKernel* avx2_q32x_matmul_kernel(DType t) {
    switch (t) {
    case DType::Q4_1:
        return &kQ4_1;
    case DType::Q5_0:
        return &kQ5_0;
    case DType::Q5_1:
        return &kQ5_1;
    case DType::IQ4_NL:
        return &kIQ4_NL;
    default:
        return nullptr;
    }
}

} // namespace llmwb::kernels::detail
