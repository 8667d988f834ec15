// Panel layout of the 32-element block types Q8_0 and Q4_0 (weight_layout.h), shared by the
// format (panel_q32.cpp) and the kernels (panel_q32_avx512.cpp, panel_q32_avx2.cpp).
//
// A panel (16 rows) is a sequence of block columns (the 16 rows' blocks b). Block columns go in
// pairs (2k, 2k + 1) so that, in a 64-byte aligned panel of an even block count, every 64-byte
// load below is aligned:
//   [64 bytes: fp16 d of block 2k for rows 0..15, then of block 2k + 1 for rows 0..15]
//   [codes of block 2k][codes of block 2k + 1]
// A last odd block column is [32 bytes: its 16 fp16 d][its codes]. The codes of one block column
// are QS / 4 chunks of 64 bytes (QS: code bytes per row and block, 32 for Q8_0, 16 for Q4_0);
// chunk h holds, for rows i = 0..15, the row's code bytes 4h .. 4h + 3 at 4 * i:
//   Q8_0  chunk g: the int8 codes of columns 4g .. 4g + 3 of the 16 rows (one vpdpbusd operand).
//   Q4_0  chunk h: low nibbles = codes of columns 4h .. 4h + 3, high nibbles = columns
//         16 + 4h .. 16 + 4h + 3 (one load, shift and mask: two [16 rows x 4 codes] vectors).
// A pair occupies 2 x 16 x (2 + QS) bytes, a single block column 16 x (2 + QS): the bytes of
// the 16 rows' blocks in Rows order.
//
// Activations (prepared once per matmul, every level the same bytes; 64-byte aligned sections):
//   q    [align64(cols)] int8, q = round_even(x * 127 / amax) per 32-block
//   d    [cols / 32] float   amax / 127
//   corr [cols / 32] int32   -K * sum(q of the block): removes the weights' code offset K
//                            (Q8_0 read as u8 code + 128: K = 128; Q4_0 codes 0..15: K = 8)
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/matmul_kernels.h"

namespace llmwb::kernels::detail {

template <int QS> struct Q32Panel {
    static constexpr int kQS = QS;
    static constexpr int kBlockBytes = 2 + QS;            // one row's block in Rows order
    static constexpr size_t kColBytes = 16 * kBlockBytes; // one block column of a panel
    static constexpr int kChunks = QS / 4;                // 64-byte code chunks per block column
    // Byte offsets in the panel of block b's 16 scales and of its first code chunk.
    static void offsets(int64_t nb, int64_t b, size_t* scales, size_t* codes) {
        const int64_t k = b / 2, j = b % 2;
        const size_t pair = static_cast<size_t>(k) * 2 * kColBytes;
        const int n = 2 * k + 1 < nb ? 2 : 1;
        *scales = pair + 32 * static_cast<size_t>(j);
        *codes = pair + 32 * static_cast<size_t>(n) + static_cast<size_t>(j) * 16 * QS;
    }
};
using Q8_0Panel = Q32Panel<32>;
using Q4_0Panel = Q32Panel<16>;

struct PanelA32Layout {
    size_t d_off, corr_off, row_bytes; // q at offset 0
    explicit PanelA32Layout(int64_t cols) {
        const size_t nb = static_cast<size_t>(cols / 32);
        d_off = align64(static_cast<size_t>(cols));
        corr_off = d_off + align64(nb * sizeof(float));
        row_bytes = corr_off + align64(nb * sizeof(int32_t));
    }
};

inline size_t panel_a32_bytes(int64_t cols) {
    return PanelA32Layout(cols).row_bytes;
}

// The kernels per level (nullptr: none for that type). avx2_q32_panel_kernel returns the
// AVX-VNNI variant where the CPU has AVX-VNNI (cpu_has_avx_vnni), the plain one elsewhere; tests
// call both (the VNNI one only where the CPU has it).
const PanelKernel* avx512_q32_panel_kernel(DType t);
const PanelKernel* avx2_q32_panel_kernel(DType t);
const PanelKernel* avx2_plain_q32_panel_kernel(DType t);
const PanelKernel* avx2_vnni_q32_panel_kernel(DType t);

} // namespace llmwb::kernels::detail
