// AVX-512 VNNI kernels for the other 32-element block types: Q4_1, Q5_0, Q5_1 and IQ4_NL, with
// the weights used in place. A pair of weight blocks is decoded into 64 unsigned codes (one zmm:
// the two blocks' 16 code bytes, then the same shifted right by 4) that match 64 bytes of
// activations, multiplied with vpdpbusd (u8 x s8 -> s32):
//   Q4_1, Q5_1: the 4- or 5-bit codes (value = d * code + m); the offset m enters in float as
//               m * d_x * sum(q_x), with the block sums prepared with the activations;
//   Q5_0:       the 5-bit codes (value = d * (code - 16)), high bits from qh through a mask
//               register; the offset 16 is removed by starting the dot product at -16 * sum(q_x);
//   IQ4_NL:     the table values + 128 by vpshufb of the 4-bit codes (value = d * table[code]);
//               the offset 128 is removed as Q5_0's.
// The fp16 scales are widened where they lie: vcvtph2ps of the pair's first 16 words puts d0
// (m0) in lane 0 (1) and d1 (m1) in lane B/2 (B/2 + 1), B the block bytes; one masked multiply
// by an activation vector with d_x (and d_x * sum(q_x)) in the same lanes gives every product
// the pair needs, and one vpermps spreads d_w * d_x over the int32 lanes of each block.
//
// Activation rows (prepared once per matmul, 64-byte aligned sections):
//   q     [align64(cols)]  int8 codes; per pair: elements 0..15 of block 2p, 0..15 of block
//                          2p + 1, 16..31 of block 2p, 16..31 of block 2p + 1 (the int32 lanes
//                          0-3 and 8-11 belong to block 2p, 4-7 and 12-15 to block 2p + 1)
//   corr  [pairs][16] int32  lane 0: -K * sum(q) of block 2p, lane 4: of block 2p + 1 (K types)
//   av    [pairs][16] float  d_x (and d_x * sum(q)) in the weight scales' lanes, 0 elsewhere
//   pk    [pairs][4]  float  d(2p), d(2p+1), then c(2p), c(2p+1): the corr values (int32 bits)
//                             or d_x * sum(q) (kMins)
// Matrix-vector reads corr/av; matrix-matrix reads pk and expands it with permutes, so that 4
// tokens of activations (1.25 bytes per element) stay in L1. Either way the values are the same,
// and per (row, token) the arithmetic does not depend on how many tokens share the tile: block
// pairs are accumulated in order into two chains (pair p into chain p % 2), summed at the end.
// One weight row at a time: one sequential stream per core suits the hardware prefetchers best
// (see matmul_q32_avx512.cpp), and up to 4 tokens reuse each decoded pair.
#include <type_traits>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant_blocks.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

// Block formats: bytes per block, byte offsets of the codes (qs) and of the high bits (qh, -1:
// none), whether the block has an additive offset m (fp16 after d), the code offset K removed
// through the activation sums, and whether the codes index kIQ4Values.
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
    static constexpr int kBytes = 18, kQs = 2, kQh = -1, K = 128;
    static constexpr bool kMins = false, kTable = true;
};
static_assert(FmtQ4_1::kBytes == sizeof(BlockQ4_1) && FmtQ5_0::kBytes == sizeof(BlockQ5_0) &&
              FmtQ5_1::kBytes == sizeof(BlockQ5_1) && FmtIQ4_NL::kBytes == sizeof(BlockIQ4_NL));

// kIQ4Values + 128 as bytes (the unsigned operand of vpdpbusd).
struct IQ4Biased {
    alignas(16) uint8_t v[16];
};
constexpr IQ4Biased kIQ4Biased = [] {
    IQ4Biased t{};
    for (int i = 0; i < 16; ++i)
        t.v[i] = static_cast<uint8_t>(kIQ4Values[i] + 128);
    return t;
}();

