// AVX2 kernels for F16 and BF16 weights in the panel layout (panel_float.h): a panel's 16 rows
// are two ymm of 8 rows; fp32 FMA for both types (F16 through vcvtph2ps, BF16 by shifting /
// masking the column pairs' dwords). Register block: one panel (2 ymm) x up to 6 tokens (F16;
// 4 for BF16, whose two widened columns take more registers) of accumulators; a 1-token call
// takes 2 panels per block. Same arithmetic per (row, token) as the AVX-512 fp32 kernels: one FMA
// chain over the columns in order.
#include <immintrin.h>

#include "kernels/cpu/panel_float.h"
#include "kernels/cpu/panel_float_loop.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

constexpr int kHalves = 2; // ymm per panel

template <int RV, int NT>
inline void load_acc(const PanelBlock& b, __m256 (&acc)[RV * kHalves][NT]) {
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int v = 0; v < RV * kHalves; ++v)
        acc[v][t] = b.first ? _mm256_setzero_ps() : _mm256_loadu_ps(b.y + t * b.ldy + 8 * v);
}

template <int RV, int NT>
inline void store_acc(const PanelBlock& b, __m256 (&acc)[RV * kHalves][NT]) {
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int v = 0; v < RV * kHalves; ++v)
        _mm256_storeu_ps(b.y + t * b.ldy + 8 * v, acc[v][t]);
}

// As in panel_float_avx512.cpp: one prefetch per 64-byte line of the panel, 2 KiB ahead, for
// the memory-bound matrix-vector and small batches.
constexpr size_t kPrefetchBytes = 2048;
template <int RV, int NT> inline void prefetch_ahead(const uint8_t* const (&w)[RV], size_t off) {
    if constexpr (NT <= 2)
        LLMWB_UNROLL for (int v = 0; v < RV; ++v)
            _mm_prefetch(reinterpret_cast<const char*>(w[v] + off + kPrefetchBytes), _MM_HINT_T0);
}

struct F16Fma {
    static constexpr int kRowPanels = 1;
    static constexpr int kMvRowPanels = 2; // measured: better of-bw than 1
    static constexpr int kTokens = 6;
    static constexpr int64_t kChunkSteps = 512; // 512 columns x 32 bytes: 16 KiB
    static int64_t steps(int64_t cols) { return cols; }
    static bool tail(int64_t) { return false; }

    template <int RV, int NT> static void block(const PanelBlock& b) {
        constexpr int V = RV * kHalves;
        __m256 acc[V][NT];
        load_acc<RV, NT>(b, acc);
        const uint8_t* w[RV];
        const float* x[NT];
        LLMWB_UNROLL for (int v = 0; v < RV; ++v) w[v] = b.w[v];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const float*>(b.x[t]);
        for (int64_t s = b.s0; s < b.s1; ++s) {
            if (s % 2 == 0)
                prefetch_ahead<RV, NT>(w, static_cast<size_t>(s) * kF16PanelColBytes);
            __m256 wv[V];
            LLMWB_UNROLL for (int v = 0; v < V; ++v) wv[v] =
                _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(
                    w[v / 2] + static_cast<size_t>(s) * kF16PanelColBytes + 16 * (v % 2))));
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m256 xv = _mm256_broadcast_ss(x[t] + s);
                LLMWB_UNROLL for (int v = 0; v < V; ++v) acc[v][t] =
                    _mm256_fmadd_ps(wv[v], xv, acc[v][t]);
            }
        }
        store_acc<RV, NT>(b, acc);
    }
};

struct BF16Fma {
    static constexpr int kRowPanels = 1;
    static constexpr int kMvRowPanels = 2; // measured: better of-bw than 1
    static constexpr int kTokens = 4;
    static constexpr int64_t kChunkSteps = 256; // 256 pairs x 64 bytes: 16 KiB
    static int64_t steps(int64_t cols) { return cols / 2; }
    static bool tail(int64_t cols) { return cols % 2 != 0; }

    template <int RV, int NT> static void block(const PanelBlock& b) {
        constexpr int V = RV * kHalves;
        __m256 acc[V][NT];
        load_acc<RV, NT>(b, acc);
        const uint8_t* w[RV];
        const float* x[NT];
        LLMWB_UNROLL for (int v = 0; v < RV; ++v) w[v] = b.w[v];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const float*>(b.x[t]);
        const __m256i hi = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
        for (int64_t s = b.s0; s < b.s1; ++s) {
            prefetch_ahead<RV, NT>(w, static_cast<size_t>(s) * kBF16PanelPairBytes);
            __m256 we[V], wo[V];
            LLMWB_UNROLL for (int v = 0; v < V; ++v) {
                const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                    w[v / 2] + static_cast<size_t>(s) * kBF16PanelPairBytes + 32 * (v % 2)));
                we[v] = _mm256_castsi256_ps(_mm256_slli_epi32(d, 16));
                wo[v] = _mm256_castsi256_ps(_mm256_and_si256(d, hi));
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m256 xe = _mm256_broadcast_ss(x[t] + 2 * s);
                const __m256 xo = _mm256_broadcast_ss(x[t] + 2 * s + 1);
                LLMWB_UNROLL for (int v = 0; v < V; ++v) {
                    acc[v][t] = _mm256_fmadd_ps(we[v], xe, acc[v][t]);
                    acc[v][t] = _mm256_fmadd_ps(wo[v], xo, acc[v][t]);
                }
            }
        }
        if (b.tail) {
            const int64_t s = b.s1;
            LLMWB_UNROLL for (int v = 0; v < V; ++v) {
                const __m256 wl = _mm256_castsi256_ps(_mm256_slli_epi32(
                    _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(
                        w[v / 2] + static_cast<size_t>(s) * kBF16PanelPairBytes + 16 * (v % 2)))),
                    16));
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] =
                    _mm256_fmadd_ps(wl, _mm256_broadcast_ss(x[t] + 2 * s), acc[v][t]);
            }
        }
        store_acc<RV, NT>(b, acc);
    }
};

const PanelKernel kF16{nullptr, nullptr, panel_loop<F16Fma>};
const PanelKernel kBF16{nullptr, nullptr, panel_loop<BF16Fma>};

} // namespace

const PanelKernel* avx2_float_panel_kernel(DType t) {
    switch (t) {
    case DType::F16:
        return &kF16;
    case DType::BF16:
        return &kBF16;
    default:
        return nullptr;
    }
}

} // namespace llmwb::kernels::detail
