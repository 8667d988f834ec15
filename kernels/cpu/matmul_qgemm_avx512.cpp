// AVX-512 VNNI matrix-matrix product for quantized weights (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL,
// Q4_K, Q6_K), used for n_tokens >= QGemm::min_tokens.
//
// Weights are repacked once per call, one group of kQGemmRows (32) rows at a time, into a
// per-thread panel (L2 resident) in which one zmm holds 4 consecutive weight codes (u8) of 16
// rows: codes[chunk of 32 elements][k-group g of 4][row vector rv][16 rows x 4 bytes]. One
// vpdpbusd then multiplies 16 rows by a broadcast 4-byte group of one token's int8
// activations, so the int32 accumulator lane of a row collects a whole scale block (32 or 16
// elements) in 8 (or 4) instructions; the block's float scales are applied once per block per
// 16 rows x token (cvt + mul + fma), and the outputs come out as contiguous rows of y.
//
// Weight codes are unsigned (Q8_0: q + 128, Q4_0/Q4_1/Q4_K: the 4-bit codes, Q5_0/Q5_1: the 5-bit
// codes, IQ4_NL: the table value + 128, Q6_K: the 6-bit codes); the code offset K (128, 8, 0, 16,
// 0, 128, 0, 32) is removed exactly by starting each block's accumulator at -K * (sum of the
// token's int8 activations over the block), precomputed per activation row. Q4_K's mins are
// applied in float: - dmin * m * d_x * sum(q_x) per 32-block; Q4_1/Q5_1's offsets likewise:
// + m * d_x * sum(q_x).
//
// Activations are quantized exactly as the tile kernels do (Q8_0/Q4_0: one scale per 32, K-types:
// one per 256), so only the float summation order differs from them. The arithmetic of one
// (row, token) does not depend on which other tokens share the call.
#include <algorithm>
#include <cstdlib>
#include <memory>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant_blocks.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

constexpr int kRV = kQGemmRows / 16; // row vectors per group
static_assert(kRV == 2);

// ---- activation rows --------------------------------------------------------------------------
// q [align64(cols)] int8 | d [cols / SB] float | corr [cols / CB] int32 (-K * sum q) |
// bs [cols / 32] float (kMins: sum q for Q4_K, d * sum q for the 32-element block types)
template <int SB, int CB, bool kMins> struct ActLayout {
    size_t d_off, corr_off, bs_off, row_bytes;
    explicit ActLayout(int64_t cols) {
        d_off = align64(static_cast<size_t>(cols));
        corr_off = d_off + align64(static_cast<size_t>(cols / SB) * sizeof(float));
        bs_off = corr_off + align64(static_cast<size_t>(cols / CB) * sizeof(int32_t));
        row_bytes = bs_off + (kMins ? align64(static_cast<size_t>(cols / 32) * sizeof(float)) : 0);
    }
};

template <class T> size_t act_bytes(int64_t cols) {
    return ActLayout<T::SB, T::CB, T::kMins>(cols).row_bytes;
}

// Same rounding as the other activation quantizers: q = round_even(x * 127 / amax).
template <class T> void prep_act(const float* x, int64_t cols, uint8_t* dst) {
    const ActLayout<T::SB, T::CB, T::kMins> L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* corr = reinterpret_cast<int32_t*>(dst + L.corr_off);
    auto* bs = reinterpret_cast<float*>(dst + L.bs_off);
    for (int64_t b = 0; b < cols / T::SB; ++b) {
        const float* xb = x + T::SB * b;
        __m512 m = _mm512_setzero_ps();
        for (int i = 0; i < T::SB; i += 16)
            m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(xb + i)));
        const float amax = _mm512_reduce_max_ps(m);
        const __m512 vid = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
        d[b] = amax / 127.0f;
        for (int i = 0; i < T::SB; i += 16) {
            const __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xb + i), vid));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + T::SB * b + i),
                             _mm512_cvtsepi32_epi8(q));
        }
    }
    const auto* q = reinterpret_cast<const int8_t*>(dst);
    for (int64_t c = 0; c < cols / 16; ++c) {
        const int s = _mm512_reduce_add_epi32(
            _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * c))));
        if constexpr (T::CB == 16)
            corr[c] = -T::K * s;
        else if (c % 2 == 0)
            corr[c / 2] = -T::K * s;
        else
            corr[c / 2] -= T::K * s;
        if constexpr (T::kMins) {
            if (c % 2 == 0)
                bs[c / 2] = static_cast<float>(s);
            else
                bs[c / 2] += static_cast<float>(s);
        }
    }
    if constexpr (T::kMins && T::SB == 32)
        for (int64_t b = 0; b < cols / 32; ++b)
            bs[b] *= d[b];
}

