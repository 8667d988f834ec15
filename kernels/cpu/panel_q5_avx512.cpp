// AVX-512 VNNI panel kernels for Q5_0, Q5_1, Q4_1 and IQ4_NL (layout: panel_q5.h).
//
// One zmm holds 4 consecutive weight codes (u8) of a panel's 16 rows: the nibbles of a 64-byte
// code chunk, | 16 through the group's qh mask register (5-bit types), or mapped through the
// IQ4_NL table (+ 128) with vpshufb. One vpdpbusd multiplies them by a broadcast 4-byte group of
// one token's int8 activations, so a row's int32 lane collects a whole 32-block in 8
// instructions, started at -K * sum(q_x) (exact). Then, per block, in block order:
// facc = fma(float(acc), d_w * d_x, facc) and, for Q5_1 / Q4_1, facc = fma(m_w, d_x * sum(q_x),
// facc). This per-(row, token) sequence is the same in every register block (1 or 2 panels x
// 1..6 tokens) and for every token count, so a token's outputs are bit-identical alone or in any
// batch.
//
// Matrix-vector (1 token): each thread streams its panels in order with software prefetch of
// each block column's lines as it starts. Matrix-matrix: 2 panels (32 rows) x up to 6 tokens per
// register block; the next two panels are prefetched into L2 meanwhile.
#include <algorithm>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/panel_q5.h"
#include "kernels/cpu/quant_blocks.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

constexpr int kQ5NR = 2;
constexpr int kQ5MaxNT = 6;

// Same rounding as the other activation quantizers: q = round_even(x * 127 / amax).
void q5_prep(const float* x, int64_t cols, uint8_t* dst) {
    const PanelQ5ActLayout L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* sum = reinterpret_cast<int32_t*>(dst + L.sum_off);
    for (int64_t b = 0; b < cols / 32; ++b) {
        const __m512 v0 = _mm512_loadu_ps(x + 32 * b), v1 = _mm512_loadu_ps(x + 32 * b + 16);
        const float amax =
            _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        const __m512 vid = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
        const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, vid));
        const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, vid));
        auto* out = reinterpret_cast<__m128i*>(dst + 32 * b);
        _mm_storeu_si128(out, _mm512_cvtsepi32_epi8(q0));
        _mm_storeu_si128(out + 1, _mm512_cvtsepi32_epi8(q1));
        d[b] = amax / 127.0f;
        sum[b] = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
    }
}

inline __m512i q5_nibbles(const uint8_t* codes, int g) {
    __m512i v = _mm512_loadu_si512(codes + 64 * (g % 4));
    if (g >= 4)
        v = _mm512_srli_epi16(v, 4);
    return _mm512_and_si512(v, _mm512_set1_epi8(0x0F));
}

inline __m512i q5_high(__m512i lo, const uint8_t* qh, int g) {
    __mmask64 k;
    __builtin_memcpy(&k, qh + 8 * g, 8);
    return _mm512_mask_add_epi8(lo, k, lo, _mm512_set1_epi8(16)); // bit 4 is clear in lo
}

// Group g (columns 4g .. 4g + 3) of a block column's codes as u8 [16 rows x 4].
template <class Panel, int Offset> struct WNib {
    using P = Panel;
    static constexpr int K = Offset;
    static __m512i group(const uint8_t* codes, const uint8_t* qh, int g) {
        const __m512i lo = q5_nibbles(codes, g);
        if constexpr (P::kHasH)
            return q5_high(lo, qh, g);
        else
            return lo;
    }
};
using WQ5_0 = WNib<Q5_0Panel, 16>;
using WQ5_1 = WNib<Q5_1Panel, 0>;
using WQ4_1 = WNib<Q4_1Panel, 0>;

struct WIQ4_NL {
    using P = IQ4_NLPanel;
    static constexpr int K = 128;
    static __m512i group(const uint8_t* codes, const uint8_t*, int g) {
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
        return _mm512_shuffle_epi8(table, q5_nibbles(codes, g));
    }
};

// Matrix-vector prefetch distance in the thread's stream, non-temporal (as panel_q32_avx512.cpp:
// 4 KiB ahead measured 1.2-1.3x over requesting each block column as it starts).
constexpr int64_t kQ5PrefetchBytes = 4096;

