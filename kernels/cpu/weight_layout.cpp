#include "kernels/cpu/weight_layout.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb::kernels {

namespace {

bool layout_from_environment() {
    const char* v = std::getenv("LLMWB_WEIGHT_LAYOUT");
    return !(v && std::strcmp(v, "rows") == 0);
}

std::atomic<bool>& layout_switch() {
    static std::atomic<bool> on{layout_from_environment()};
    return on;
}

} // namespace

const PanelFormat* panel_format(DType t) {
    if (const PanelFormat* f = detail::q32_panel_format(t))
        return f;
    if (const PanelFormat* f = detail::kq_panel_format(t))
        return f;
    if (const PanelFormat* f = detail::q5_panel_format(t))
        return f;
    if (const PanelFormat* f = detail::kx_panel_format(t))
        return f;
    return detail::float_panel_format(t);
}

bool panel_layout_enabled() {
    return layout_switch().load(std::memory_order_relaxed);
}

void set_panel_layout_enabled(bool on) {
    layout_switch().store(on, std::memory_order_relaxed);
}

const char* weight_layout_name(WeightLayout l) {
    return l == WeightLayout::Panels ? "panels" : "rows";
}

bool panel_layout_applies(DType t, int64_t rows, int64_t cols) {
    return rows >= kPanelRows && cols > 0 && cols % dtype_block_elems(t) == 0 &&
           panel_format(t) != nullptr;
}

void pack_matrix_panels(DType t, const void* src, int64_t rows, int64_t cols, void* dst,
                        ThreadPool* pool) {
    const auto row_bytes = static_cast<size_t>(dtype_row_bytes(t, cols));
    const auto* s = static_cast<const uint8_t*>(src);
    auto* d = static_cast<uint8_t*>(dst);
    const PanelFormat* f = panel_format(t);
    const int64_t n_panels = f ? rows / kPanelRows : 0;
    const size_t panel_bytes = row_bytes * kPanelRows;
    auto work = [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p)
            f->pack(s + static_cast<size_t>(p) * panel_bytes, cols,
                    d + static_cast<size_t>(p) * panel_bytes);
    };
    if (pool && pool->size() > 1 && n_panels > 1)
        pool->parallel_for(n_panels, 1, work);
    else
        work(0, n_panels);
    const size_t done = static_cast<size_t>(n_panels) * panel_bytes;
    std::memcpy(d + done, s + done, static_cast<size_t>(rows) * row_bytes - done);
}

void copy_weight_row(const WeightMatrix& w, int64_t r, uint8_t* dst) {
    const auto row_bytes = static_cast<size_t>(dtype_row_bytes(w.type, w.cols));
    const auto* base = static_cast<const uint8_t*>(w.data);
    const int64_t full = w.rows / kPanelRows * kPanelRows;
    if (w.layout == WeightLayout::Panels && r < full) {
        const int64_t p = r / kPanelRows;
        panel_format(w.type)->unpack_row(base + static_cast<size_t>(p) * kPanelRows * row_bytes,
                                         w.cols, static_cast<int>(r % kPanelRows), dst);
        return;
    }
    std::memcpy(dst, base + static_cast<size_t>(r) * row_bytes, row_bytes);
}

void dequantize_weight_row(const WeightMatrix& w, int64_t r, float* dst) {
    if (w.layout == WeightLayout::Rows) {
        const auto row_bytes = static_cast<size_t>(dtype_row_bytes(w.type, w.cols));
        dequantize_row(w.type,
                       static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r) * row_bytes,
                       dst, w.cols);
        return;
    }
    thread_local std::vector<uint8_t> row;
    row.resize(static_cast<size_t>(dtype_row_bytes(w.type, w.cols)));
    copy_weight_row(w, r, row.data());
    dequantize_row(w.type, row.data(), dst, w.cols);
}

} // namespace llmwb::kernels