// ---- weight types -----------------------------------------------------------------------------
// codes(row, c): the 32 u8 codes of chunk c (elements 32c .. 32c + 31) of a row.
// scales(rows, stride, nr, cols, dw, mw): for 16 rows (those past nr: 0) per scale block (CB
// elements) the float scales into dw[cb * kQGemmRows + i], and for Q4_K per 32-block the float
// mins (dmin * m) into mw[c * kQGemmRows + i].

// The fp16 scales (first 2 bytes of every kBytes block) of nr (<= 16) rows into
// dw[b * kQGemmRows + i]; rows past nr get 0. Scalar 16-bit copies into [block][16] (cheaper
// than a gather per block here), then one conversion per block.
template <int kBytes, int kOff = 0>
void block_scales(const uint8_t* rows, size_t stride, int nr, int64_t cols, float* dw) {
    constexpr int64_t kStep = 64; // blocks per pass
    alignas(64) uint16_t h[kStep][16];
    for (int64_t b0 = 0; b0 < cols / 32; b0 += kStep) {
        const int64_t nb = std::min(kStep, cols / 32 - b0);
        for (int i = 0; i < 16; ++i) {
            if (i < nr) {
                const uint8_t* r = rows + static_cast<size_t>(i) * stride + kBytes * b0 + kOff;
                for (int64_t b = 0; b < nb; ++b)
                    __builtin_memcpy(&h[b][i], r + kBytes * b, 2);
            } else {
                for (int64_t b = 0; b < nb; ++b)
                    h[b][i] = 0;
            }
        }
        for (int64_t b = 0; b < nb; ++b)
            _mm512_store_ps(
                dw + (b0 + b) * kQGemmRows,
                _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(h[b]))));
    }
}

struct TQ8_0 {
    static constexpr int SB = 32, CB = 32, K = 128, NT = 6, kBlockBytes = 34, kMinTokens = 5;
    static constexpr bool kMins = false;
    static __m256i codes_blk(const uint8_t* blk) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
        return _mm256_xor_si256(q, _mm256_set1_epi8(static_cast<char>(0x80)));
    }
    static __m256i codes(const uint8_t* row, int64_t c) { return codes_blk(row + kBlockBytes * c); }
    static void scales(const uint8_t* rows, size_t stride, int nr, int64_t cols, float* dw,
                       float*) {
        block_scales<34>(rows, stride, nr, cols, dw);
    }
};

struct TQ4_0 {
    static constexpr int SB = 32, CB = 32, K = 8, NT = 6, kBlockBytes = 18, kMinTokens = 5;
    static constexpr bool kMins = false;
    static __m256i codes_blk(const uint8_t* blk) {
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
        const __m256i both =
            _mm256_inserti128_si256(_mm256_castsi128_si256(raw), _mm_srli_epi16(raw, 4), 1);
        return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
    }
    static __m256i codes(const uint8_t* row, int64_t c) { return codes_blk(row + kBlockBytes * c); }
    static void scales(const uint8_t* rows, size_t stride, int nr, int64_t cols, float* dw,
                       float*) {
        block_scales<18>(rows, stride, nr, cols, dw);
    }
};

