// Panel layout of the K-quant types Q4_K, Q5_K and Q6_K (weight_layout.h): the arrangement of
// one 16-row panel, shared by the formats (panel_kq.cpp) and the kernels (panel_kq_avx512.cpp).
// Internal to kernels/cpu.
//
// A panel is a sequence of super-block groups, one per 256 columns, each holding exactly the
// bytes of that super-block of the 16 rows (16 x block bytes), arranged so that one 64-byte
// vector holds the same 4 columns of the 16 rows ([16 rows][4 bytes], row-major):
//
//   Q4_K (2304 bytes per group)
//     [0, 32)       d of rows 0..15 (fp16)
//     [32, 64)      dmin of rows 0..15 (fp16)
//     [64, 128)     SC: row r's dword, byte k = (sc[k] & 15) | (sc[k + 4] & 15) << 4
//     [128, 192)    MN: the same for the mins m
//     [192, 256)    HI: byte k = sc[k] >> 4 | (sc[k + 4] >> 4) << 2 | (m[k] >> 4) << 4
//                                  | (m[k + 4] >> 4) << 6
//                   (sc, m: the 6-bit scales and mins of the 8 sub-blocks of 32; the 12-byte
//                   ggml packing of 16 6-bit values is re-packed into 12 other bytes per row)
//     [256, 2304)   codes: for chunk c < 4 and k-group g < 8: [16 rows][qs[32c + 4g .. + 4)]:
//                   the low nibbles are columns 64c + 4g .. + 4 (sub-block 2c), the high
//                   nibbles columns 64c + 32 + 4g .. + 4 (sub-block 2c + 1)
//   Q5_K (2816 bytes per group): Q4_K's d, dmin, SC, MN, HI, then
//     [256, 768)    QH: for g < 8: [16 rows][qh[4g .. + 4)] (bit 2c: high bit of the low-nibble
//                   code of chunk c, bit 2c + 1: of the high-nibble code)
//     [768, 2816)   codes as Q4_K's
//   Q6_K (3360 bytes per group)
//     [0, 256)      scales: for sub-block j < 16: [16 rows] int8
//     [256, 3328)   codes: for half h < 2, k-group g < 8, three vectors
//                   LA = [16 rows][ql[64h + 4g .. + 4)], LB = [16 rows][ql[64h + 32 + 4g .. + 4)],
//                   QH = [16 rows][qh[32h + 4g .. + 4)]
//     [3328, 3360)  d of rows 0..15 (fp16)
//
// Activations of the panel kernels (KP rows, one per token, 64-byte aligned sections):
//   q     int8[cols], natural order, one scale per 256
//   d     float per 256
//   s32   per 256, int16 sums of q over the 8 sub-blocks of 32 in the order 0,2,1,3,4,6,5,7
//         (pairs for vpmaddwd against Q4_K/Q5_K's (m[k], m[k + 2]) words)
//   n16   per 256, int32 -32 * (sum of q over each sub-block of 16) (Q6_K's code offset)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/matmul_kernels.h"

namespace llmwb::kernels::detail {

constexpr size_t kQ4KGroupBytes = 2304;
constexpr size_t kQ5KGroupBytes = 2816;
constexpr size_t kQ6KGroupBytes = 3360;

struct KPLayout {
    size_t d_off, s32_off, n16_off, row_bytes; // q at offset 0
    explicit KPLayout(int64_t cols) {
        const size_t nb = static_cast<size_t>(cols / 256);
        d_off = align64(static_cast<size_t>(cols));
        s32_off = d_off + align64(nb * sizeof(float));
        n16_off = s32_off + align64(nb * 8 * sizeof(int16_t));
        row_bytes = n16_off + align64(nb * 16 * sizeof(int32_t));
    }
};
// Pack / unpack helpers of the 256-column families (kq, kx): n bytes of row r (at src) as
// k-groups: for g < n / 4, dst[64g + 4r .. + 4) = src[4g .. + 4), and back.
inline void put_kgroups(const uint8_t* src, int n, uint8_t* dst, int r) {
    for (int g = 0; g < n / 4; ++g)
        std::memcpy(dst + 64 * g + 4 * r, src + 4 * g, 4);
}
inline void get_kgroups(const uint8_t* src, int n, int r, uint8_t* dst) {
    for (int g = 0; g < n / 4; ++g)
        std::memcpy(dst + 4 * g, src + 64 * g + 4 * r, 4);
}

inline size_t kp_bytes(int64_t cols) {
    return KPLayout(cols).row_bytes;
}

// Plain quantizer of a KP row (the AVX2 and AVX-512 levels have their own, same bytes).
void prepare_act_kp(const float* x, int64_t cols, uint8_t* dst);

// AVX2 (panel_kq_avx2.cpp): with AVX-VNNI where the CPU has it. The two-argument form picks
// (vnni = true only on a CPU with AVX-VNNI); both give the same bits.
const PanelKernel* avx2_kq_panel_kernel(DType t);
const PanelKernel* avx2_kq_panel_kernel(DType t, bool vnni);
const PanelKernel* avxvnni_kq_panel_kernel(DType t); // panel_kq_avxvnni_avx2.cpp
const PanelKernel* avx512_kq_panel_kernel(DType t);  // panel_kq_avx512.cpp

// Q6_K at large token counts (panel_kq_gemm_avx512.cpp): the pairs of panels in [p0, p1) (an odd
// last panel is left to the caller), each pair's codes decoded once into `scratch`
// (q6k_gemm_scratch_bytes, 64-byte aligned); the same bits as the panel kernel.
constexpr int64_t kQ6KGemmMinTokens = 64;
size_t q6k_gemm_scratch_bytes(int64_t cols);
void q6k_gemm_pairs_avx512(const PanelArgs& a, int64_t p0, int64_t p1, uint8_t* scratch);

} // namespace llmwb::kernels::detail
