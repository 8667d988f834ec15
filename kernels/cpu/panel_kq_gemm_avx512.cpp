// AVX-512 VNNI Q6_K panel product for large token counts (prefill), same bits as the panel
// kernel of panel_kq_avx512.cpp.
//
// The register-blocked panel kernel decodes each 6-bit code vector (three loads and a bit merge)
// for every token tile that passes over it; at hundreds of tokens that decoding costs as much as
// the dot products (measured at 512 tokens: 0.7x the old per-call repacking GEMM). Here a thread
// decodes two panels (32 rows) at a time once, all their super-blocks, into a buffer of u8 codes
// [block][k-group][panel][16 rows x 4] plus the float scales d * sc_j of each sub-block, and then
// every token tile reads that buffer (L2-resident: ~10 KiB per super-block) with one load per
// k-group and panel.
//
// Bits: per (row, token) the same sequence of float operations as q6k_panels: per super-block,
// acc = 0; for the sub-blocks j in the order 0,2,4,6,1,3,5,7,8,10,12,14,9,11,13,15:
// acc = fma(float(dot_j), d * sc_j, acc) with dot_j exact in int32 (started at -32 * the
// activations' sum over the sub-block), then y = fma(acc, d_x, y) in super-block order. So the
// result is bit-identical to the matrix-vector path and to every other token count.
#include <algorithm>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/panel_kq.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

constexpr int kGemmTile = 4;                // tokens per register block (2 panels x 4 tokens)
constexpr size_t kCodeBytes = 64 * 128;     // one super-block's codes of two panels (64 k-groups)
constexpr size_t kScaleBytes = 16 * 2 * 64; // 16 sub-blocks x 2 panels x 16 floats
constexpr size_t kBlockBytes = kCodeBytes + kScaleBytes;
constexpr size_t kActBlockBytes = 384 << 10; // activations per token block (L2 with the codes)
// The fma order of the sub-blocks in q6k_panels (h, then the half of each 32 columns, then S).
constexpr int kSubOrder[16] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15};

inline __m512i ld(const uint8_t* p) {
    return _mm512_loadu_si512(p);
}

// The 6-bit codes of k-group (h, s, k) of one panel's group g (arrangement in panel_kq.h).
inline __m512i code6(const uint8_t* g, int h, int s, int k) {
    const __m512i low4 = _mm512_set1_epi8(0x0F), bits45 = _mm512_set1_epi8(0x30);
    const uint8_t* v = g + 256 + 192 * (8 * h + k);
    const __m512i qh = ld(v + 128);
    const __m512i l = (s & 1) ? ld(v + 64) : ld(v);
    const __m512i lo = s >= 2 ? _mm512_srli_epi16(l, 4) : l;
    const int shift = 4 - 2 * s; // qh bits 2s .. 2s + 1 to bits 4 .. 5
    const __m512i hi = shift > 0   ? _mm512_slli_epi16(qh, shift)
                       : shift < 0 ? _mm512_srli_epi16(qh, -shift)
                                   : qh;
    return _mm512_or_si512(_mm512_and_si512(lo, low4), _mm512_and_si512(hi, bits45));
}

// Decodes super-block b of panels g0 / g1 into dst (codes, then the scales).
void unpack_block(const uint8_t* g0, const uint8_t* g1, uint8_t* dst) {
    const uint8_t* g[2] = {g0, g1};
    for (int v = 0; v < 2; ++v) {
        for (int h = 0; h < 2; ++h)
            for (int s = 0; s < 4; ++s)
                for (int k = 0; k < 8; ++k) {
                    const int kg = 32 * h + 8 * s + k; // column group: columns 4 kg .. 4 kg + 3
                    _mm512_store_si512(dst + 128 * kg + 64 * v, code6(g[v], h, s, k));
                }
        const __m512 dw =
            _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g[v] + 3328)));
        auto* sc = reinterpret_cast<float*>(dst + kCodeBytes);
        for (int j = 0; j < 16; ++j)
            _mm512_store_ps(
                sc + 32 * j + 16 * v,
                _mm512_mul_ps(dw, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(
                                      reinterpret_cast<const __m128i*>(g[v] + 16 * j))))));
    }
}