// The 16 code bytes at blk + kQs as 32 u8 codes in element order (low nibbles, then high).
template <int kQs> inline __m256i nibbles(const uint8_t* blk) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + kQs));
    const __m256i both =
        _mm256_inserti128_si256(_mm256_castsi128_si256(raw), _mm_srli_epi16(raw, 4), 1);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// Q4_1, Q5_0, Q5_1, IQ4_NL: fp16 d first; kMins: fp16 m after it (value = d * code + m).
template <int kBytes, int kQs, int kQh, int kK, bool kHasMin, bool kTable> struct TQ32X {
    static constexpr int SB = 32, CB = 32, K = kK, NT = 6, kBlockBytes = kBytes, kMinTokens = 3;
    static constexpr bool kMins = kHasMin;
    static __m256i codes_blk(const uint8_t* blk) {
        __m256i q = nibbles<kQs>(blk);
        if constexpr (kQh >= 0) { // bit j of qh is bit 4 of element j
            uint32_t h;
            __builtin_memcpy(&h, blk + kQh, 4);
            q = _mm256_mask_add_epi8(q, _cvtu32_mask32(h), q, _mm256_set1_epi8(16));
        }
        if constexpr (kTable) { // kIQ4Values + 128
            alignas(16) static constexpr uint8_t kBiased[16] = {
                1, 24, 45, 63, 79, 93, 106, 118, 129, 141, 153, 166, 181, 197, 217, 241};
            q = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(
                                        _mm_load_si128(reinterpret_cast<const __m128i*>(kBiased))),
                                    q);
        }
        return q;
    }
    static __m256i codes(const uint8_t* row, int64_t c) { return codes_blk(row + kBlockBytes * c); }
    static void scales(const uint8_t* rows, size_t stride, int nr, int64_t cols, float* dw,
                       float* mw) {
        block_scales<kBytes>(rows, stride, nr, cols, dw);
        if constexpr (kMins)
            block_scales<kBytes, 2>(rows, stride, nr, cols, mw);
    }
};
using TQ4_1 = TQ32X<20, 4, -1, 0, true, false>;
using TQ5_0 = TQ32X<22, 6, 2, 16, false, false>;
using TQ5_1 = TQ32X<24, 8, 4, 0, true, false>;
using TIQ4_NL = TQ32X<18, 2, -1, 128, false, true>;
static_assert(TQ4_1::kBlockBytes == sizeof(BlockQ4_1) && TQ5_0::kBlockBytes == sizeof(BlockQ5_0) &&
              TQ5_1::kBlockBytes == sizeof(BlockQ5_1) &&
              TIQ4_NL::kBlockBytes == sizeof(BlockIQ4_NL));
static_assert(kIQ4Values[0] + 128 == 1 && kIQ4Values[8] + 128 == 129 &&
              kIQ4Values[15] + 128 == 241);

struct TQ4_K {
    static constexpr int SB = 256, CB = 32, K = 0, NT = 4, kBlockBytes = 0, kMinTokens = 10;
    static constexpr bool kMins = true;
    static __m256i codes(const uint8_t* row, int64_t c) {
        const auto* B = reinterpret_cast<const BlockQ4_K*>(row) + c / 8;
        const int j = static_cast<int>(c % 8);
        __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(B->qs + 32 * (j / 2)));
        if (j % 2)
            q = _mm256_srli_epi16(q, 4);
        return _mm256_and_si256(q, _mm256_set1_epi8(0x0F));
    }
    static void scales(const uint8_t* rows, size_t stride, int nr, int64_t cols, float* dw,
                       float* mw) {
        for (int i = 0; i < 16; ++i)
            row_scales(i < nr ? rows + static_cast<size_t>(i) * stride : nullptr, cols, dw + i,
                       mw + i);
    }
    static void row_scales(const uint8_t* row, int64_t cols, float* dw, float* mw) {
        if (!row) {
            for (int64_t j = 0; j < cols / 32; ++j)
                dw[j * kQGemmRows] = mw[j * kQGemmRows] = 0.0f;
            return;
        }
        const auto* B = reinterpret_cast<const BlockQ4_K*>(row);
        for (int64_t s = 0; s < cols / 256; ++s) {
            const float d = _cvtsh_ss(B[s].d), dmin = _cvtsh_ss(B[s].dmin);
            for (int j = 0; j < 8; ++j) {
                uint8_t sc, m;
                q4k_scale_min(B[s].scales, j, &sc, &m);
                dw[(8 * s + j) * kQGemmRows] = d * sc;
                mw[(8 * s + j) * kQGemmRows] = dmin * m;
            }
        }
    }
};

