// AVX2 (+ FMA, F16C) panel kernels of IQ4_XS, Q3_K and Q2_K (arrangement in panel_kx.h).
// Compiled with AVX2 flags and selected only after the CPU check.
//
// A panel's 64-byte code vector is two ymm of 8 rows x 4 code bytes (rows 0..7, then 8..15).
// Each IQ4_XS nibble goes through the IQ4_NL table with vpshufb (signed values, never 0); the dot
// step multiplies |a| by b with a's sign (a, b: the value and the activation). Q3_K and Q2_K:
// unsigned codes (0..7, 0..3) through vpmaddubsw into int16 sums over a sub-block of 16 (no
// saturation). vpmaddwd (AVX-VNNI: vpmulld on the int32 dots) multiplies the sums by the
// sub-block's scale, so per super-block, row and token the whole sum is exact in int32 and the
// float part is one fixed step (y += d_x * (d * sum), Q2_K's mins a second exact sum: vpmaddwd of
// min pairs by the KP row's sub-block sums; Q3_K's -4 offset starts each sub-block's sums), so a
// (row, token) value is the same bits whatever the number of tokens (PanelKernel's contract).
//
// AVX-VNNI (vpdpbusd on ymm) is used where the CPU has it (a run-time check; the level itself
// does not assume it): panel_kx_vnni_avx2.cpp, the same bits.
#define LLMWB_KX_AVX2_VNNI 0
#include "kernels/cpu/panel_kx_avx2.h"

#include "kernels/cpu/simd.h"

namespace llmwb::kernels::detail {

const PanelKernel* avx2_kx_panel_kernel(DType t, bool vnni) {
    return vnni ? avxvnni_kx_panel_kernel(t) : kernel_of(t);
}

const PanelKernel* avx2_kx_panel_kernel(DType t) {
    return avx2_kx_panel_kernel(t, cpu_has_avx_vnni());
}

} // namespace llmwb::kernels::detail
