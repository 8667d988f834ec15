// AVX2 panel kernels for Q8_0 and Q4_0 with AVX-VNNI (vpdpbusd on ymm; panel_q32_avx2.h). This
// file is compiled for AVX-VNNI on top of the AVX2 flags; its kernels are returned only when the
// CPU has it (avx2_q32_panel_kernel).
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/panel_q32.h"

// Everything below (the kernels of panel_q32_avx2.h, whose includes are above) for AVX-VNNI.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avxvnni"))), apply_to = function)
#else
#pragma GCC target("avxvnni")
#endif

#include "kernels/cpu/panel_q32_avx2.h"

namespace llmwb::kernels::detail {

namespace {

const PanelKernel kQ8_0 = make_avx2_panel_kernel<VnniQ8_0>();
const PanelKernel kQ4_0 = make_avx2_panel_kernel<VnniQ4_0>();

} // namespace

const PanelKernel* avx2_vnni_q32_panel_kernel(DType t) {
    switch (t) {
    case DType::Q8_0:
        return &kQ8_0;
    case DType::Q4_0:
        return &kQ4_0;
    default:
        return nullptr;
    }
}

} // namespace llmwb::kernels::detail

#if defined(__clang__)
#pragma clang attribute pop
#endif
