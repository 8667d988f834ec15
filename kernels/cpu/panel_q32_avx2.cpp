// AVX2 panel kernels for Q8_0 and Q4_0 (layout: panel_q32.h). Not yet: the driver unpacks.
#include "kernels/cpu/panel_q32.h"

namespace llmwb::kernels::detail {

const PanelKernel* avx2_q32_panel_kernel(DType) {
    return nullptr;
}

} // namespace llmwb::kernels::detail
