// AVX-512 kernels for F16 and BF16 weights in the panel layout (panel_float.h): one zmm holds a
// column (F16, after vcvtph2ps) or a column pair (BF16) of a panel's 16 rows, so the outputs of
// a register block come out as whole vectors of 16 rows, with no horizontal sums. Register block:
// up to 4 panels x 6 tokens (BF16) or 3 x 8 (F16) of fp32 accumulators (24 zmm): every weight
// vector feeds 6 (8) tokens, every broadcast activation 4 (3) panels.
//   F16          vcvtph2ps + fp32 FMA per column (no AVX512_FP16 on the machines this was
//                measured on; an fp16-FMA path is not written).
//   BF16, fp32   the pair's dwords shifted / masked to two fp32 vectors, FMA column 2j then 2j+1.
//   BF16, dot    vdpbf16ps per column pair on activations rounded to bf16 (prepare_act).
#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/panel_float.h"
#include "kernels/cpu/panel_float_loop.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels::detail {

namespace {

template <int RV, int NT> inline void load_acc(const PanelBlock& b, __m512 (&acc)[RV][NT]) {
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int v = 0; v < RV; ++v) acc[v][t] =
        b.first ? _mm512_setzero_ps() : _mm512_loadu_ps(b.y + t * b.ldy + 16 * v);
}

template <int RV, int NT> inline void store_acc(const PanelBlock& b, __m512 (&acc)[RV][NT]) {
    LLMWB_UNROLL for (int t = 0; t < NT; ++t) LLMWB_UNROLL for (int v = 0; v < RV; ++v)
        _mm512_storeu_ps(b.y + t * b.ldy + 16 * v, acc[v][t]);
}

// Matrix-vector and small batches stream the weights from memory: one prefetch per 64-byte line
// of each panel, kPrefetchBytes ahead (measured: better than the hardware prefetcher alone, and
// than 8 KiB). Larger batches are compute-bound and skip it.
constexpr size_t kPrefetchBytes = 2048;
template <int RV, int NT> inline void prefetch_ahead(const uint8_t* const (&w)[RV], size_t off) {
    if constexpr (NT <= 2)
        LLMWB_UNROLL for (int v = 0; v < RV; ++v)
            _mm_prefetch(reinterpret_cast<const char*>(w[v] + off + kPrefetchBytes), _MM_HINT_T0);
}

inline __m512 load_f16x16(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// 16 bf16 (a panel's odd last column) widened to fp32 / zero-extended to dwords (bf16 pairs
// whose high half is zero).
inline __m512i load_bf16x16_dwords(const uint8_t* p) {
    return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

struct F16Fma {
    static constexpr int kRowPanels = 3; // measured: 3 x 8 beats 4 x 6 and 2 x 12 here
    static constexpr int kMvRowPanels = 0;
    static constexpr int kTokens = 8;
    static constexpr int64_t kChunkSteps = 256; // 3 panels x 256 columns x 32 bytes: 24 KiB
    static int64_t steps(int64_t cols) { return cols; }
    static bool tail(int64_t) { return false; }

    template <int RV, int NT> static void block(const PanelBlock& b) {
        __m512 acc[RV][NT];
        load_acc(b, acc);
        const uint8_t* w[RV];
        const float* x[NT];
        LLMWB_UNROLL for (int v = 0; v < RV; ++v) w[v] = b.w[v];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const float*>(b.x[t]);
        for (int64_t s = b.s0; s < b.s1; ++s) {
            __m512 wv[RV];
            if (s % 2 == 0)
                prefetch_ahead<RV, NT>(w, static_cast<size_t>(s) * kF16PanelColBytes);
            LLMWB_UNROLL for (int v = 0; v < RV; ++v) wv[v] =
                load_f16x16(w[v] + static_cast<size_t>(s) * kF16PanelColBytes);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m512 xv = _mm512_set1_ps(x[t][s]);
                LLMWB_UNROLL for (int v = 0; v < RV; ++v) acc[v][t] =
                    _mm512_fmadd_ps(wv[v], xv, acc[v][t]);
            }
        }
        store_acc(b, acc);
    }
};

struct BF16Fma {
    static constexpr int kRowPanels = 4; // as the dot kernel
    static constexpr int kMvRowPanels = 0;
    static constexpr int kTokens = 6;
    static constexpr int64_t kChunkSteps = 128; // 4 panels x 128 pairs x 64 bytes: 32 KiB
    static int64_t steps(int64_t cols) { return cols / 2; }
    static bool tail(int64_t cols) { return cols % 2 != 0; }

    template <int RV, int NT> static void block(const PanelBlock& b) {
        __m512 acc[RV][NT];
        load_acc(b, acc);
        const uint8_t* w[RV];
        const float* x[NT];
        LLMWB_UNROLL for (int v = 0; v < RV; ++v) w[v] = b.w[v];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const float*>(b.x[t]);
        const __m512i hi = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
        for (int64_t s = b.s0; s < b.s1; ++s) {
            prefetch_ahead<RV, NT>(w, static_cast<size_t>(s) * kBF16PanelPairBytes);
            __m512 we[RV], wo[RV];
            LLMWB_UNROLL for (int v = 0; v < RV; ++v) {
                const __m512i d =
                    _mm512_loadu_si512(w[v] + static_cast<size_t>(s) * kBF16PanelPairBytes);
                we[v] = _mm512_castsi512_ps(_mm512_slli_epi32(d, 16));
                wo[v] = _mm512_castsi512_ps(_mm512_and_si512(d, hi));
            }
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m512 xe = _mm512_set1_ps(x[t][2 * s]);
                const __m512 xo = _mm512_set1_ps(x[t][2 * s + 1]);
                LLMWB_UNROLL for (int v = 0; v < RV; ++v) {
                    acc[v][t] = _mm512_fmadd_ps(we[v], xe, acc[v][t]);
                    acc[v][t] = _mm512_fmadd_ps(wo[v], xo, acc[v][t]);
                }
            }
        }
        if (b.tail) {
            const int64_t s = b.s1;
            LLMWB_UNROLL for (int v = 0; v < RV; ++v) {
                const __m512 wl = _mm512_castsi512_ps(_mm512_slli_epi32(
                    load_bf16x16_dwords(w[v] + static_cast<size_t>(s) * kBF16PanelPairBytes), 16));
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] =
                    _mm512_fmadd_ps(wl, _mm512_set1_ps(x[t][2 * s]), acc[v][t]);
            }
        }
        store_acc(b, acc);
    }
};

