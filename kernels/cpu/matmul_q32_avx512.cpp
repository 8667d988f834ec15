// AVX-512 VNNI kernels for the 32-element block types Q8_0 and Q4_0, register-blocked over up to
// 4 weight rows x 4 tokens: each weight block pair is decoded once per row and reused for every
// token, each activation block pair is loaded once per token and reused for every row.
//
// Integer products use vpdpbusd (u8 x s8 -> s32) with the weights as the unsigned operand:
//   Q8_0: w + 128 (xor 0x80);  Q4_0: the raw 4-bit codes (value = code - 8).
// The offset (128 or 8) times the activation block sum is removed by starting every dot product
// from a precomputed int32 vector per block pair (lane 0: -K * sum of block 2p, lane 8: the
// same for block 2p + 1, other lanes 0), so no per-row correction work is left.
//
// Activation row layout (prepared once per matmul, 64-byte aligned sections):
//   q     [align64(cols)]  int8 codes, natural order
//   corr  [pairs][16] int32  the start vectors above
//   dx    [pairs][16] float  [d(2p) x 8 | d(2p+1) x 8]; 0 for a missing last block
//   pk    [pairs][4]  the same packed: d(2p), d(2p+1), -K * sum(2p), -K * sum(2p+1)
// Matrix-vector reads corr/dx (fewer instructions); matrix-matrix reads pk and expands it with
// two permutes, so that 4 tokens of activations (1.25 bytes per element) stay in L1.
// The fp16 weight scales of a block pair are moved into [d0 x 8 | d1 x 8] with one vpermw and
// widened with one vcvtph2ps. Only AVX-512 F/BW/VL/VNNI are used (what the dispatch checks).
#include <type_traits>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant_blocks.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

struct Q32Layout {
    size_t corr_off, dx_off, pk_off, row_bytes;
    int64_t nb, pairs;
    explicit Q32Layout(int64_t cols) {
        nb = cols / 32;
        pairs = (nb + 1) / 2;
        corr_off = align64(static_cast<size_t>(cols));
        dx_off = corr_off + static_cast<size_t>(pairs) * 64;
        pk_off = dx_off + static_cast<size_t>(pairs) * 64;
        row_bytes = pk_off + align64(static_cast<size_t>(pairs) * 16);
    }
};

size_t q32_bytes(int64_t cols) {
    return Q32Layout(cols).row_bytes;
}

template <int kOffset> void prep_q32(const float* x, int64_t cols, uint8_t* dst) {
    const Q32Layout L(cols);
    auto* corr = reinterpret_cast<int32_t*>(dst + L.corr_off);
    auto* dx = reinterpret_cast<float*>(dst + L.dx_off);
    for (int64_t b = 0; b < L.nb; ++b) {
        const __m512 v0 = _mm512_loadu_ps(x + 32 * b), v1 = _mm512_loadu_ps(x + 32 * b + 16);
        const float amax =
            _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        const __m512 vid = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
        const __m512i q0 =
            _mm512_cvtps_epi32(_mm512_mul_ps(v0, vid)); // round to nearest even, |q| <= 127
        const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, vid));
        const int sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
        auto* out = reinterpret_cast<__m128i*>(dst + 32 * b);
        _mm_storeu_si128(out, _mm512_cvtsepi32_epi8(q0));
        _mm_storeu_si128(out + 1, _mm512_cvtsepi32_epi8(q1));
        const int64_t p = b / 2, half = b % 2;
        int32_t* c = corr + 16 * p;
        float* d = dx + 16 * p;
        if (half == 0) { // clear the pair (its second block may not exist)
            _mm512_store_si512(c, _mm512_setzero_si512());
            _mm512_store_ps(d, _mm512_setzero_ps());
        }
        c[8 * half] = -kOffset * sum;
        _mm256_store_ps(d + 8 * half, _mm256_set1_ps(amax / 127.0f));
        auto* pk = reinterpret_cast<float*>(dst + L.pk_off) + 4 * p;
        if (half == 0)
            _mm_store_ps(pk, _mm_setzero_ps());
        pk[half] = amax / 127.0f;
        const int32_t cv = -kOffset * sum;
        __builtin_memcpy(pk + 2 + half, &cv, sizeof cv);
    }
}

// word indices for vpermw: the two fp16 scales, [d0 x 8 | d1 x 8] in the low 256 bits.
template <int kBlockBytes> inline __m512i scale_index() {
    constexpr short w1 = kBlockBytes / 2; // word of the second block's d
    return _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, w1, w1, w1, w1, w1, w1,
                            w1, w1, 0, 0, 0, 0, 0, 0, 0, 0);
}

inline __m512 widen_scales(__m512i perm) {
    return _mm512_cvtph_ps(_mm512_castsi512_si256(perm));
}

