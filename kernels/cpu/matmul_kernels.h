// Internal interface between the matmul driver (matmul.cpp) and the per-SIMD-level kernels
// (matmul_scalar.cpp, matmul_avx2.cpp, matmul_avx512.cpp).
//
// Quantized weights are multiplied with activations that are quantized once per matmul into
// one of two 8-bit row formats (laid out by the helpers below, 64-byte aligned sections):
//   A32 (Q4_0, Q8_0 weights): per 32-block a float scale d and ds = d * sum(q); q int8.
//   AK  (Q4_K, Q6_K weights): per 256-block a float scale d, per 16 elements the int16 sum of
//                              q; q int8.
// A level may store q biased by +128 as uint8 (flag `biased` in its kernel) when its integer dot
// instruction wants unsigned activations. Float weights (F32/F16/BF16) read fp32 activations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "kernels/cpu/dtype.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/weight_layout.h"

namespace llmwb::kernels::detail {

constexpr int kMaxTileTokens = 8;

inline size_t align64(size_t n) {
    return (n + 63) & ~static_cast<size_t>(63);
}

// A growable 64-byte aligned buffer (thread_local scratch of the drivers and kernels). With
// slack, it grows to a quarter more than asked so that slowly growing batches reallocate rarely.
struct AlignedBuffer {
    struct Free {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t, Free> data;
    size_t size = 0;
    uint8_t* get(size_t bytes, bool slack = false) {
        if (bytes > size) {
            size = align64(slack ? bytes + bytes / 4 : bytes);
            data.reset(static_cast<uint8_t*>(std::aligned_alloc(64, size)));
        }
        return data.get();
    }
};

struct A32Layout {
    size_t d_off, ds_off, row_bytes; // q at offset 0
    explicit A32Layout(int64_t cols) {
        const size_t nb = static_cast<size_t>(cols / 32);
        d_off = align64(static_cast<size_t>(cols));
        ds_off = d_off + align64(nb * sizeof(float));
        row_bytes = ds_off + align64(nb * sizeof(float));
    }
};

struct AKLayout {
    size_t d_off, bsum_off, row_bytes; // q at offset 0
    explicit AKLayout(int64_t cols) {
        d_off = align64(static_cast<size_t>(cols));
        bsum_off = d_off + align64(static_cast<size_t>(cols / 256) * sizeof(float));
        row_bytes = bsum_off + align64(static_cast<size_t>(cols / 16) * sizeof(int16_t));
    }
};

// One call computes y[t * ldy + r] = dot(weight row r, activation row t) for r < nr, t < nt.
struct TileArgs {
    const uint8_t* w; // first weight row
    size_t w_stride;  // bytes between weight rows
    int64_t cols;
    int nr;
    const uint8_t* a; // first activation row (prepared format, or fp32)
    size_t a_stride;  // bytes between activation rows
    int nt;           // 1 .. kMaxTileTokens
    float* y;
    int64_t ldy;
};

// Calls Tile<NT>::run(p) for the call's token count NT = p.nt (1..kMaxTileTokens).
// In an anonymous namespace on purpose: every SIMD file gets its own copy with internal linkage.
// With external linkage, instantiations for same-named tiles of two files (e.g. Q2_KTile of the
// AVX2 and the AVX-512 file) share one mangled name and the linker keeps only one of them.
namespace {
template <template <int> class Tile> void run_by_nt(const TileArgs& p) {
    static_assert(kMaxTileTokens == 8);
    switch (p.nt) {
    case 1:
        return Tile<1>::run(p);
    case 2:
        return Tile<2>::run(p);
    case 3:
        return Tile<3>::run(p);
    case 4:
        return Tile<4>::run(p);
    case 5:
        return Tile<5>::run(p);
    case 6:
        return Tile<6>::run(p);
    case 7:
        return Tile<7>::run(p);
    default:
        return Tile<8>::run(p);
    }
}
} // namespace

struct MatmulKernel {
    // Bytes of one prepared activation row; 0 when the kernel reads fp32 activations directly.
    size_t (*act_row_bytes)(int64_t cols) = nullptr;
    void (*prepare_act)(const float* x, int64_t cols, uint8_t* dst) = nullptr;
    void (*tile)(const TileArgs& args) = nullptr;
};

// Packed matrix-matrix product for float weights (matmul_gemm_avx512.cpp). The driver packs the
// activations per tile of up to kGemmTileTokens tokens (tile at token t0 with nt tokens is stored
// at acts + t0 * cols as [cols][nt] fp32); one call computes y for rows [r0, r1), r0 a multiple
// of kGemmRows, and every token.
constexpr int kGemmRowVecs = 3; // zmm vectors of 16 rows per register block
constexpr int kGemmRows = 16 * kGemmRowVecs;
constexpr int kGemmTileTokens = 8;
constexpr int kGemmKc = 160;      // columns per packed weight panel (30 KiB of fp32)
constexpr int kGemmMinTokens = 4; // fewer tokens use the tile kernels

struct GemmArgs {
    const uint8_t* w;
    size_t w_stride;
    int64_t rows, cols;
    const float* acts; // packed
    int64_t n_tokens;
    float* y;
    int64_t ldy;
};
using GemmRowsFn = void (*)(const GemmArgs& args, int64_t r0, int64_t r1);
GemmRowsFn avx512_float_gemm(DType t); // nullptr for non-float types

// Packed matrix-matrix product for quantized weights (matmul_qgemm_avx512.cpp), used from
// min_tokens tokens on (below, repacking the weights costs more than it saves). The driver prepares
// every activation row with prepare_act (act_row_bytes each, a_stride apart); one rows() call
// computes y for rows [r0, r1), r0 a multiple of kQGemmRows, and every token.
constexpr int kQGemmRows = 32;

struct QGemmArgs {
    const uint8_t* w;
    size_t w_stride;
    int64_t rows, cols;
    const uint8_t* acts;
    size_t a_stride;
    int64_t n_tokens;
    float* y;
    int64_t ldy;
};
struct QGemm {
    int64_t min_tokens;
    size_t (*act_row_bytes)(int64_t cols);
    void (*prepare_act)(const float* x, int64_t cols, uint8_t* dst);
    void (*rows)(const QGemmArgs& args, int64_t r0, int64_t r1);
};
const QGemm* avx512_quant_gemm(DType t); // nullptr for other types

// Kernel for a weight type at a level; nullptr when that level has no specialised kernel.
const MatmulKernel* scalar_matmul_kernel(DType t);
const MatmulKernel* avx2_matmul_kernel(DType t);
const MatmulKernel* avx512_matmul_kernel(DType t);
const MatmulKernel* avx512_q32_matmul_kernel(DType t); // Q8_0, Q4_0 (matmul_q32_avx512.cpp)
// Q4_1, Q5_0, Q5_1, IQ4_NL (matmul_q32x.cpp, matmul_q32x_avx2.cpp, matmul_q32x_avx512.cpp)
const MatmulKernel* scalar_q32x_matmul_kernel(DType t);
const MatmulKernel* avx2_q32x_matmul_kernel(DType t);
const MatmulKernel* avx512_q32x_matmul_kernel(DType t);
// Q2_K, Q3_K, Q5_K, IQ4_XS (AK activations): matmul_kx.cpp, matmul_kx_avx2.cpp, _avx512.cpp.
const MatmulKernel* scalar_kx_matmul_kernel(DType t);
const MatmulKernel* avx2_kx_matmul_kernel(DType t);
const MatmulKernel* avx512_kx_matmul_kernel(DType t);

// ---- Panel layout (weight_layout.h) ------------------------------------------------------
// Kernels for matrices in WeightLayout::Panels. The driver prepares every activation row once
// with prepare_act (act_row_bytes each, a_stride apart; act_row_bytes == nullptr: the kernel
// reads the fp32 rows directly, a_stride = cols * 4) and splits the panels over the threads;
// one panels() call computes y[t * ldy + r] for rows [16 * p0, 16 * p1) and every token
// t < n_tokens. Contract: the value of a (row, token) does not depend on n_tokens or on the
// other tokens of the call (bit-identical alone or in any batch). The rows % 16 tail of a
// matrix is in Rows order and computed by the driver with the Rows tile kernels.
struct PanelArgs {
    const uint8_t* w; // panel 0 (the matrix's first byte)
    size_t row_bytes; // dtype_row_bytes(type, cols); panel p starts at w + p * 16 * row_bytes
    int64_t cols;
    const uint8_t* a; // first prepared activation row
    size_t a_stride;
    int64_t n_tokens;
    float* y;
    int64_t ldy;
};
struct PanelKernel {
    size_t (*act_row_bytes)(int64_t cols) = nullptr;
    void (*prepare_act)(const float* x, int64_t cols, uint8_t* dst) = nullptr;
    void (*panels)(const PanelArgs& args, int64_t p0, int64_t p1) = nullptr;
};
// Per type family and SIMD level; nullptr when that family has no panel kernel at that level
// (the driver then unpacks each panel and runs the level's Rows kernels: correct, slower).
// panel_q32.cpp (+ _avx2/_avx512): Q8_0, Q4_0.  panel_kq*.cpp: Q4_K, Q5_K, Q6_K.
// panel_float*.cpp: F16, BF16 (F32 stays in Rows order).  panel_q5*.cpp: Q5_0, Q5_1, Q4_1, IQ4_NL.
const PanelKernel* q32_panel_kernel(DType t, SimdLevel level);
const PanelKernel* q5_panel_kernel(DType t, SimdLevel level);
const PanelKernel* kx_panel_kernel(DType t, SimdLevel level); // panel_kx*.cpp: IQ4_XS
const PanelKernel* kq_panel_kernel(DType t, SimdLevel level);
const PanelKernel* float_panel_kernel(DType t, SimdLevel level);
// Their formats (weight_layout.cpp's panel_format asks each family in turn).
const PanelFormat* q32_panel_format(DType t);
const PanelFormat* q5_panel_format(DType t);
const PanelFormat* kx_panel_format(DType t);
const PanelFormat* kq_panel_format(DType t);
const PanelFormat* float_panel_format(DType t);

// Scalar activation quantizers (shared by the levels that keep the plain signed format).
void prepare_act_a32(const float* x, int64_t cols, uint8_t* dst, bool biased);
void prepare_act_ak(const float* x, int64_t cols, uint8_t* dst);
// The same bytes as prepare_act_ak, with AVX2 (matmul_kx_avx2.cpp; call only at that level).
void avx2_prepare_act_ak(const float* x, int64_t cols, uint8_t* dst);

// Activation row sizes and the plain (signed) A32 quantizer, in MatmulKernel's shapes: shared by
// every level's kernel tables.
inline size_t a32_bytes(int64_t cols) {
    return A32Layout(cols).row_bytes;
}
inline size_t ak_bytes(int64_t cols) {
    return AKLayout(cols).row_bytes;
}
inline void prep_a32(const float* x, int64_t cols, uint8_t* dst) {
    prepare_act_a32(x, cols, dst, false);
}

} // namespace llmwb::kernels::detail