// Software prefetch of a byte range, spread over calls: each call advances to `target` (stream)
// or by `step` bytes (into L2, for the next register block of the matrix-matrix product).
struct Q5Prefetch {
    const char* next = nullptr;
    const char* end = nullptr;
    int64_t step = 0;
    void to(const char* target) {
        for (; next < target; next += 64)
            _mm_prefetch(next, _MM_HINT_NTA);
    }
    void chunk() {
        const char* stop = std::min(next + step, end);
        for (; next < stop; next += 64)
            _mm_prefetch(next, _MM_HINT_T1);
    }
};

// NR panels (w[i]) x NT tokens (xa[t]); y[t * ldy + 16 * i + row]. kStream: matrix-vector
// (prefetch each block column as it starts) rather than the matrix-matrix spread prefetch.
template <class W, int NR, int NT, bool kStream>
void q5_micro(const uint8_t* const* w, int64_t cols, const uint8_t* const* xa, float* y,
              int64_t ldy, Q5Prefetch& pf) {
    using P = typename W::P;
    const PanelQ5ActLayout L(cols);
    const int64_t nb = cols / 32;
    const float* xd[NT];
    const int32_t* xs[NT];
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        xd[t] = reinterpret_cast<const float*>(xa[t] + L.d_off);
        xs[t] = reinterpret_cast<const int32_t*>(xa[t] + L.sum_off);
    }
    __m512 facc[NR][NT];
    LLMWB_UNROLL for (int i = 0; i < NR; ++i) LLMWB_UNROLL for (int t = 0; t < NT; ++t) facc[i][t] =
        _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const auto o = P::offsets(nb, b);
        if constexpr (kStream)
            pf.to(reinterpret_cast<const char*>(w[0]) +
                  (b + 1) * static_cast<int64_t>(P::kColBytes) + kQ5PrefetchBytes);
        else
            pf.chunk();
        __m512i acc[NR][NT];
        if constexpr (NR == 1 && NT == 1) {
            // One row vector: two independent dependency chains (exact integer sums).
            __m512i a0 = _mm512_set1_epi32(-W::K * xs[0][b]), a1 = _mm512_setzero_si512();
            const uint8_t* xq = xa[0] + 32 * b;
            LLMWB_UNROLL for (int g = 0; g < 8; g += 2) {
                int32_t x0, x1;
                __builtin_memcpy(&x0, xq + 4 * g, 4);
                __builtin_memcpy(&x1, xq + 4 * g + 4, 4);
                a0 = _mm512_dpbusd_epi32(a0, W::group(w[0] + o.codes, w[0] + o.qh, g),
                                         _mm512_set1_epi32(x0));
                a1 = _mm512_dpbusd_epi32(a1, W::group(w[0] + o.codes, w[0] + o.qh, g + 1),
                                         _mm512_set1_epi32(x1));
            }
            acc[0][0] = _mm512_add_epi32(a0, a1);
        } else {
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m512i c0 = _mm512_set1_epi32(-W::K * xs[t][b]);
                LLMWB_UNROLL for (int i = 0; i < NR; ++i) acc[i][t] = c0;
            }
            LLMWB_UNROLL for (int g = 0; g < 8; ++g) {
                __m512i wv[NR];
                LLMWB_UNROLL for (int i = 0; i < NR; ++i) wv[i] =
                    W::group(w[i] + o.codes, w[i] + o.qh, g);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    int32_t xw;
                    __builtin_memcpy(&xw, xa[t] + 32 * b + 4 * g, 4);
                    const __m512i xb = _mm512_set1_epi32(xw);
                    LLMWB_UNROLL for (int i = 0; i < NR; ++i) acc[i][t] =
                        _mm512_dpbusd_epi32(acc[i][t], wv[i], xb);
                }
            }
        }
        __m512 dw[NR], mw[NR];
        LLMWB_UNROLL for (int i = 0; i < NR; ++i) {
            dw[i] =
                _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[i] + o.d)));
            if constexpr (P::kHasM)
                mw[i] = _mm512_cvtph_ps(
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[i] + o.m)));
        }
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            const __m512 dx = _mm512_set1_ps(xd[t][b]);
            LLMWB_UNROLL for (int i = 0; i < NR; ++i) facc[i][t] = _mm512_fmadd_ps(
                _mm512_cvtepi32_ps(acc[i][t]), _mm512_mul_ps(dw[i], dx), facc[i][t]);
            if constexpr (P::kHasM) {
                const __m512 sx = _mm512_set1_ps(xd[t][b] * static_cast<float>(xs[t][b]));
                LLMWB_UNROLL for (int i = 0; i < NR; ++i) facc[i][t] =
                    _mm512_fmadd_ps(mw[i], sx, facc[i][t]);
            }
        }
    }
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int i = 0; i < NR; ++i)
        _mm512_storeu_ps(y + t * ldy + 16 * i, facc[i][t]);
}

