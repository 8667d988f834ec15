// AVX2 panel kernels for Q5_0, Q5_1, Q4_1 and IQ4_NL without AVX-VNNI (vpmaddubsw + vpmaddwd;
// panel_q5_avx2.h), and the level's choice between them and the AVX-VNNI ones
// (panel_q5_vnni_avx2.cpp), made at run time: an AVX2 CPU need not have AVX-VNNI.
#include "kernels/cpu/panel_q5_avx2.h"

namespace llmwb::kernels::detail {

const PanelKernel* avx2_plain_q5_panel_kernel(DType t) {
    return q5_avx2_kernel_of(t);
}

const PanelKernel* avx2_q5_panel_kernel(DType t) {
    return cpu_has_avx_vnni() ? avx2_vnni_q5_panel_kernel(t) : avx2_plain_q5_panel_kernel(t);
}

} // namespace llmwb::kernels::detail
