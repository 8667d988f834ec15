// Panel layout (weight_layout.h) for the float types F16 and BF16: the formats (panel_float.h
// describes the bytes) and the kernel of each SIMD level. F32 stays in Rows order; the scalar
// level has no panel kernel (the driver unpacks the panels and runs the Rows kernels).
#include "kernels/cpu/panel_float.h"

#include <cstring>

#include "kernels/cpu/matmul_kernels.h"

namespace llmwb::kernels::detail {

namespace {

// Element (row i, column c) of a panel: F16 at 32 c + 2 i. BF16: columns in pairs at 64 j + 4 i
// (+ 2 for the odd column of the pair), an odd last column at 64 * (cols / 2) + 2 i. The loops
// write the panel in order.
void f16_pack(const uint8_t* rows16, int64_t cols, uint8_t* panel) {
    const size_t row_bytes = static_cast<size_t>(cols) * 2;
    for (int64_t c = 0; c < cols; ++c)
        for (int i = 0; i < kPanelRows; ++i, panel += 2)
            std::memcpy(panel, rows16 + static_cast<size_t>(i) * row_bytes + 2 * c, 2);
}

void f16_unpack_row(const uint8_t* panel, int64_t cols, int row, uint8_t* dst) {
    for (int64_t c = 0; c < cols; ++c)
        std::memcpy(dst + 2 * c, panel + static_cast<size_t>(c) * kF16PanelColBytes + 2 * row, 2);
}

void bf16_pack(const uint8_t* rows16, int64_t cols, uint8_t* panel) {
    const size_t row_bytes = static_cast<size_t>(cols) * 2;
    const int64_t pairs = cols / 2;
    for (int64_t j = 0; j < pairs; ++j)
        for (int i = 0; i < kPanelRows; ++i, panel += 4)
            std::memcpy(panel, rows16 + static_cast<size_t>(i) * row_bytes + 4 * j, 4);
    if (cols % 2)
        for (int i = 0; i < kPanelRows; ++i, panel += 2)
            std::memcpy(panel, rows16 + static_cast<size_t>(i) * row_bytes + 4 * pairs, 2);
}

void bf16_unpack_row(const uint8_t* panel, int64_t cols, int row, uint8_t* dst) {
    const int64_t pairs = cols / 2;
    for (int64_t j = 0; j < pairs; ++j)
        std::memcpy(dst + 4 * j, panel + static_cast<size_t>(j) * kBF16PanelPairBytes + 4 * row, 4);
    if (cols % 2)
        std::memcpy(dst + 4 * pairs,
                    panel + static_cast<size_t>(pairs) * kBF16PanelPairBytes + 2 * row, 2);
}

const PanelFormat kF16Format{f16_pack, f16_unpack_row};
const PanelFormat kBF16Format{bf16_pack, bf16_unpack_row};

} // namespace

const PanelFormat* float_panel_format(DType t) {
    switch (t) {
    case DType::F16:
        return &kF16Format;
    case DType::BF16:
        return &kBF16Format;
    default:
        return nullptr;
    }
}

const PanelKernel* float_panel_kernel(DType t, SimdLevel level) {
    switch (level) {
    case SimdLevel::Avx512:
        return avx512_float_panel_kernel(t, t == DType::BF16 && bf16_dot_active());
    case SimdLevel::Avx2:
        return avx2_float_panel_kernel(t);
    case SimdLevel::Scalar:
        break;
    }
    return nullptr;
}

} // namespace llmwb::kernels::detail