struct DecodedPair {
    __m512i wq; // 64 u8 codes: block 0's elements 0..31, then block 1's
    __m512 sc;  // the first 16 words widened: d0 (m0) in lane 0 (1), d1 (m1) in lane B/2 (+ 1)
};

template <class F> struct Pair {
    static constexpr int kD1 = F::kBytes / 2; // lane of d1
    // The lanes of sc that hold scales (d0, d1, and m0, m1 for kMins).
    static constexpr __mmask16 kScaleLanes = static_cast<__mmask16>(
        (1u << 0) | (1u << kD1) | (F::kMins ? (1u << 1) | (1u << (kD1 + 1)) : 0u));
    static constexpr __mmask16 kMinLanes = static_cast<__mmask16>((1u << 1) | (1u << (kD1 + 1)));

    // pk (d0, d1, ds0, ds1) -> the lanes of sc: d0 -> 0, d1 -> kD1, ds0 -> 1, ds1 -> kD1 + 1.
    struct Index {
        alignas(64) int32_t v[16];
    };
    static constexpr Index kPkToAv = [] {
        Index x{};
        x.v[kD1] = 1;
        x.v[1] = 2;
        x.v[kD1 + 1] = 3;
        return x;
    }();
    // [lane 0 x 4 | lane kD1 x 4] twice: d_w * d_x of each block over its int32 lanes.
    static __m512i spread_index() {
        return _mm512_set_epi32(kD1, kD1, kD1, kD1, 0, 0, 0, 0, kD1, kD1, kD1, kD1, 0, 0, 0, 0);
    }

    static DecodedPair load(const uint8_t* blk) {
        const __m256i qs = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + F::kQs))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + F::kBytes + F::kQs)), 1);
        DecodedPair d;
        d.wq = _mm512_and_si512(
            _mm512_inserti64x4(_mm512_castsi256_si512(qs), _mm256_srli_epi16(qs, 4), 1),
            _mm512_set1_epi8(0x0F));
        if constexpr (F::kQh >= 0) { // bit j of block b's qh is bit 4 of element j
            uint32_t h0, h1;
            __builtin_memcpy(&h0, blk + F::kQh, 4);
            __builtin_memcpy(&h1, blk + F::kBytes + F::kQh, 4);
            const uint64_t lo = (h0 & 0xFFFFu) | (h1 & 0xFFFFu) << 16;
            const uint64_t hi = (h0 >> 16) | (h1 & 0xFFFF0000u);
            const __mmask64 k = _cvtu64_mask64(lo | hi << 32);
            d.wq = _mm512_mask_add_epi8(d.wq, k, d.wq, _mm512_set1_epi8(16));
        }
        if constexpr (F::kTable) {
            const __m512i table = _mm512_broadcast_i32x4(
                _mm_load_si128(reinterpret_cast<const __m128i*>(kIQ4Biased.v)));
            d.wq = _mm512_shuffle_epi8(table, d.wq);
        }
        // Lanes other than kScaleLanes may hold any value (codes read as fp16); they are masked.
        d.sc = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)));
        return d;
    }

    // The last block of an odd count, as a pair whose second block is all zero (scales 0).
    static DecodedPair load_half(const uint8_t* blk) {
        alignas(64) uint8_t buf[64] = {};
        __builtin_memcpy(buf, blk, F::kBytes);
        return load(buf);
    }
};

template <class F> struct ActLayout {
    size_t corr_off, av_off, pk_off, row_bytes;
    int64_t nb, pairs;
    explicit ActLayout(int64_t cols) {
        nb = cols / 32;
        pairs = (nb + 1) / 2;
        corr_off = align64(static_cast<size_t>(cols));
        av_off = corr_off + (F::K ? static_cast<size_t>(pairs) * 64 : 0);
        pk_off = av_off + static_cast<size_t>(pairs) * 64;
        row_bytes = pk_off + align64(static_cast<size_t>(pairs) * 16);
    }
};

template <class F> size_t act_bytes(int64_t cols) {
    return ActLayout<F>(cols).row_bytes;
}