struct TQ6_K {
    static constexpr int SB = 256, CB = 16, K = 32, NT = 4, kBlockBytes = 0, kMinTokens = 10;
    static constexpr bool kMins = false;
    static __m256i codes(const uint8_t* row, int64_t c) {
        const auto* B = reinterpret_cast<const BlockQ6_K*>(row) + c / 8;
        const int h = static_cast<int>(c % 8) / 4, k = static_cast<int>(c % 4);
        __m256i lo =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(B->ql + 64 * h + 32 * (k & 1)));
        if (k >= 2)
            lo = _mm256_srli_epi16(lo, 4);
        lo = _mm256_and_si256(lo, _mm256_set1_epi8(0x0F));
        __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(B->qh + 32 * h));
        switch (k) { // bits 2k, 2k + 1 to bits 4, 5
        case 0:
            hi = _mm256_slli_epi16(hi, 4);
            break;
        case 1:
            hi = _mm256_slli_epi16(hi, 2);
            break;
        case 3:
            hi = _mm256_srli_epi16(hi, 2);
            break;
        default:
            break;
        }
        return _mm256_or_si256(lo, _mm256_and_si256(hi, _mm256_set1_epi8(0x30)));
    }
    static void scales(const uint8_t* rows, size_t stride, int nr, int64_t cols, float* dw,
                       float*) {
        for (int i = 0; i < 16; ++i)
            row_scales(i < nr ? rows + static_cast<size_t>(i) * stride : nullptr, cols, dw + i);
    }
    static void row_scales(const uint8_t* row, int64_t cols, float* dw) {
        if (!row) {
            for (int64_t j = 0; j < cols / 16; ++j)
                dw[j * kQGemmRows] = 0.0f;
            return;
        }
        const auto* B = reinterpret_cast<const BlockQ6_K*>(row);
        for (int64_t s = 0; s < cols / 256; ++s) {
            const float d = _cvtsh_ss(B[s].d);
            for (int j = 0; j < 16; ++j)
                dw[(16 * s + j) * kQGemmRows] = d * static_cast<float>(B[s].scales[j]);
        }
    }
};

// ---- packing ----------------------------------------------------------------------------------
// Panel of one row group: codes [chunks][8][kRV][64] | dw [cols / CB][kQGemmRows] float |
// mw [cols / 32][kQGemmRows] float (Q4_K).
template <class T> struct PanelLayout {
    size_t dw_off, mw_off, bytes;
    explicit PanelLayout(int64_t cols) {
        dw_off = static_cast<size_t>(cols) * kQGemmRows;
        mw_off = dw_off + static_cast<size_t>(cols / T::CB) * kQGemmRows * sizeof(float);
        bytes =
            mw_off + (T::kMins ? static_cast<size_t>(cols / 32) * kQGemmRows * sizeof(float) : 0);
    }
};

