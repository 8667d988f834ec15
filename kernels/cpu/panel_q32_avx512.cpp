// AVX-512 VNNI panel kernels for Q8_0 and Q4_0 (layout: panel_q32.h).
//
// One zmm holds 4 consecutive weight codes (u8) of a panel's 16 rows; one vpdpbusd multiplies
// them by a broadcast 4-byte group of one token's int8 activations, so a row's int32 lane
// collects a whole 32-block in 8 instructions, started at -K * sum(q_x) (exact). Then, per block,
// in block order: facc = fma(float(acc), d_w[16 rows] * d_x, facc). This per-(row, token)
// sequence is the same in every register block (1 or 2 panels x 1..6 tokens) and for every token
// count, so a token's outputs are bit-identical alone or in any batch.
//
// Matrix-vector (1 token): each thread streams its panels in order (one sequential stream) with
// software prefetch of each block column's lines as it starts. Matrix-matrix: 2 panels (32 rows) x
// up to 6 tokens per register block; the panels stay in L1/L2 while every token tile sweeps them,
// and the next two panels are prefetched into L2 meanwhile.
#include <algorithm>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/panel_q32.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

// Matrix-matrix register block: kNR panels x up to kMaxNT tokens (single-thread L2-resident
// 64x4864 at 32 tokens: 2 x 6, 2 x 5, 2 x 7 within 2%; 3 x 4 -5%, 1 x 8 -12%).
constexpr int kNR = 2;
constexpr int kMaxNT = 6;

// Same rounding as the other activation quantizers: q = round_even(x * 127 / amax).
template <int K> void prep(const float* x, int64_t cols, uint8_t* dst) {
    const PanelA32Layout L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* corr = reinterpret_cast<int32_t*>(dst + L.corr_off);
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
        corr[b] = -K * _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
    }
}

// Group g (columns 4g .. 4g + 3) of a block column's codes as u8 [16 rows x 4].
struct WQ8_0 {
    using P = Q8_0Panel;
    static constexpr int K = 128;
    static __m512i group(const uint8_t* codes, int g) {
        return _mm512_xor_si512(_mm512_loadu_si512(codes + 64 * g),
                                _mm512_set1_epi8(static_cast<char>(0x80)));
    }
};
struct WQ4_0 {
    using P = Q4_0Panel;
    static constexpr int K = 8;
    static __m512i group(const uint8_t* codes, int g) {
        __m512i v = _mm512_loadu_si512(codes + 64 * (g % 4));
        if (g >= 4)
            v = _mm512_srli_epi16(v, 4);
        return _mm512_and_si512(v, _mm512_set1_epi8(0x0F));
    }
};

// Software prefetch of a byte range, spread over calls: each call advances to `target` (stream)
// or by `step` bytes (into L2, for the next register block of the matrix-matrix product).
struct Prefetch {
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

// Matrix-vector prefetch distance in the thread's stream, non-temporal (weights are read once
// per token). Measured on the Qwen2.5-1.5B matrices in decode order (2 threads, variants
// interleaved in one process, a loaded host): Q8_0 86.6 -> 72.7 ms per token and Q4_0 49.5 ->
// 37.8 ms with 4 KiB ahead instead of 0 (each block column's lines requested as it starts),
// ~0.9 of a plain read of the same bytes; 2 and 8 KiB within noise of 4.
constexpr int64_t kPrefetchBytes = 4096;

// NR panels (w[i]) x NT tokens (xa[t]); y[t * ldy + 16 * i + row]. kStream: matrix-vector
// (prefetch ahead in the stream) rather than the matrix-matrix spread prefetch.
template <class W, int NR, int NT, bool kStream>
void micro(const uint8_t* const* w, int64_t cols, const uint8_t* const* xa, float* y, int64_t ldy,
           Prefetch& pf) {
    using P = typename W::P;
    const PanelA32Layout L(cols);
    const int64_t nb = cols / 32;
    const float* xd[NT];
    const int32_t* xc[NT];
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        xd[t] = reinterpret_cast<const float*>(xa[t] + L.d_off);
        xc[t] = reinterpret_cast<const int32_t*>(xa[t] + L.corr_off);
    }
    __m512 facc[NR][NT];
    LLMWB_UNROLL for (int i = 0; i < NR; ++i) LLMWB_UNROLL for (int t = 0; t < NT; ++t) facc[i][t] =
        _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        size_t sc = 0, cd = 0;
        P::offsets(nb, b, &sc, &cd);
        if constexpr (kStream)
            pf.to(reinterpret_cast<const char*>(w[0]) +
                  (b + 1) * static_cast<int64_t>(P::kColBytes) + kPrefetchBytes);
        else
            pf.chunk();
        __m512i acc[NR][NT];
        if constexpr (NR == 1 && NT == 1) {
            // One row vector: two independent dependency chains (exact integer sums).
            __m512i a0 = _mm512_set1_epi32(xc[0][b]), a1 = _mm512_setzero_si512();
            const uint8_t* xq = xa[0] + 32 * b;
            LLMWB_UNROLL for (int g = 0; g < 8; g += 2) {
                int32_t x0, x1;
                __builtin_memcpy(&x0, xq + 4 * g, 4);
                __builtin_memcpy(&x1, xq + 4 * g + 4, 4);
                a0 = _mm512_dpbusd_epi32(a0, W::group(w[0] + cd, g), _mm512_set1_epi32(x0));
                a1 = _mm512_dpbusd_epi32(a1, W::group(w[0] + cd, g + 1), _mm512_set1_epi32(x1));
            }
            acc[0][0] = _mm512_add_epi32(a0, a1);
        } else {
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m512i c0 = _mm512_set1_epi32(xc[t][b]);
                LLMWB_UNROLL for (int i = 0; i < NR; ++i) acc[i][t] = c0;
            }
            LLMWB_UNROLL for (int g = 0; g < 8; ++g) {
                __m512i wv[NR];
                LLMWB_UNROLL for (int i = 0; i < NR; ++i) wv[i] = W::group(w[i] + cd, g);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    int32_t xw;
                    __builtin_memcpy(&xw, xa[t] + 32 * b + 4 * g, 4);
                    const __m512i xb = _mm512_set1_epi32(xw);
                    LLMWB_UNROLL for (int i = 0; i < NR; ++i) acc[i][t] =
                        _mm512_dpbusd_epi32(acc[i][t], wv[i], xb);
                }
            }
        }
        __m512 dw[NR];
        LLMWB_UNROLL for (int i = 0; i < NR; ++i) dw[i] =
            _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[i] + sc)));
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            const __m512 dx = _mm512_set1_ps(xd[t][b]);
            LLMWB_UNROLL for (int i = 0; i < NR; ++i) facc[i][t] = _mm512_fmadd_ps(
                _mm512_cvtepi32_ps(acc[i][t]), _mm512_mul_ps(dw[i], dx), facc[i][t]);
        }
    }
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int i = 0; i < NR; ++i)
        _mm512_storeu_ps(y + t * ldy + 16 * i, facc[i][t]);
}

