// Panel layout (weight_layout.h) for the kq types: formats and kernels. Placeholder: no type
// of this family has a panel layout yet (matrices stay in Rows order).
#include "kernels/cpu/matmul_kernels.h"

namespace llmwb::kernels::detail {

const PanelFormat* kq_panel_format(DType) {
    return nullptr;
}

const PanelKernel* kq_panel_kernel(DType, SimdLevel) {
    return nullptr;
}

} // namespace llmwb::kernels::detail