// 16 rows x 8 dwords -> 8 vectors of (dword g of rows 0..15), stored at out + g * stride.
inline void transpose_store(const __m256i r[16], uint8_t* out, size_t stride) {
    __m512i z[8], a[8], b[8];
    LLMWB_UNROLL for (int i = 0; i < 8; ++i) z[i] =
        _mm512_inserti64x4(_mm512_castsi256_si512(r[i]), r[i + 8], 1);
    LLMWB_UNROLL for (int i = 0; i < 8; i += 2) {
        a[i] = _mm512_unpacklo_epi32(z[i], z[i + 1]);
        a[i + 1] = _mm512_unpackhi_epi32(z[i], z[i + 1]);
    }
    // b[4h + j]: rows 4h..4h+3 (and + 8), per 128-bit lane: dword j (lanes 0, 2) or j + 4 (1, 3)
    LLMWB_UNROLL for (int h = 0; h < 2; ++h) {
        b[4 * h + 0] = _mm512_unpacklo_epi64(a[4 * h], a[4 * h + 2]);
        b[4 * h + 1] = _mm512_unpackhi_epi64(a[4 * h], a[4 * h + 2]);
        b[4 * h + 2] = _mm512_unpacklo_epi64(a[4 * h + 1], a[4 * h + 3]);
        b[4 * h + 3] = _mm512_unpackhi_epi64(a[4 * h + 1], a[4 * h + 3]);
    }
    const __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
    const __m512i hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    LLMWB_UNROLL for (int j = 0; j < 4; ++j) {
        _mm512_store_si512(out + j * stride, _mm512_permutex2var_epi64(b[j], lo, b[4 + j]));
        _mm512_store_si512(out + (j + 4) * stride, _mm512_permutex2var_epi64(b[j], hi, b[4 + j]));
    }
}

template <class T>
void pack_group(const uint8_t* w, size_t w_stride, int nr, int64_t cols, uint8_t* panel) {
    const PanelLayout<T> P(cols);
    const int64_t chunks = cols / 32;
    auto* dw = reinterpret_cast<float*>(panel + P.dw_off);
    auto* mw = reinterpret_cast<float*>(panel + P.mw_off);
    for (int rv = 0; rv < kRV; ++rv) {
        const int hr = std::min(16, nr - 16 * rv);
        uint8_t* out = panel + static_cast<size_t>(rv) * 64;
        if (hr <= 0) { // no rows left: zero codes and scales
            for (int64_t c = 0; c < chunks; ++c)
                for (int g = 0; g < 8; ++g)
                    _mm512_store_si512(out + static_cast<size_t>(c * 8 + g) * kRV * 64,
                                       _mm512_setzero_si512());
            for (int64_t b = 0; b < cols / T::CB; ++b)
                _mm512_store_ps(dw + b * kQGemmRows + 16 * rv, _mm512_setzero_ps());
            if constexpr (T::kMins)
                for (int64_t b = 0; b < cols / 32; ++b)
                    _mm512_store_ps(mw + b * kQGemmRows + 16 * rv, _mm512_setzero_ps());
            continue;
        }
        const uint8_t* base = w + static_cast<size_t>(16 * rv) * w_stride;
        if constexpr (T::kBlockBytes > 0) {
            if (hr == 16) { // 8 row pointers (+ 8 rows further), advanced block by block
                const uint8_t* p[8];
                for (int i = 0; i < 8; ++i)
                    p[i] = base + static_cast<size_t>(i) * w_stride;
                const size_t s8 = 8 * w_stride;
                alignas(32) uint16_t h[16];  // the blocks' fp16 scales, copied on the way
                alignas(32) uint16_t hm[16]; // and their fp16 offsets m (kMins)
                for (int64_t c = 0; c < chunks; ++c) {
                    __m256i r[16];
                    LLMWB_UNROLL for (int i = 0; i < 8; ++i) {
                        r[i] = T::codes_blk(p[i]);
                        r[i + 8] = T::codes_blk(p[i] + s8);
                        __builtin_memcpy(&h[i], p[i], 2);
                        __builtin_memcpy(&h[i + 8], p[i] + s8, 2);
                        if constexpr (T::kMins) {
                            __builtin_memcpy(&hm[i], p[i] + 2, 2);
                            __builtin_memcpy(&hm[i + 8], p[i] + s8 + 2, 2);
                        }
                        p[i] += T::kBlockBytes;
                    }
                    transpose_store(r, out + static_cast<size_t>(c) * 8 * kRV * 64, kRV * 64);
                    _mm512_store_ps(
                        dw + c * kQGemmRows + 16 * rv,
                        _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(h))));
                    if constexpr (T::kMins)
                        _mm512_store_ps(mw + c * kQGemmRows + 16 * rv,
                                        _mm512_cvtph_ps(_mm256_load_si256(
                                            reinterpret_cast<const __m256i*>(hm))));
                }
                continue;
            }
        }
        if (hr == 16) {
            for (int64_t c = 0; c < chunks; ++c) {
                __m256i r[16];
                LLMWB_UNROLL for (int i = 0; i < 16; ++i) r[i] =
                    T::codes(base + static_cast<size_t>(i) * w_stride, c);
                transpose_store(r, out + static_cast<size_t>(c) * 8 * kRV * 64, kRV * 64);
            }
        } else {
            for (int64_t c = 0; c < chunks; ++c) {
                __m256i r[16];
                for (int i = 0; i < 16; ++i)
                    r[i] = i < hr ? T::codes(base + static_cast<size_t>(i) * w_stride, c)
                                  : _mm256_setzero_si256();
                transpose_store(r, out + static_cast<size_t>(c) * 8 * kRV * 64, kRV * 64);
            }
        }
        T::scales(base, w_stride, hr, cols, dw + 16 * rv, mw + 16 * rv);
    }
}

