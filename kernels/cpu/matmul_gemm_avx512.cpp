// AVX-512 matrix-matrix product for float weights, used for n_tokens >= a few (enabled for F32
// only; a loader per weight type converts to fp32 while packing, see avx512_float_gemm).
//
// The weights are converted to fp32 once per matmul, one panel of kGemmRows (48) rows x kGemmKc
// columns at a time, into a per-thread buffer laid out column by column ([kc][48], L1
// resident). The activations are packed by the driver per tile of up to kGemmTileTokens (8)
// tokens, column by column ([cols][nt]). The microkernel keeps 48 rows x NT tokens of outputs in
// zmm registers: per column it loads three weight vectors (16 rows each) and broadcasts each
// token's activation into three FMAs, so the outputs come out as contiguous rows of y, no
// horizontal sums. Loop order per thread: column block (outer), row panel, token tile (inner);
// the packed activations of one column block (n_tokens x kc floats) stay in L2 across panels.
// Measured limit: the broadcasts (~0.5 per cycle on the test machine) cap the microkernel at
// ~70% of the FMA peak, which is why F16/BF16 keep the tile kernels of matmul_avx512.cpp.
#include <array>
#include <utility>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/matmul_kernels.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

inline __mmask16 rows_mask(int64_t n) {
    return static_cast<__mmask16>(n >= 16 ? 0xFFFF : (n <= 0 ? 0 : (1u << n) - 1));
}

struct LoadF32 {
    static __m512 load(const uint8_t* w, int64_t c, __mmask16 m) {
        return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(w) + c);
    }
};
// In-register transpose of 16 vectors of 16 floats: v[i][j] -> v[j][i].
inline void transpose16(__m512 v[16]) {
    __m512 a[16], b[16];
    LLMWB_UNROLL for (int i = 0; i < 16; i += 2) {
        a[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
        a[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
    }
    LLMWB_UNROLL for (int g = 0; g < 16; g += 4) {
        b[g + 0] = _mm512_shuffle_ps(a[g], a[g + 2], 0x44);
        b[g + 1] = _mm512_shuffle_ps(a[g], a[g + 2], 0xEE);
        b[g + 2] = _mm512_shuffle_ps(a[g + 1], a[g + 3], 0x44);
        b[g + 3] = _mm512_shuffle_ps(a[g + 1], a[g + 3], 0xEE);
    }
    // b[4g + j]: rows 4g..4g+3, in 128-bit lane k the column 4k + j.
    LLMWB_UNROLL for (int j = 0; j < 4; ++j) {
        const __m512 c = _mm512_shuffle_f32x4(b[j], b[4 + j], 0x88);
        const __m512 d = _mm512_shuffle_f32x4(b[j], b[4 + j], 0xDD);
        const __m512 e = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0x88);
        const __m512 f = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0xDD);
        v[j] = _mm512_shuffle_f32x4(c, e, 0x88);
        v[4 + j] = _mm512_shuffle_f32x4(d, f, 0x88);
        v[8 + j] = _mm512_shuffle_f32x4(c, e, 0xDD);
        v[12 + j] = _mm512_shuffle_f32x4(d, f, 0xDD);
    }
}

// Converts rows [0, nr) (nr <= kGemmRows), columns [c0, c0 + kc) into out[kc][kGemmRows];
// rows past nr are zero.
template <class W>
void pack_panel(const uint8_t* w, size_t w_stride, int nr, int64_t c0, int kc, float* out) {
    for (int h = 0; h < kGemmRowVecs; ++h) {
        const int hr = nr - 16 * h; // valid rows in this group of 16
        if (hr <= 0) {
            for (int c = 0; c < kc; ++c)
                _mm512_store_ps(out + c * kGemmRows + 16 * h, _mm512_setzero_ps());
            continue;
        }
        for (int cb = 0; cb < kc; cb += 16) {
            const int n = kc - cb < 16 ? kc - cb : 16;
            const __mmask16 m = rows_mask(n);
            __m512 v[16];
            LLMWB_UNROLL for (int i = 0; i < 16; ++i) v[i] =
                i < hr ? W::load(w + static_cast<size_t>(16 * h + i) * w_stride, c0 + cb, m)
                       : _mm512_setzero_ps();
            transpose16(v);
            float* o = out + static_cast<size_t>(cb) * kGemmRows + 16 * h;
            if (n == 16) {
                LLMWB_UNROLL for (int j = 0; j < 16; ++j) _mm512_store_ps(o + j * kGemmRows, v[j]);
            } else {
                for (int j = 0; j < n; ++j)
                    _mm512_store_ps(o + j * kGemmRows, v[j]);
            }
        }
    }
}