// q = round_even(x * 127 / amax) per 32-block, as prepare_act_a32 (so every level computes the
// same integer sums).
template <class F> void prep_act(const float* x, int64_t cols, uint8_t* dst) {
    const ActLayout<F> L(cols);
    auto* corr = reinterpret_cast<int32_t*>(dst + L.corr_off);
    auto* av = reinterpret_cast<float*>(dst + L.av_off);
    auto* pk = reinterpret_cast<float*>(dst + L.pk_off);
    for (int64_t b = 0; b < L.nb; ++b) {
        const __m512 v0 = _mm512_loadu_ps(x + 32 * b), v1 = _mm512_loadu_ps(x + 32 * b + 16);
        const float amax =
            _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        const __m512 vid = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
        const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, vid)); // |q| <= 127
        const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, vid));
        const int sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
        const int64_t p = b / 2;
        const int half = static_cast<int>(b % 2);
        if (half == 0 && b == L.nb - 1) // the missing second block of the last pair: zeros
            _mm512_store_si512(dst + 64 * p, _mm512_setzero_si512());
        _mm_store_si128(reinterpret_cast<__m128i*>(dst + 64 * p + 16 * half),
                        _mm512_cvtsepi32_epi8(q0));
        _mm_store_si128(reinterpret_cast<__m128i*>(dst + 64 * p + 32 + 16 * half),
                        _mm512_cvtsepi32_epi8(q1));
        if (half == 0) { // clear the pair (its second block may not exist)
            if constexpr (F::K != 0)
                _mm512_store_si512(corr + 16 * p, _mm512_setzero_si512());
            _mm512_store_ps(av + 16 * p, _mm512_setzero_ps());
            _mm_store_ps(pk + 4 * p, _mm_setzero_ps());
        }
        const float scale = amax / 127.0f;
        const int lane = half ? Pair<F>::kD1 : 0;
        av[16 * p + lane] = scale;
        pk[4 * p + half] = scale;
        if constexpr (F::kMins) {
            const float ds = scale * static_cast<float>(sum);
            av[16 * p + lane + 1] = ds;
            pk[4 * p + 2 + half] = ds;
        } else if constexpr (F::K != 0) {
            const int32_t c = -F::K * sum;
            corr[16 * p + 4 * half] = c;
            __builtin_memcpy(pk + 4 * p + 2 + half, &c, sizeof c);
        }
    }
}

constexpr int kChains = 2;               // accumulator chains per (row, token)
constexpr int64_t kPrefetchBytes = 8192; // weight stream distance of the matrix-vector loop