// micro<W, NR, nt> for a run-time nt in 1 .. kMaxNT and nr in 1 .. kNR.
template <class W, int NR, int NT = 1>
void micro_nt(int nt, const uint8_t* const* w, int64_t cols, const uint8_t* const* xa, float* y,
              int64_t ldy, Prefetch& pf) {
    if constexpr (NT < kMaxNT)
        if (nt != NT)
            return micro_nt<W, NR, NT + 1>(nt, w, cols, xa, y, ldy, pf);
    micro<W, NR, NT, false>(w, cols, xa, y, ldy, pf);
}
template <class W, int NR = 1>
void micro_nr(int nr, int nt, const uint8_t* const* w, int64_t cols, const uint8_t* const* xa,
              float* y, int64_t ldy, Prefetch& pf) {
    if constexpr (NR < kNR)
        if (nr != NR)
            return micro_nr<W, NR + 1>(nr, nt, w, cols, xa, y, ldy, pf);
    micro_nt<W, NR>(nt, w, cols, xa, y, ldy, pf);
}

template <class W> void panels(const PanelArgs& a, int64_t p0, int64_t p1) {
    const size_t panel_bytes = a.row_bytes * 16;
    if (a.n_tokens == 1) {
        Prefetch pf;
        const auto* first =
            reinterpret_cast<const char*>(a.w + static_cast<size_t>(p0) * panel_bytes);
        pf.next = first; // the first kPrefetchBytes are requested by the first block
        for (int64_t p = p0; p < p1; ++p) {
            const uint8_t* w = a.w + static_cast<size_t>(p) * panel_bytes;
            micro<W, 1, 1, true>(&w, a.cols, &a.a, a.y + 16 * p, a.ldy, pf);
        }
        return;
    }
    // Token tiles as even as possible (32 tokens: 6, 6, 5, 5, 5, 5).
    const int64_t tiles = (a.n_tokens + kMaxNT - 1) / kMaxNT;
    const int64_t base = a.n_tokens / tiles, extra = a.n_tokens % tiles;
    const int64_t nb = a.cols / 32;
    for (int64_t p = p0; p < p1; p += kNR) {
        const int nr = static_cast<int>(std::min<int64_t>(kNR, p1 - p));
        const uint8_t* w[kNR];
        for (int i = 0; i < kNR; ++i)
            w[i] = a.w + static_cast<size_t>(p + std::min(i, nr - 1)) * panel_bytes;
        const int64_t next_panels = std::min<int64_t>(kNR, p1 - p - nr);
        Prefetch pf;
        pf.next = reinterpret_cast<const char*>(w[0] + nr * panel_bytes);
        pf.end = pf.next + next_panels * static_cast<int64_t>(panel_bytes);
        pf.step =
            (next_panels * static_cast<int64_t>(panel_bytes) / (tiles * nb) + 64) & ~int64_t{63};
        const uint8_t* xa[kMaxNT];
        for (int64_t i = 0, t0 = 0; i < tiles; ++i) {
            const int nt = static_cast<int>(base + (i < extra ? 1 : 0));
            for (int t = 0; t < nt; ++t)
                xa[t] = a.a + static_cast<size_t>(t0 + t) * a.a_stride;
            float* y = a.y + t0 * a.ldy + 16 * p;
            micro_nr<W>(nr, nt, w, a.cols, xa, y, a.ldy, pf);
            t0 += nt;
        }
    }
}

const PanelKernel kQ8_0{panel_a32_bytes, prep<WQ8_0::K>, panels<WQ8_0>};
const PanelKernel kQ4_0{panel_a32_bytes, prep<WQ4_0::K>, panels<WQ4_0>};

} // namespace

const PanelKernel* avx512_q32_panel_kernel(DType t) {
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