// q5_micro<W, NR, nt> for a run-time nt in 1 .. kQ5MaxNT and nr in 1 .. kQ5NR.
template <class W, int NR, int NT = 1>
void q5_micro_nt(int nt, const uint8_t* const* w, int64_t cols, const uint8_t* const* xa, float* y,
                 int64_t ldy, Q5Prefetch& pf) {
    if constexpr (NT < kQ5MaxNT)
        if (nt != NT)
            return q5_micro_nt<W, NR, NT + 1>(nt, w, cols, xa, y, ldy, pf);
    q5_micro<W, NR, NT, false>(w, cols, xa, y, ldy, pf);
}
template <class W, int NR = 1>
void q5_micro_nr(int nr, int nt, const uint8_t* const* w, int64_t cols, const uint8_t* const* xa,
                 float* y, int64_t ldy, Q5Prefetch& pf) {
    if constexpr (NR < kQ5NR)
        if (nr != NR)
            return q5_micro_nr<W, NR + 1>(nr, nt, w, cols, xa, y, ldy, pf);
    q5_micro_nt<W, NR>(nt, w, cols, xa, y, ldy, pf);
}

template <class W> void q5_panels(const PanelArgs& a, int64_t p0, int64_t p1) {
    const size_t panel_bytes = a.row_bytes * 16;
    if (a.n_tokens == 1) {
        Q5Prefetch pf;
        pf.next = reinterpret_cast<const char*>(a.w + static_cast<size_t>(p0) * panel_bytes);
        for (int64_t p = p0; p < p1; ++p) {
            const uint8_t* w = a.w + static_cast<size_t>(p) * panel_bytes;
            q5_micro<W, 1, 1, true>(&w, a.cols, &a.a, a.y + 16 * p, a.ldy, pf);
        }
        return;
    }
    // Token tiles as even as possible (32 tokens: 6, 6, 5, 5, 5, 5).
    const int64_t tiles = (a.n_tokens + kQ5MaxNT - 1) / kQ5MaxNT;
    const int64_t base = a.n_tokens / tiles, extra = a.n_tokens % tiles;
    const int64_t nb = a.cols / 32;
    for (int64_t p = p0; p < p1; p += kQ5NR) {
        const int nr = static_cast<int>(std::min<int64_t>(kQ5NR, p1 - p));
        const uint8_t* w[kQ5NR];
        for (int i = 0; i < kQ5NR; ++i)
            w[i] = a.w + static_cast<size_t>(p + std::min(i, nr - 1)) * panel_bytes;
        const int64_t next_panels = std::min<int64_t>(kQ5NR, p1 - p - nr);
        Q5Prefetch pf;
        pf.next = reinterpret_cast<const char*>(w[0] + nr * panel_bytes);
        pf.end = pf.next + next_panels * static_cast<int64_t>(panel_bytes);
        pf.step =
            (next_panels * static_cast<int64_t>(panel_bytes) / (tiles * nb) + 64) & ~int64_t{63};
        const uint8_t* xa[kQ5MaxNT];
        for (int64_t i = 0, t0 = 0; i < tiles; ++i) {
            const int nt = static_cast<int>(base + (i < extra ? 1 : 0));
            for (int t = 0; t < nt; ++t)
                xa[t] = a.a + static_cast<size_t>(t0 + t) * a.a_stride;
            float* y = a.y + t0 * a.ldy + 16 * p;
            q5_micro_nr<W>(nr, nt, w, a.cols, xa, y, a.ldy, pf);
            t0 += nt;
        }
    }
}

const PanelKernel kQ5_0{panel_q5_act_bytes, q5_prep, q5_panels<WQ5_0>};
const PanelKernel kQ5_1{panel_q5_act_bytes, q5_prep, q5_panels<WQ5_1>};
const PanelKernel kQ4_1{panel_q5_act_bytes, q5_prep, q5_panels<WQ4_1>};
const PanelKernel kIQ4_NL{panel_q5_act_bytes, q5_prep, q5_panels<WIQ4_NL>};

} // namespace

const PanelKernel* avx512_q5_panel_kernel(DType t) {
    switch (t) {
    case DType::Q5_0:
        return &kQ5_0;
    case DType::Q5_1:
        return &kQ5_1;
    case DType::Q4_1:
        return &kQ4_1;
    case DType::IQ4_NL:
        return &kIQ4_NL;
    default:
        return nullptr;
    }
}

} // namespace llmwb::kernels::detail