// ---- microkernel: 32 rows x NT tokens (NT <= T::NT: 6 for Q8_0/Q4_0, 4 for the K-quants) ---

// Prefetch of the next row group's weights, spread over the microkernel calls of this group so
// that reading them from memory overlaps with the computation (pf_step bytes per chunk).
struct Prefetch {
    const char* next;
    const char* end;
    int64_t step;
    void chunk() {
        const char* stop = std::min(next + step, end);
        for (; next < stop; next += 64)
            _mm_prefetch(next, _MM_HINT_T1);
    }
};

template <class T, int NT>
void micro(const uint8_t* panel, int64_t cols, const uint8_t* const* xa, float* y, int64_t ldy,
           int nr, Prefetch& pf) {
    const ActLayout<T::SB, T::CB, T::kMins> L(cols);
    const PanelLayout<T> P(cols);
    const auto* dwp = reinterpret_cast<const float*>(panel + P.dw_off);
    const auto* mwp = reinterpret_cast<const float*>(panel + P.mw_off);
    const float* xd[NT];
    const int32_t* xc[NT];
    const float* xs[NT];
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        xd[t] = reinterpret_cast<const float*>(xa[t] + L.d_off);
        xc[t] = reinterpret_cast<const int32_t*>(xa[t] + L.corr_off);
        xs[t] = reinterpret_cast<const float*>(xa[t] + L.bs_off);
    }
    constexpr int kSubs = 32 / T::CB;  // scale blocks per chunk
    constexpr int kGroups = T::CB / 4; // k-groups per scale block
    constexpr int kChunksPerSB = T::SB / 32;
    __m512 facc[kRV][NT], sacc[kRV][NT];
    LLMWB_UNROLL for (int v = 0; v < kRV; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        facc[v][t] = _mm512_setzero_ps();
        sacc[v][t] = _mm512_setzero_ps();
    }
    const int64_t chunks = cols / 32;
    for (int64_t c = 0; c < chunks; ++c) {
        const uint8_t* wc = panel + static_cast<size_t>(c) * 8 * kRV * 64;
        pf.chunk();
        LLMWB_UNROLL for (int s = 0; s < kSubs; ++s) {
            const int64_t cb = c * kSubs + s;
            __m512i acc[kRV][NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m512i c0 = T::K ? _mm512_set1_epi32(xc[t][cb]) : _mm512_setzero_si512();
                LLMWB_UNROLL for (int v = 0; v < kRV; ++v) acc[v][t] = c0;
            }
            LLMWB_UNROLL for (int g = s * kGroups; g < (s + 1) * kGroups; ++g) {
                __m512i wv[kRV];
                LLMWB_UNROLL for (int v = 0; v < kRV; ++v) wv[v] =
                    _mm512_load_si512(wc + (g * kRV + v) * 64);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    int32_t xw;
                    __builtin_memcpy(&xw, xa[t] + 32 * c + 4 * g, 4);
                    const __m512i xb = _mm512_set1_epi32(xw);
                    LLMWB_UNROLL for (int v = 0; v < kRV; ++v) acc[v][t] =
                        _mm512_dpbusd_epi32(acc[v][t], wv[v], xb);
                }
            }
            __m512 dw[kRV];
            LLMWB_UNROLL for (int v = 0; v < kRV; ++v) dw[v] =
                _mm512_load_ps(dwp + cb * kQGemmRows + 16 * v);
            if constexpr (T::SB == 32) {
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const __m512 dx = _mm512_set1_ps(xd[t][c]);
                    LLMWB_UNROLL for (int v = 0; v < kRV; ++v) facc[v][t] = _mm512_fmadd_ps(
                        _mm512_cvtepi32_ps(acc[v][t]), _mm512_mul_ps(dw[v], dx), facc[v][t]);
                }
            } else {
                const bool first = c % kChunksPerSB == 0 && s == 0;
                LLMWB_UNROLL for (int t = 0; t < NT; ++t)
                    LLMWB_UNROLL for (int v = 0; v < kRV; ++v) {
                    const __m512 f = _mm512_cvtepi32_ps(acc[v][t]);
                    sacc[v][t] =
                        first ? _mm512_mul_ps(f, dw[v]) : _mm512_fmadd_ps(f, dw[v], sacc[v][t]);
                }
            }
        }
        if constexpr (T::kMins) {
            __m512 mw[kRV];
            LLMWB_UNROLL for (int v = 0; v < kRV; ++v) mw[v] =
                _mm512_load_ps(mwp + c * kQGemmRows + 16 * v);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m512 bs = _mm512_set1_ps(xs[t][c]);
                if constexpr (T::SB == 32) // + m * d_x * sum(q_x)
                    LLMWB_UNROLL for (int v = 0; v < kRV; ++v) facc[v][t] =
                        _mm512_fmadd_ps(mw[v], bs, facc[v][t]);
                else // - dmin * m * sum(q_x), times d_x at the end of the super-block
                    LLMWB_UNROLL for (int v = 0; v < kRV; ++v) sacc[v][t] =
                        _mm512_fnmadd_ps(mw[v], bs, sacc[v][t]);
            }
        }
        if constexpr (T::SB != 32) {
            if (c % kChunksPerSB == kChunksPerSB - 1) {
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    const __m512 dx = _mm512_set1_ps(xd[t][c / kChunksPerSB]);
                    LLMWB_UNROLL for (int v = 0; v < kRV; ++v) facc[v][t] =
                        _mm512_fmadd_ps(sacc[v][t], dx, facc[v][t]);
                }
            }
        }
    }
    LLMWB_UNROLL for (int v = 0; v < kRV; ++v) {
        const int n = nr - 16 * v;
        if (n <= 0)
            break;
        const auto m = static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << n) - 1);
        LLMWB_UNROLL for (int t = 0; t < NT; ++t)
            _mm512_mask_storeu_ps(y + t * ldy + 16 * v, m, facc[v][t]);
    }
}

