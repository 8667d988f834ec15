// The AVX2 panel kernels of IQ4_XS with AVX-VNNI's vpdpbusd (ymm) for the dot step
// (panel_kx_avx2.h); selected by panel_kx_avx2.cpp only when the CPU has AVX-VNNI
// (kernels::cpu_has_avx_vnni). Compiled for AVX-VNNI on top of the file's AVX2 flags.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/panel_kq.h"
#include "kernels/cpu/panel_kx.h"
#include "kernels/cpu/quant_blocks.h"

// Everything below (the kernels of panel_kx_avx2.h, whose includes are above).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avxvnni"))), apply_to = function)
#else
#pragma GCC target("avxvnni")
#endif

#define LLMWB_KX_AVX2_VNNI 1
#include "kernels/cpu/panel_kx_avx2.h"

namespace llmwb::kernels::detail {

const PanelKernel* avxvnni_kx_panel_kernel(DType t) {
    return kernel_of(t);
}

} // namespace llmwb::kernels::detail

#if defined(__clang__)
#pragma clang attribute pop
#endif