// One weight row x NT (<= 4) tokens.
template <class F, int NT> void q32x_row(const TileArgs& p, int r, int t0) {
    using P = Pair<F>;
    const ActLayout<F> L(p.cols);
    const uint8_t* w = p.w + static_cast<size_t>(r) * p.w_stride;
    const uint8_t *xq[NT], *xc[NT], *xv[NT], *xp[NT];
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        xq[t] = p.a + static_cast<size_t>(t0 + t) * p.a_stride;
        xc[t] = xq[t] + L.corr_off;
        xv[t] = xq[t] + L.av_off;
        xp[t] = xq[t] + L.pk_off;
    }
    const __m512i pk_to_av = _mm512_load_si512(P::kPkToAv.v);
    const __m512i cidx = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 3, 3, 3, 3, 2, 2, 2, 2);
    __m512 acc[kChains][NT], macc[kChains][NT];
    LLMWB_UNROLL for (int u = 0; u < kChains; ++u) LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        acc[u][t] = _mm512_setzero_ps();
        macc[u][t] = _mm512_setzero_ps();
    }

    auto step = [&](int64_t pr, auto half, __m512(&ac)[NT], __m512(&mc)[NT]) {
        constexpr bool kHalf = decltype(half)::value;
        if constexpr (NT == 1)
            _mm_prefetch(reinterpret_cast<const char*>(w + pr * 2 * F::kBytes + kPrefetchBytes),
                         _MM_HINT_T0);
        const DecodedPair wp =
            kHalf ? P::load_half(w + pr * 2 * F::kBytes) : P::load(w + pr * 2 * F::kBytes);
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            const __m512i x = _mm512_load_si512(xq[t] + 64 * pr);
            __m512i c = _mm512_setzero_si512(); // -K * sum(q_x) in lanes 0 and 8
            __m512 a;                           // d_x (and d_x * sum(q_x)) in the scale lanes
            if constexpr (NT == 1) {
                if constexpr (F::K != 0)
                    c = _mm512_load_si512(xc[t] + 64 * pr);
                a = _mm512_load_ps(reinterpret_cast<const float*>(xv[t] + 64 * pr));
            } else {
                const __m512 v = _mm512_castps128_ps512(
                    _mm_load_ps(reinterpret_cast<const float*>(xp[t] + 16 * pr)));
                if constexpr (F::K != 0)
                    c = _mm512_maskz_permutexvar_epi32(0x0011, cidx, _mm512_castps_si512(v));
                a = _mm512_maskz_permutexvar_ps(P::kScaleLanes, pk_to_av, v);
            }
            const __m512 prod = _mm512_maskz_mul_ps(P::kScaleLanes, wp.sc, a);
            const __m512i s = _mm512_dpbusd_epi32(c, wp.wq, x);
            ac[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s),
                                    _mm512_permutexvar_ps(P::spread_index(), prod), ac[t]);
            if constexpr (F::kMins)
                mc[t] = _mm512_mask_add_ps(mc[t], P::kMinLanes, mc[t], prod);
        }
    };
    const int64_t full = L.nb / 2;
    int64_t pr = 0;
    for (; pr + kChains <= full; pr += kChains)
        LLMWB_UNROLL for (int u = 0; u < kChains; ++u)
            step(pr + u, std::false_type{}, acc[u], macc[u]);
    // pr is even here: a last full pair goes to chain 0, the half block after it to chain 1.
    if (pr < full)
        step(pr, std::false_type{}, acc[0], macc[0]);
    if (L.nb % 2) {
        if (full % 2)
            step(full, std::true_type{}, acc[1], macc[1]);
        else
            step(full, std::true_type{}, acc[0], macc[0]);
    }
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        __m512 v = _mm512_add_ps(acc[0][t], acc[1][t]);
        if constexpr (F::kMins)
            v = _mm512_add_ps(v, _mm512_add_ps(macc[0][t], macc[1][t]));
        p.y[(t0 + t) * p.ldy + r] = hsum_ps_512(v);
    }
    static_assert(kChains == 2);
}

template <class F, int NT> void q32x_rows(const TileArgs& p, int t0) {
    for (int r = 0; r < p.nr; ++r)
        q32x_row<F, NT>(p, r, t0);
}

template <class F> void q32x_tile(const TileArgs& p) {
    int t = 0;
    for (; t + 4 <= p.nt; t += 4)
        q32x_rows<F, 4>(p, t);
    switch (p.nt - t) {
    case 3:
        q32x_rows<F, 3>(p, t);
        break;
    case 2:
        q32x_rows<F, 2>(p, t);
        break;
    case 1:
        q32x_rows<F, 1>(p, t);
        break;
    default:
        break;
    }
}

template <class F> constexpr MatmulKernel make() {
    return MatmulKernel{act_bytes<F>, prep_act<F>, q32x_tile<F>};
}

const MatmulKernel kQ4_1 = make<FmtQ4_1>();
const MatmulKernel kQ5_0 = make<FmtQ5_0>();
const MatmulKernel kQ5_1 = make<FmtQ5_1>();
const MatmulKernel kIQ4_NL = make<FmtIQ4_NL>();

} // namespace

const MatmulKernel* avx512_q32x_matmul_kernel(DType t) {
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
