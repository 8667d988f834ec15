// The AVX2 panel kernels of Q4_K, Q5_K and Q6_K with AVX-VNNI's vpdpbusd (ymm) for the dot
// step (panel_kq_avx2_kernels.h); selected by panel_kq_avx2.cpp only when the CPU has AVX-VNNI
// (kernels::cpu_has_avx_vnni). Compiled for AVX-VNNI on top of the file's AVX2 flags.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/panel_kq.h"

// Everything below (the kernels of panel_kq_avx2_kernels.h, whose includes are above).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avxvnni"))), apply_to = function)
#else
#pragma GCC target("avxvnni")
#endif

#define LLMWB_KQ_AVX2_VNNI 1
#include "kernels/cpu/panel_kq_avx2_kernels.h"

namespace llmwb::kernels::detail {

const PanelKernel* avxvnni_kq_panel_kernel(DType t) {
    return kernel_of(t);
}

} // namespace llmwb::kernels::detail

#if defined(__clang__)
#pragma clang attribute pop
#endif