template <class T> void gemm_rows(const QGemmArgs& a, int64_t r0, int64_t r1) {
    thread_local AlignedBuffer buf;
    constexpr int kNT = T::NT;
    uint8_t* panel = buf.get(PanelLayout<T>(a.cols).bytes);
    const int64_t chunks = a.cols / 32;
    const int64_t tiles = (a.n_tokens + kNT - 1) / kNT;
    for (int64_t r = r0; r < r1; r += kQGemmRows) {
        const int nr = static_cast<int>(std::min<int64_t>(kQGemmRows, r1 - r));
        pack_group<T>(a.w + static_cast<size_t>(r) * a.w_stride, a.w_stride, nr, a.cols, panel);
        const auto* next =
            reinterpret_cast<const char*>(a.w + static_cast<size_t>(r + nr) * a.w_stride);
        const int64_t next_rows = std::min<int64_t>(kQGemmRows, r1 - r - nr);
        const int64_t next_bytes = next_rows * static_cast<int64_t>(a.w_stride);
        Prefetch pf{next, next + next_bytes, (next_bytes / (tiles * chunks) + 64) & ~int64_t{63}};
        // Tiles as even as possible (32 tokens: 6,6,5,5,5,5 rather than 6 x 5 + 2).
        const int64_t base = a.n_tokens / tiles, extra = a.n_tokens % tiles;
        const uint8_t* xa[kNT];
        for (int64_t i = 0, t0 = 0; i < tiles; ++i) {
            const int nt = static_cast<int>(base + (i < extra ? 1 : 0));
            for (int t = 0; t < nt; ++t)
                xa[t] = a.acts + static_cast<size_t>(t0 + t) * a.a_stride;
            float* y = a.y + t0 * a.ldy + r;
            switch (nt) {
            case 1:
                micro<T, 1>(panel, a.cols, xa, y, a.ldy, nr, pf);
                break;
            case 2:
                micro<T, 2>(panel, a.cols, xa, y, a.ldy, nr, pf);
                break;
            case 3:
                micro<T, 3>(panel, a.cols, xa, y, a.ldy, nr, pf);
                break;
            case 4:
                if constexpr (kNT >= 4)
                    micro<T, 4>(panel, a.cols, xa, y, a.ldy, nr, pf);
                break;
            case 5:
                if constexpr (kNT >= 5)
                    micro<T, 5>(panel, a.cols, xa, y, a.ldy, nr, pf);
                break;
            case 6:
                if constexpr (kNT >= 6)
                    micro<T, 6>(panel, a.cols, xa, y, a.ldy, nr, pf);
                break;
            default:
                break;
            }
            t0 += nt;
        }
        static_assert(kNT >= 3 && kNT <= 6);
    }
}

