// AVX2 (+ FMA, F16C) panel kernels of Q4_K, Q5_K and Q6_K (arrangement in panel_kq.h). Compiled
// with AVX2 flags and selected only after the CPU check.
//
// A panel's 64-byte code vector is two ymm of 8 rows x 4 codes (rows 0..7, then 8..15). The
// codes (u8 <= 15, 31 or 63) times a broadcast 4-byte group of a token's int8 activations go
// through vpmaddubsw (pairs, no int16 saturation for these code sizes) into int16 accumulators,
// widened to int32 by vpmaddwd against ones before they could overflow (Q4_K: 8 k-groups, Q5_K:
// 4, Q6_K: 2). Per super-block, row and token: each sub-block's dot is exact in int32, the
// Q4_K/Q5_K mins term exact in int32, Q6_K's code offset (32) added exactly to the dot; the float
// part runs in one fixed order (acc = -dmin * msum; acc += (d * sc_j) * dot_j; y += d_x * acc),
// so a (row, token) value is the same bits whatever the number of tokens (PanelKernel's contract).
//
// AVX-VNNI (vpdpbusd on ymm) is used where the CPU has it (a run-time check; the level itself
// does not assume it): panel_kq_avxvnni_avx2.cpp, the same bits.
//
// One token: both halves of a panel per pass (one sequential stream). More tokens: one half
// (8 rows) x 2 tokens per register block, panels swept in chunks that stay in L2.
#define LLMWB_KQ_AVX2_VNNI 0
#include "kernels/cpu/panel_kq_avx2_kernels.h"

namespace llmwb::kernels::detail {

const PanelKernel* avx2_kq_panel_kernel(DType t, bool vnni) {
    return vnni ? avxvnni_kq_panel_kernel(t) : kernel_of(t);
}

const PanelKernel* avx2_kq_panel_kernel(DType t) {
    return avx2_kq_panel_kernel(t, cpu_has_avx_vnni());
}

} // namespace llmwb::kernels::detail