// y[t][0 .. nr) (+)= sum_c wp[c][.] * xp[c][t] for t < NT, c < kc.
template <int NT, bool kAccum>
void micro(const float* wp, const float* xp, int kc, float* y, int64_t ldy, int nr) {
    constexpr int RV = kGemmRowVecs;
    __m512 acc[NT][RV];
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int v = 0; v < RV; ++v) acc[t][v] =
        _mm512_setzero_ps();
    for (int c = 0; c < kc; ++c) {
        __m512 wv[RV];
        LLMWB_UNROLL for (int v = 0; v < RV; ++v) wv[v] =
            _mm512_load_ps(wp + c * kGemmRows + 16 * v);
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
            const __m512 b = _mm512_set1_ps(xp[c * NT + t]);
            LLMWB_UNROLL for (int v = 0; v < RV; ++v) acc[t][v] =
                _mm512_fmadd_ps(wv[v], b, acc[t][v]);
        }
    }
    __mmask16 m[RV];
    LLMWB_UNROLL for (int v = 0; v < RV; ++v) m[v] = rows_mask(nr - 16 * v);
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
        float* yt = y + t * ldy;
        LLMWB_UNROLL for (int v = 0; v < RV; ++v) {
            if (kAccum)
                acc[t][v] = _mm512_add_ps(acc[t][v], _mm512_maskz_loadu_ps(m[v], yt + 16 * v));
            _mm512_mask_storeu_ps(yt + 16 * v, m[v], acc[t][v]);
        }
    }
}

using MicroFn = void (*)(const float*, const float*, int, float*, int64_t, int);

template <bool kAccum, int... N> constexpr auto micro_table(std::integer_sequence<int, N...>) {
    return std::array<MicroFn, sizeof...(N)>{&micro<N + 1, kAccum>...};
}

template <class W> void gemm_rows(const GemmArgs& a, int64_t r0, int64_t r1) {
    static constexpr auto kFirst =
        micro_table<false>(std::make_integer_sequence<int, kGemmTileTokens>{});
    static constexpr auto kNext =
        micro_table<true>(std::make_integer_sequence<int, kGemmTileTokens>{});
    alignas(64) thread_local float panel[kGemmRows * kGemmKc];
    for (int64_t c0 = 0; c0 < a.cols; c0 += kGemmKc) {
        const int kc = static_cast<int>(a.cols - c0 < kGemmKc ? a.cols - c0 : kGemmKc);
        const auto& fns = c0 == 0 ? kFirst : kNext;
        for (int64_t r = r0; r < r1; r += kGemmRows) {
            const int nr = static_cast<int>(r1 - r < kGemmRows ? r1 - r : kGemmRows);
            pack_panel<W>(a.w + static_cast<size_t>(r) * a.w_stride, a.w_stride, nr, c0, kc, panel);
            for (int64_t t0 = 0; t0 < a.n_tokens; t0 += kGemmTileTokens) {
                const int nt = static_cast<int>(
                    a.n_tokens - t0 < kGemmTileTokens ? a.n_tokens - t0 : kGemmTileTokens);
                const float* xp = a.acts + t0 * a.cols + c0 * nt;
                fns[static_cast<size_t>(nt - 1)](panel, xp, kc, a.y + t0 * a.ldy + r, a.ldy, nr);
            }
        }
    }
}

} // namespace

GemmRowsFn avx512_float_gemm(DType t) {
    switch (t) {
    // F16/BF16: measured no faster than the tile kernels (matmul_avx512.cpp), which convert in
    // their loads; this kernel is bound by the activation broadcasts (~0.5 per cycle here).
    case DType::F32:
        return gemm_rows<LoadF32>;
    default:
        return nullptr;
    }
}

} // namespace llmwb::kernels::detail
