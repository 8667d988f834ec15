// AVX2 panel kernels for Q5_0, Q5_1, Q4_1 and IQ4_NL with AVX-VNNI (vpdpbusd on ymm;
// panel_q5_avx2.h). This file is compiled for AVX-VNNI on top of the AVX2 flags; its kernels are
// returned only when the CPU has it (avx2_q5_panel_kernel).
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/panel_q5.h"
#include "kernels/cpu/quant_blocks.h"

// Everything below (the kernels of panel_q5_avx2.h, whose includes are above) for AVX-VNNI.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avxvnni"))), apply_to = function)
#else
#pragma GCC target("avxvnni")
#endif

#define LLMWB_Q5_AVX2_VNNI 1
#include "kernels/cpu/panel_q5_avx2.h"

namespace llmwb::kernels::detail {

const PanelKernel* avx2_vnni_q5_panel_kernel(DType t) {
    return q5_avx2_kernel_of(t);
}

} // namespace llmwb::kernels::detail

#if defined(__clang__)
#pragma clang attribute pop
#endif
