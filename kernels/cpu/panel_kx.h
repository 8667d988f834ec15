// Panel layout of the other 256-element super-block types (weight_layout.h): IQ4_XS, Q3_K, Q2_K.
// The arrangement of one 16-row panel, shared by the format (panel_kx.cpp) and the kernels
// (panel_kx_avx512.cpp, panel_kx_avx2.h). Internal to kernels/cpu.
//
// A panel is a sequence of super-block groups, one per 256 columns, each holding exactly the
// bytes of that super-block of the 16 rows (16 x block bytes), arranged so that one 64-byte
// vector holds the same 4 bytes of the 16 rows ([16 rows][4 bytes], row-major):
//
//   IQ4_XS (2176 bytes per group)
//     [0, 32)       d of rows 0..15 (fp16)
//     [32, 64)      scales_h of rows 0..15 (u16: bits 2j, 2j + 1 = the high bits of ls_j)
//     [64, 128)     scales_l: [16 rows][scales_l[0..4)] (bits 4j .. 4j + 3 of a row's dword =
//                   the low bits of ls_j)
//     [128, 2176)   codes: for k-group g < 32: [16 rows][qs[4g .. + 4)]: sub-block j = g / 4,
//                   the low nibbles are columns 32j + 4(g % 4) .. + 4, the high nibbles
//                   columns 32j + 16 + 4(g % 4) .. + 4 (values kIQ4Values[code])
//   Q3_K (1760 bytes per group)
//     [0, 512)      HM: for g < 8: [16 rows][hmask[4g .. + 4)]
//     [512, 1536)   QS: for g < 16: [16 rows][qs[4g .. + 4)]: bits 2k, 2k + 1 of byte
//                   qs[32h + l] are the code of column 128h + 32k + l, whose high bit is bit
//                   4h + k of hmask[l] (value (code | high << 2) - 4)
//     [1536, 1728)  scales: for i < 3: [16 rows][scales[4i .. + 4)] (ggml's 12 bytes of 16 6-bit
//                   scales, biased by 32)
//     [1728, 1760)  d of rows 0..15 (fp16)
//   Q2_K (1344 bytes per group)
//     [0, 256)      scales: for i < 4: [16 rows][scales[4i .. + 4)] (low nibble: scale of
//                   sub-block of 16 j, high nibble: its min)
//     [256, 1280)   QS: as Q3_K's (code of column 128h + 32k + l: bits 2k, 2k + 1 of
//                   qs[32h + l])
//     [1280, 1312)  d of rows 0..15 (fp16)
//     [1312, 1344)  dmin of rows 0..15 (fp16)
//
// Activations: the KP rows of panel_kq.h (int8 q per 256 with one scale, the sums of q over
// the sub-blocks of 32 in pair order); prepared by prepare_act_kp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/matmul_kernels.h"

namespace llmwb::kernels::detail {

constexpr size_t kIQ4XSGroupBytes = 2176;
constexpr size_t kQ3KGroupBytes = 1760;
constexpr size_t kQ2KGroupBytes = 1344;

// Position of sub-block j's sum in a KP row's s32 section (the pair order 0,2,1,3,4,6,5,7 is
// its own inverse).
constexpr int kKPSumPos[8] = {0, 2, 1, 3, 4, 6, 5, 7};

// AVX2 (panel_kx_avx2.cpp): with AVX-VNNI where the CPU has it. The two-argument form picks
// (vnni = true only on a CPU with AVX-VNNI); both give the same bits.
const PanelKernel* avx2_kx_panel_kernel(DType t);
const PanelKernel* avx2_kx_panel_kernel(DType t, bool vnni);
const PanelKernel* avxvnni_kx_panel_kernel(DType t); // panel_kx_vnni_avx2.cpp
const PanelKernel* avx512_kx_panel_kernel(DType t);  // panel_kx_avx512.cpp

} // namespace llmwb::kernels::detail
