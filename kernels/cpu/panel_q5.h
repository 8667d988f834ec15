// Panel layout of the other 32-element block types Q5_0, Q5_1, Q4_1 and IQ4_NL
// (weight_layout.h), shared by the formats (panel_q5.cpp) and the kernels (panel_q5_avx512.cpp,
// panel_q5_avx2.h).
//
// A row's block (GGUF order): d (fp16) [m (fp16): Q5_1, Q4_1] [qh (4 bytes): Q5_0, Q5_1]
// qs (16 bytes: element j's low 4 bits in qs[j % 16] >> 4 * (j / 16); bit 4 of a 5-bit code is
// bit j of qh as a little-endian uint32). A panel (16 rows) is a sequence of block columns (the
// 16 rows' blocks b), in pairs (2k, 2k + 1) (a last odd block column alone), each pair in
// sections, every section of the first block column then of the second:
//   d      32 bytes per block column: the 16 rows' fp16 d
//   m      32 bytes (Q5_1, Q4_1):     the 16 rows' fp16 m
//   qh     64 bytes (Q5_0, Q5_1):     8 little-endian uint64 masks, mask g bit 4i + k = bit
//                                     4g + k of row i's qh (bit n of mask g is the high bit of
//                                     byte n of code group g below: one AVX-512 mask register)
//   codes  256 bytes: 4 chunks of 64 bytes; chunk h holds row i's qs[4h .. 4h + 3] at 4i: low
//          nibbles = columns 4h .. 4h + 3, high nibbles = columns 16 + 4h .. 16 + 4h + 3.
// Code group g (columns 4g .. 4g + 3 of the 16 rows, 64 bytes, one vpdpbusd operand): the low
// (g < 4) or high (g >= 4) nibbles of chunk g % 4, | 16 where mask g has the bit (5-bit types).
// Every section size is a multiple of 32 and a pair's a multiple of 64 (Q5_0 704, Q5_1 768,
// Q4_1 640, IQ4_NL 576 bytes), so a 64-byte aligned panel with an even block count has every
// 64-byte section aligned. A pair occupies 2 x 16 x (block bytes), a single block column 16 x
// (block bytes): the bytes of the 16 rows' blocks in Rows order (the qh bits permuted).
//
// Activations (prepared once per matmul, every level the same bytes; 64-byte aligned sections,
// the shape of panel_q32.h's PanelA32Layout):
//   q    [align64(cols)] int8, q = round_even(x * 127 / amax) per 32-block
//   d    [cols / 32] float   amax / 127
//   sum  [cols / 32] int32   sum(q of the block)
// The kernels use the exact integer block dot of (code + K') x q for some code offset K' (Q5_0:
// codes 0..31 for values -16..15, K = 16; IQ4_NL: table value + 128 as u8, K = 128; Q5_1, Q4_1:
// K = 0), started at -K * sum; the m of Q5_1 / Q4_1 enters as m * (d_x * float(sum)).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/matmul_kernels.h"

namespace llmwb::kernels::detail {

template <bool HasM, bool HasH> struct Q5Panel {
    static constexpr bool kHasM = HasM; // an fp16 m after d (value = d * code + m)
    static constexpr bool kHasH = HasH; // a 32-bit qh: 5-bit codes
    // One row's block in Rows order: d, [m], [qh], qs.
    static constexpr int kMOff = 2;
    static constexpr int kHOff = HasM ? 4 : 2;
    static constexpr int kQsOff = kHOff + (HasH ? 4 : 0);
    static constexpr int kBlockBytes = kQsOff + 16;
    static constexpr size_t kColBytes = 16 * kBlockBytes; // one block column of a panel
    // Section bytes per block column.
    static constexpr size_t kScaleBytes = 32 * (HasM ? 2 : 1), kHBytes = HasH ? 64 : 0;
    struct Offsets {
        size_t d, m, qh, codes;
    };
    // Byte offsets in the panel of block column b's sections.
    static Offsets offsets(int64_t nb, int64_t b) {
        const int64_t k = b / 2, j = b % 2;
        const size_t n = 2 * k + 1 < nb ? 2 : 1;
        const size_t pair = static_cast<size_t>(k) * 2 * kColBytes;
        const size_t js = static_cast<size_t>(j);
        Offsets o{};
        o.d = pair + 32 * js;
        o.m = pair + 32 * n + 32 * js;
        o.qh = pair + n * kScaleBytes + 64 * js;
        o.codes = pair + n * (kScaleBytes + kHBytes) + 256 * js;
        return o;
    }
};
using Q5_0Panel = Q5Panel<false, true>;
using Q5_1Panel = Q5Panel<true, true>;
using Q4_1Panel = Q5Panel<true, false>;
using IQ4_NLPanel = Q5Panel<false, false>;

struct PanelQ5ActLayout {
    size_t d_off, sum_off, row_bytes; // q at offset 0
    explicit PanelQ5ActLayout(int64_t cols) {
        const size_t nb = static_cast<size_t>(cols / 32);
        d_off = align64(static_cast<size_t>(cols));
        sum_off = d_off + align64(nb * sizeof(float));
        row_bytes = sum_off + align64(nb * sizeof(int32_t));
    }
};

inline size_t panel_q5_act_bytes(int64_t cols) {
    return PanelQ5ActLayout(cols).row_bytes;
}

// The kernels per level (nullptr: none for that type). avx2_q5_panel_kernel returns the
// AVX-VNNI variant where the CPU has AVX-VNNI (cpu_has_avx_vnni), the plain one elsewhere; tests
// call both (the VNNI one only where the CPU has it).
const PanelKernel* avx512_q5_panel_kernel(DType t);
const PanelKernel* avx2_q5_panel_kernel(DType t);
const PanelKernel* avx2_plain_q5_panel_kernel(DType t);
const PanelKernel* avx2_vnni_q5_panel_kernel(DType t);

} // namespace llmwb::kernels::detail