// Rows 16p .. 16p + 32 (two panels) x NT tokens from t0, from the decoded buffer `u`.
template <int NT>
void tile(const PanelArgs& a, const uint8_t* u, int64_t nb, int64_t p, int64_t t0) {
    const KPLayout L(a.cols);
    const int8_t* xq[NT];
    const float* xd[NT];
    const int32_t* xn[NT];
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        const uint8_t* r = a.a + static_cast<size_t>(t0 + t) * a.a_stride;
        xq[t] = reinterpret_cast<const int8_t*>(r);
        xd[t] = reinterpret_cast<const float*>(r + L.d_off);
        xn[t] = reinterpret_cast<const int32_t*>(r + L.n16_off);
    }
    __m512 y[2][NT];
    LLMWB_UNROLL for (int v = 0; v < 2; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t) y[v][t] =
        _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* ub = u + static_cast<size_t>(b) * kBlockBytes;
        const auto* sc = reinterpret_cast<const float*>(ub + kCodeBytes);
        __m512 acc[2][NT];
        LLMWB_UNROLL for (int v = 0; v < 2; ++v) LLMWB_UNROLL for (int t = 0; t < NT; ++t)
            acc[v][t] = _mm512_setzero_ps();
        for (int jj = 0; jj < 16; ++jj) { // (unrolled: no faster, 4x the code)
            const int j = kSubOrder[jj];
            __m512i dot[2][NT];
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m512i init = _mm512_set1_epi32(xn[t][16 * b + j]);
                dot[0][t] = init;
                dot[1][t] = init;
            }
            LLMWB_UNROLL for (int kk = 0; kk < 4; ++kk) {
                const int kg = 4 * j + kk;
                const __m512i w0 = _mm512_load_si512(ub + 128 * kg);
                const __m512i w1 = _mm512_load_si512(ub + 128 * kg + 64);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                    int32_t xv;
                    __builtin_memcpy(&xv, xq[t] + 256 * b + 4 * kg, 4);
                    const __m512i x = _mm512_set1_epi32(xv);
                    dot[0][t] = _mm512_dpbusd_epi32(dot[0][t], w0, x);
                    dot[1][t] = _mm512_dpbusd_epi32(dot[1][t], w1, x);
                }
            }
            const __m512 s0 = _mm512_load_ps(sc + 32 * j), s1 = _mm512_load_ps(sc + 32 * j + 16);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                acc[0][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[0][t]), s0, acc[0][t]);
                acc[1][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[1][t]), s1, acc[1][t]);
            }
        }
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            const __m512 dx = _mm512_set1_ps(xd[t][b]);
            y[0][t] = _mm512_fmadd_ps(acc[0][t], dx, y[0][t]);
            y[1][t] = _mm512_fmadd_ps(acc[1][t], dx, y[1][t]);
        }
    }
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        _mm512_storeu_ps(a.y + (t0 + t) * a.ldy + p * kPanelRows, y[0][t]);
        _mm512_storeu_ps(a.y + (t0 + t) * a.ldy + (p + 1) * kPanelRows, y[1][t]);
    }
}

template <int NT = kGemmTile>
void tile_nt(int nt, const PanelArgs& a, const uint8_t* u, int64_t nb, int64_t p, int64_t t0) {
    if constexpr (NT > 1)
        if (nt != NT)
            return tile_nt<NT - 1>(nt, a, u, nb, p, t0);
    tile<NT>(a, u, nb, p, t0);
}

} // namespace

size_t q6k_gemm_scratch_bytes(int64_t cols) {
    return static_cast<size_t>(cols / 256) * kBlockBytes;
}

void q6k_gemm_pairs_avx512(const PanelArgs& a, int64_t p0, int64_t p1, uint8_t* scratch) {
    const int64_t nb = a.cols / 256;
    const size_t panel_bytes = kPanelRows * a.row_bytes;
    // Tokens in blocks whose activations stay in L2 while the pairs go by (each pair is decoded
    // once per block).
    const int64_t block_tokens = std::max<int64_t>(
        4 * kGemmTile, static_cast<int64_t>(kActBlockBytes / a.a_stride) / kGemmTile * kGemmTile);
    for (int64_t tb = 0; tb < a.n_tokens; tb += block_tokens) {
        const int64_t te = std::min(a.n_tokens, tb + block_tokens);
        for (int64_t p = p0; p + 2 <= p1; p += 2) {
            const uint8_t* w0 = a.w + static_cast<size_t>(p) * panel_bytes;
            for (int64_t b = 0; b < nb; ++b)
                unpack_block(w0 + static_cast<size_t>(b) * kQ6KGroupBytes,
                             w0 + panel_bytes + static_cast<size_t>(b) * kQ6KGroupBytes,
                             scratch + static_cast<size_t>(b) * kBlockBytes);
            for (int64_t t0 = tb; t0 < te; t0 += kGemmTile) {
                const int nt = static_cast<int>(std::min<int64_t>(kGemmTile, te - t0));
                tile_nt(nt, a, scratch, nb, p, t0);
            }
        }
    }
}

} // namespace llmwb::kernels::detail