// Crossover with the tile kernels (llmwb-bench-kernels --tokens 2,3,4,5,8,12,16): ~5 tokens for
// Q8_0/Q4_0, ~3 for Q4_1/Q5_0/Q5_1/IQ4_NL (their tile kernels block one row at a time), ~10 for
// the K-quants (their codes and scales cost more to repack): T::kMinTokens.
template <class T> constexpr QGemm make() {
    return QGemm{T::kMinTokens, act_bytes<T>, prep_act<T>, gemm_rows<T>};
}

constexpr QGemm kQ8_0 = make<TQ8_0>();
constexpr QGemm kQ4_0 = make<TQ4_0>();
constexpr QGemm kQ4_1 = make<TQ4_1>();
constexpr QGemm kQ5_0 = make<TQ5_0>();
constexpr QGemm kQ5_1 = make<TQ5_1>();
constexpr QGemm kIQ4_NL = make<TIQ4_NL>();
constexpr QGemm kQ4_K = make<TQ4_K>();
constexpr QGemm kQ6_K = make<TQ6_K>();

} // namespace

const QGemm* avx512_quant_gemm(DType t) {
    switch (t) {
    case DType::Q8_0:
        return &kQ8_0;
    case DType::Q4_0:
        return &kQ4_0;
    case DType::Q4_1:
        return &kQ4_1;
    case DType::Q5_0:
        return &kQ5_0;
    case DType::Q5_1:
        return &kQ5_1;
    case DType::IQ4_NL:
        return &kIQ4_NL;
    case DType::Q4_K:
        return &kQ4_K;
    case DType::Q6_K:
        return &kQ6_K;
    default:
        return nullptr;
    }
}

} // namespace llmwb::kernels::detail