// Activations for the dot kernel: fp32 rounded to bf16 (vcvtne2ps2bf16: round to nearest even),
// as pairs (panel_float.h, bf16_pairs_row_bytes); an odd last column is paired with zero.
void prepare_bf16_pairs(const float* x, int64_t cols, uint8_t* dst) {
    const int64_t padded = (cols + 1) & ~int64_t{1};
    auto* out = reinterpret_cast<uint16_t*>(dst);
    for (int64_t c = 0; c < padded; c += 32) {
        const int64_t n = cols - c;
        const __mmask16 m0 =
            static_cast<__mmask16>(n >= 16 ? 0xFFFF : (n <= 0 ? 0 : (1u << n) - 1));
        const __mmask16 m1 =
            static_cast<__mmask16>(n >= 32 ? 0xFFFF : (n <= 16 ? 0 : (1u << (n - 16)) - 1));
        const __m512 lo = _mm512_maskz_loadu_ps(m0, x + c);
        const __m512 hi = _mm512_maskz_loadu_ps(m1, x + c + 16);
        const __m512i v = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
        const int64_t k = padded - c;
        const __mmask32 ms = k >= 32 ? 0xFFFFFFFFu : (1u << k) - 1;
        _mm512_mask_storeu_epi16(out + c, ms, v);
    }
}

size_t bf16_pairs_bytes(int64_t cols) {
    return bf16_pairs_row_bytes(cols);
}

struct BF16Dot {
    static constexpr int kRowPanels = 4; // measured: 4 x 6 beats 3 x 8 and 2 x 12 here
    static constexpr int kMvRowPanels = 0;
    static constexpr int kTokens = 6;
    static constexpr int64_t kChunkSteps = 128; // 4 panels x 128 pairs x 64 bytes: 32 KiB
    static int64_t steps(int64_t cols) { return cols / 2; }
    static bool tail(int64_t cols) { return cols % 2 != 0; }

    static __m512 dot(__m512 acc, __m512i w, __m512i x) {
        return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(w), reinterpret_cast<__m512bh>(x));
    }

    template <int RV, int NT> static void block(const PanelBlock& b) {
        __m512 acc[RV][NT];
        load_acc(b, acc);
        const uint8_t* w[RV];
        const int32_t* x[NT];
        LLMWB_UNROLL for (int v = 0; v < RV; ++v) w[v] = b.w[v];
        LLMWB_UNROLL for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const int32_t*>(b.x[t]);
        for (int64_t s = b.s0; s < b.s1; ++s) {
            prefetch_ahead<RV, NT>(w, static_cast<size_t>(s) * kBF16PanelPairBytes);
            __m512i wv[RV];
            LLMWB_UNROLL for (int v = 0; v < RV; ++v) wv[v] =
                _mm512_loadu_si512(w[v] + static_cast<size_t>(s) * kBF16PanelPairBytes);
            LLMWB_UNROLL for (int t = 0; t < NT; ++t) {
                const __m512i xv = _mm512_set1_epi32(x[t][s]);
                LLMWB_UNROLL for (int v = 0; v < RV; ++v) acc[v][t] = dot(acc[v][t], wv[v], xv);
            }
        }
        if (b.tail) {
            const int64_t s = b.s1;
            LLMWB_UNROLL for (int v = 0; v < RV; ++v) {
                const __m512i wl =
                    load_bf16x16_dwords(w[v] + static_cast<size_t>(s) * kBF16PanelPairBytes);
                LLMWB_UNROLL for (int t = 0; t < NT; ++t) acc[v][t] =
                    dot(acc[v][t], wl, _mm512_set1_epi32(x[t][s]));
            }
        }
        store_acc(b, acc);
    }
};

const PanelKernel kF16{nullptr, nullptr, panel_loop<F16Fma>};
const PanelKernel kBF16{nullptr, nullptr, panel_loop<BF16Fma>};
const PanelKernel kBF16Dot{bf16_pairs_bytes, prepare_bf16_pairs, panel_loop<BF16Dot>};

} // namespace

const PanelKernel* avx512_float_panel_kernel(DType t, bool bf16_dot) {
    switch (t) {
    case DType::F16:
        return &kF16;
    case DType::BF16:
        return bf16_dot ? &kBF16Dot : &kBF16;
    default:
        return nullptr;
    }
}

} // namespace llmwb::kernels::detail