// A weight block pair decoded as u8 codes matching 64 activation bytes, and its scales. Masked
// loads are avoided where possible: on this CPU (Zen 5) a masked load that misses the caches is
// very slow (Q4_0 streamed at 0.15 of the read bandwidth with one per block pair, 0.7 without).
// `end`: the first byte the tile may not read.
struct Q8_0Pair {
    static constexpr int kBytes = 34;
    static void load(const uint8_t* blk, const uint8_t*, __m512i* wq,
                     __m512* dw) { // 64 of 68 bytes: always safe
        const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
        const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + kBytes + 2));
        *wq = _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1),
                               _mm512_set1_epi8(static_cast<char>(0x80)));
        *dw =
            widen_scales(_mm512_permutexvar_epi16(scale_index<kBytes>(), _mm512_loadu_si512(blk)));
    }
    // The last block of an odd count: zero upper halves.
    static void load_half(const uint8_t* blk, __m512i* wq, __m512* dw) {
        const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
        *wq =
            _mm512_zextsi256_si512(_mm256_xor_si256(lo, _mm256_set1_epi8(static_cast<char>(0x80))));
        *dw = _mm512_castsi512_ps(_mm512_zextsi256_si512(_mm256_castps_si256(
            _mm256_set1_ps(_cvtsh_ss(*reinterpret_cast<const uint16_t*>(blk))))));
    }
};

struct Q4_0Pair {
    static constexpr int kBytes = 18;
    static void load(const uint8_t* blk, const uint8_t* end, __m512i* wq, __m512* dw) {
        // words 1..8 hold block 0's 16 code bytes, words 10..17 block 1's; each goes to two
        // 128-bit lanes, shifted by 0 (low nibbles: elements 0..15) and 4 (elements 16..31).
        const __m512i qidx =
            _mm512_set_epi16(17, 16, 15, 14, 13, 12, 11, 10, 17, 16, 15, 14, 13, 12, 11, 10, 8, 7,
                             6, 5, 4, 3, 2, 1, 8, 7, 6, 5, 4, 3, 2, 1);
        const __m512i shifts = _mm512_set_epi32(0x40004, 0x40004, 0x40004, 0x40004, 0, 0, 0, 0,
                                                0x40004, 0x40004, 0x40004, 0x40004, 0, 0, 0, 0);
        const __m512i raw = blk + 64 <= end
                                ? _mm512_loadu_si512(blk)
                                : _mm512_maskz_loadu_epi8((__mmask64{1} << (2 * kBytes)) - 1, blk);
        const __m512i q = _mm512_permutexvar_epi16(qidx, raw);
        *wq = _mm512_and_si512(_mm512_srlv_epi16(q, shifts), _mm512_set1_epi8(0x0F));
        *dw = widen_scales(_mm512_permutexvar_epi16(scale_index<kBytes>(), raw));
    }
    static void load_half(const uint8_t* blk, __m512i* wq, __m512* dw) {
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
        const __m256i both =
            _mm256_inserti128_si256(_mm256_castsi128_si256(raw), _mm_srli_epi16(raw, 4), 1);
        *wq = _mm512_zextsi256_si512(_mm256_and_si256(both, _mm256_set1_epi8(0x0F)));
        *dw = _mm512_castsi512_ps(_mm512_zextsi256_si512(_mm256_castps_si256(
            _mm256_set1_ps(_cvtsh_ss(*reinterpret_cast<const uint16_t*>(blk))))));
    }
};

// NR rows x NT tokens; rows r0.., tokens t0.. of the tile. U block pairs per loop iteration,
// each into its own accumulators (more independent FMA chains when NR x NT is small).
constexpr int64_t kPrefetchBytes = 8192; // ~8 rows of 896 Q8_0 weights ahead

