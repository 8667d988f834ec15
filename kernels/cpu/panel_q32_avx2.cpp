// AVX2 panel kernels for Q8_0 and Q4_0 without AVX-VNNI (vpmaddubsw + vpmaddwd; panel_q32_avx2.h),
// and the level's choice between them and the AVX-VNNI ones (panel_q32_vnni_avx2.cpp), made at
// run time: an AVX2 CPU need not have AVX-VNNI.
#include "kernels/cpu/panel_q32_avx2.h"

#include <cstdlib>
#include <cstring>

namespace llmwb::kernels::detail {

namespace {

const PanelKernel kQ8_0 = make_avx2_panel_kernel<PlainQ8_0>();
const PanelKernel kQ4_0 = make_avx2_panel_kernel<PlainQ4_0>();

} // namespace

const PanelKernel* avx2_plain_q32_panel_kernel(DType t) {
    switch (t) {
    case DType::Q8_0:
        return &kQ8_0;
    case DType::Q4_0:
        return &kQ4_0;
    default:
        return nullptr;
    }
}

const PanelKernel* avx2_q32_panel_kernel(DType t) {
    return cpu_has_avx_vnni() ? avx2_vnni_q32_panel_kernel(t) : avx2_plain_q32_panel_kernel(t);
}

} // namespace llmwb::kernels::detail
