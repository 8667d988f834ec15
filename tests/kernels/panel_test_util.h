// Shared by the panel kernel tests: one panel kernel called directly, without matmul()'s driver.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/dtype.h"
#include "kernels/cpu/matmul_kernels.h"

namespace llmwb::kernels::test {

// Kernel k over the full panels of a packed matrix w (rows x cols of type t, rows a multiple of
// 16) for n tokens x (n rows of cols floats): the activations k prepares, then k.panels over every
// panel. Returns n x rows outputs, NaN where the kernel wrote nothing.
inline std::vector<float> run_panel_kernel(const detail::PanelKernel& k, DType t, const uint8_t* w,
                                           int64_t rows, int64_t cols, const float* x, int64_t n) {
    const size_t stride = k.act_row_bytes(cols);
    detail::AlignedBuffer acts;
    uint8_t* a = acts.get(stride * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        k.prepare_act(x + i * cols, cols, a + static_cast<size_t>(i) * stride);
    std::vector<float> y(static_cast<size_t>(rows * n), NAN);
    const detail::PanelArgs args{
        w, static_cast<size_t>(dtype_row_bytes(t, cols)), cols, a, stride, n, y.data(), rows};
    k.panels(args, 0, rows / 16);
    return y;
}

} // namespace llmwb::kernels::test
