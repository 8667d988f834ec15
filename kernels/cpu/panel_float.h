// Panel layout (weight_layout.h) of the float weight types, shared by panel_float.cpp (formats,
// kernel selection) and the per-level kernels (panel_float_avx2.cpp, panel_float_avx512.cpp).
//
// Byte layout of one panel (16 rows, row i = row 16p + i of the matrix):
//   F16   column c at byte 32 c: the 16 rows' fp16 values in row order (one vcvtph2ps gives the
//         16 rows as fp32 lanes).
//   BF16  columns 2j, 2j + 1 at byte 64 j: per row i the dword at 64 j + 4 i holds column 2j in
//         its low and 2j + 1 in its high half (one vector is the vdpbf16ps operand of 16 rows;
//         shifting/masking the dwords widens the two columns to fp32). An odd last column sits at
//         byte 64 * (cols / 2): the 16 rows' bf16 values in row order.
// Both are the 16 rows' bytes rearranged: same size as in Rows order.
//
// Arithmetic (the same for every token count, so a (row, token) is bit-identical alone or in
// any batch): one fp32 accumulator per (row, token), updated over the columns in order —
// fp32 FMA of the widened weight and the fp32 activation per column, or with the bf16 dot
// (BF16 weights, bf16_dot_active()) one vdpbf16ps per column pair on activations rounded to
// bf16 (round to nearest even; an odd last column paired with zeros). Kernels may split the
// columns into chunks as long as a chunk continues from the stored accumulator.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/dtype.h"

namespace llmwb::kernels::detail {

struct PanelKernel;

constexpr size_t kF16PanelColBytes = 32;   // one column of 16 fp16
constexpr size_t kBF16PanelPairBytes = 64; // two columns of 16 bf16, interleaved by row

// Prepared activations of the bf16-dot kernels: per token (cols + 1) / 2 dwords, each two bf16
// (column 2j low, 2j + 1 high; zero past an odd last column), padded to 64 bytes.
inline size_t bf16_pairs_row_bytes(int64_t cols) {
    return (static_cast<size_t>((cols + 1) / 2) * 4 + 63) & ~static_cast<size_t>(63);
}

// nullptr for other types. bf16_dot: the vdpbf16ps kernel for BF16 (call only when
// bf16_dot_available()).
const PanelKernel* avx512_float_panel_kernel(DType t, bool bf16_dot);
const PanelKernel* avx2_float_panel_kernel(DType t);

} // namespace llmwb::kernels::detail
