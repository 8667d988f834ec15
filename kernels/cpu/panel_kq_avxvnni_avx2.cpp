// The AVX2 panel kernels of Q4_K, Q5_K and Q6_K with AVX-VNNI's vpdpbusd (ymm) for the dot
// step (panel_kq_avx2_kernels.h); selected by panel_kq_avx2.cpp only when the CPU has AVX-VNNI.
#pragma GCC target("avx2,fma,f16c,avxvnni")

#define LLMWB_KQ_AVX2_VNNI 1
#include "kernels/cpu/panel_kq_avx2_kernels.h"

namespace llmwb::kernels::detail {

const PanelKernel* avxvnni_kq_panel_kernel(DType t) {
    return kernel_of(t);
}

} // namespace llmwb::kernels::detail