template <class Pair, int NR, int NT, int U = 1> void q32_block(const TileArgs& p, int r0, int t0) {
    const Q32Layout L(p.cols);
    const uint8_t* w[NR];
    const uint8_t* end = p.w + static_cast<size_t>(p.nr) * p.w_stride;
    const uint8_t *xq[NT], *xc[NT], *xd[NT], *xp[NT];
    LLMWB_UNROLL for (int i = 0; i < NR; ++i) w[i] = p.w + static_cast<size_t>(r0 + i) * p.w_stride;
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        xq[t] = p.a + static_cast<size_t>(t0 + t) * p.a_stride;
        xc[t] = xq[t] + L.corr_off;
        xd[t] = xq[t] + L.dx_off;
        xp[t] = xq[t] + L.pk_off;
    }
    const __m512i didx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i cidx = _mm512_add_epi32(didx, _mm512_set1_epi32(2));
    __m512 acc[U][NR][NT];
    LLMWB_UNROLL for (int u = 0; u < U; ++u) LLMWB_UNROLL for (int i = 0; i < NR; ++i)
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[u][i][t] = _mm512_setzero_ps();

    auto step = [&](int64_t pr, auto half, __m512(&ac)[NR][NT]) {
        constexpr bool kHalf = decltype(half)::value;
        __m512i wq[NR];
        __m512 dw[NR];
        if constexpr (NR == 1 && NT == 1) // matrix-vector: keep the weight stream ahead
            _mm_prefetch(
                reinterpret_cast<const char*>(w[0] + pr * 2 * Pair::kBytes + kPrefetchBytes),
                _MM_HINT_T0);
        LLMWB_UNROLL for (int i = 0; i < NR; ++i) {
            if constexpr (kHalf)
                Pair::load_half(w[i] + pr * 2 * Pair::kBytes, &wq[i], &dw[i]);
            else
                Pair::load(w[i] + pr * 2 * Pair::kBytes, end, &wq[i], &dw[i]);
        }
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            const __m512i xv = kHalf ? _mm512_zextsi256_si512(_mm256_load_si256(
                                           reinterpret_cast<const __m256i*>(xq[t] + 64 * pr)))
                                     : _mm512_load_si512(xq[t] + 64 * pr);
            __m512i c;
            __m512 d;
            if constexpr (NT == 1) {
                c = _mm512_load_si512(xc[t] + 64 * pr);
                d = _mm512_load_ps(reinterpret_cast<const float*>(xd[t] + 64 * pr));
            } else {
                const __m512 v = _mm512_castps128_ps512(
                    _mm_load_ps(reinterpret_cast<const float*>(xp[t] + 16 * pr)));
                d = _mm512_permutexvar_ps(didx, v);
                c = _mm512_maskz_permutexvar_epi32(0x0101, cidx, _mm512_castps_si512(v));
            }
            LLMWB_UNROLL for (int i = 0; i < NR; ++i) {
                const __m512i s = _mm512_dpbusd_epi32(c, wq[i], xv);
                ac[i][t] =
                    _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dw[i], d), ac[i][t]);
            }
        }
    };
    const int64_t full = L.nb / 2;
    int64_t pr = 0;
    for (; pr + U <= full; pr += U)
        LLMWB_UNROLL for (int u = 0; u < U; ++u) step(pr + u, std::false_type{}, acc[u]);
    for (; pr < full; ++pr)
        step(pr, std::false_type{}, acc[0]);
    if (L.nb % 2)
        step(full, std::true_type{}, acc[0]);
    LLMWB_UNROLL for (int u = 1; u < U; ++u) LLMWB_UNROLL for (int i = 0; i < NR; ++i)
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[0][i][t] =
            _mm512_add_ps(acc[0][i][t], acc[u][i][t]);
    LLMWB_UNROLL for (int i = 0; i < NR; ++i) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
        p.y[(t0 + t) * p.ldy + r0 + i] = hsum_ps_512(acc[0][i][t]);
}

template <class Pair, int NT> void q32_rows(const TileArgs& p, int t0) {
    int r = 0;
    if constexpr (NT == 1) {
        // Matrix-vector: one row at a time, four block pairs per iteration into four
        // accumulators. Interleaving several rows is faster from cache but slower from memory
        // (one sequential stream per core suits the hardware prefetchers best: measured 0.45
        // of the read bandwidth with 4 rows, 0.85 with 1).
        for (; r < p.nr; ++r)
            q32_block<Pair, 1, 1, 4>(p, r, t0);
        return;
    }
    for (; r + 4 <= p.nr; r += 4)
        q32_block<Pair, 4, NT>(p, r, t0);
    for (; r < p.nr; ++r)
        q32_block<Pair, 1, NT>(p, r, t0);
}

template <class Pair> void q32_tile(const TileArgs& p) {
    int t = 0;
    for (; t + 4 <= p.nt; t += 4)
        q32_rows<Pair, 4>(p, t);
    switch (p.nt - t) {
    case 3:
        q32_rows<Pair, 3>(p, t);
        break;
    case 2:
        q32_rows<Pair, 2>(p, t);
        break;
    case 1:
        q32_rows<Pair, 1>(p, t);
        break;
    default:
        break;
    }
}

const MatmulKernel kQ8_0{q32_bytes, prep_q32<128>, q32_tile<Q8_0Pair>};
const MatmulKernel kQ4_0{q32_bytes, prep_q32<8>, q32_tile<Q4_0Pair>};

} // namespace

const MatmulKernel* avx512_q32_matmul_kernel(DType t) {
    switch (t) {
    case DType::Q8_0:
        return &kQ8_0;
    case DType::Q4_0:
        return &kQ4_0;
    default:
        return nullptr;
    }
}

} // namespace llmwb::kernels::detail
