// AVX2 panel kernels for Q8_0 and Q4_0 without AVX-VNNI (vpmaddubsw + vpmaddwd; panel_q32_avx2.h),
// and the level's choice between them and the AVX-VNNI ones (panel_q32_vnni_avx2.cpp), made at
// run time: an AVX2 CPU need not have AVX-VNNI.
#include "kernels/cpu/panel_q32_avx2.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>

namespace llmwb::kernels::detail {

namespace {

const PanelKernel kQ8_0 = make_avx2_panel_kernel<PlainQ8_0>();
const PanelKernel kQ4_0 = make_avx2_panel_kernel<PlainQ4_0>();

} // namespace

// CPUID leaf 7 sub-leaf 1, EAX bit 4 (the AVX state itself is checked by the AVX2 level's
// dispatch). LLMWB_AVX_VNNI=0 in the environment hides it (to measure the plain kernels on a CPU
// that has it).
bool cpu_has_avx_vnni() {
    static const bool has = [] {
        const char* v = std::getenv("LLMWB_AVX_VNNI");
        if (v && std::strcmp(v, "0") == 0)
            return false;
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (__get_cpuid_max(0, nullptr) < 7)
            return false;
        __cpuid_count(7, 1, a, b, c, d);
        return (a & (1u << 4)) != 0;
    }();
    return has;
}

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
