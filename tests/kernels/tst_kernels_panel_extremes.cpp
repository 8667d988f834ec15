// The largest integer sums the panel kernels can meet, for every quantized panel type and every
// kernel variant this CPU can run (each SIMD level's kernel, and both AVX2 variants: plain
// vpmaddubsw + vpmaddwd and AVX-VNNI): weights whose every byte is one pattern (0x00, 0xFF, 0x80,
// 0x7F, 0xAA, 0x55: the largest and smallest codes, scales and mins each layout can hold) with
// d = dmin = 1, against activations all +1 or all -1 (quantized to exactly +-127, so every product
// of a run has one sign). The plain AVX2 kernels sum vpmaddubsw pairs in int16 over runs whose
// length is set by the code range; a run one group too long, or a pair that saturates, overflows
// only here: random weights and activations cancel and never come near the limits. Each output
// must equal matmul_reference to float rounding, alone (1 token), in a 2-token tile and in 5; and
// through matmul() at every level with 70 tokens (the drivers and the large-batch paths).
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/panel_kq.h"
#include "kernels/cpu/panel_kx.h"
#include "kernels/cpu/panel_q32.h"
#include "kernels/cpu/panel_q5.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/weight_layout.h"
#include "panel_test_util.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

enum class Family { Q32, Q5, KQ, KX };

struct TypeInfo {
    DType type;
    Family family;
    std::vector<size_t> scales; // offsets of the fp16 d (and dmin / m) in a block: set to 1
};

const std::vector<TypeInfo>& types() {
    static const std::vector<TypeInfo> all = {
        {DType::Q8_0, Family::Q32, {offsetof(BlockQ8_0, d)}},
        {DType::Q4_0, Family::Q32, {offsetof(BlockQ4_0, d)}},
        {DType::Q5_0, Family::Q5, {offsetof(BlockQ5_0, d)}},
        {DType::Q5_1, Family::Q5, {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)}},
        {DType::Q4_1, Family::Q5, {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)}},
        {DType::IQ4_NL, Family::Q5, {offsetof(BlockIQ4_NL, d)}},
        {DType::Q4_K, Family::KQ, {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)}},
        {DType::Q5_K, Family::KQ, {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)}},
        {DType::Q6_K, Family::KQ, {offsetof(BlockQ6_K, d)}},
        {DType::Q2_K, Family::KX, {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)}},
        {DType::Q3_K, Family::KX, {offsetof(BlockQ3_K, d)}},
        {DType::IQ4_XS, Family::KX, {offsetof(BlockIQ4_XS, d)}},
    };
    return all;
}

const detail::PanelKernel* level_kernel(Family f, DType t, SimdLevel l) {
    switch (f) {
    case Family::Q32:
        return detail::q32_panel_kernel(t, l);
    case Family::Q5:
        return detail::q5_panel_kernel(t, l);
    case Family::KQ:
        return detail::kq_panel_kernel(t, l);
    case Family::KX:
        return detail::kx_panel_kernel(t, l);
    }
    return nullptr;
}

const detail::PanelKernel* avx2_kernel(Family f, DType t, bool vnni) {
    switch (f) {
    case Family::Q32:
        return vnni ? detail::avx2_vnni_q32_panel_kernel(t)
                    : detail::avx2_plain_q32_panel_kernel(t);
    case Family::Q5:
        return vnni ? detail::avx2_vnni_q5_panel_kernel(t) : detail::avx2_plain_q5_panel_kernel(t);
    case Family::KQ:
        return detail::avx2_kq_panel_kernel(t, vnni);
    case Family::KX:
        return detail::avx2_kx_panel_kernel(t, vnni);
    }
    return nullptr;
}

struct Row {
    std::string name;
    DType type;
    std::vector<size_t> scales;
    const detail::PanelKernel* kernel; // called directly; nullptr: matmul() at `level`
    SimdLevel level;
};

std::vector<Row> rows() {
    std::printf("CPU SIMD level: %s, AVX-VNNI: %s\n", simd_level_name(cpu_simd_level()),
                cpu_has_avx_vnni() ? "yes" : "no");
    std::vector<Row> out;
    for (const TypeInfo& ti : types()) {
        const char* tn = dtype_name(ti.type);
        std::vector<const detail::PanelKernel*> seen;
        const auto add = [&](const detail::PanelKernel* k, const std::string& what) {
            if (k == nullptr)
                return;
            for (const auto* s : seen)
                if (s == k)
                    return;
            seen.push_back(k);
            out.push_back({mini_test::format("%s/%s", tn, what.c_str()), ti.type, ti.scales, k,
                           SimdLevel::Scalar});
        };
        for (SimdLevel l : test::available_levels())
            add(level_kernel(ti.family, ti.type, l), simd_level_name(l));
        if (cpu_simd_level() >= SimdLevel::Avx2) {
            add(avx2_kernel(ti.family, ti.type, false), "avx2-plain");
            if (cpu_has_avx_vnni())
                add(avx2_kernel(ti.family, ti.type, true), "avx2-vnni");
        }
        for (SimdLevel l : test::available_levels())
            out.push_back({mini_test::format("%s/matmul-%s", tn, simd_level_name(l)), ti.type,
                           ti.scales, nullptr, l});
    }
    return out;
}

} // namespace

MT_TEST_TABLE(extremeCodesAndActivations, Row, rows()) {
    test::SimdLevelGuard guard;
    const int64_t rows = 32, cols = 512; // two panels, two 256-column blocks
    const auto rb = static_cast<size_t>(dtype_row_bytes(row.type, cols));
    const auto bb = static_cast<size_t>(dtype_block_bytes(row.type));
    const uint16_t one = 0x3C00; // fp16 1.0
    for (const int fill : {0x00, 0xFF, 0x80, 0x7F, 0xAA, 0x55}) {
        std::vector<uint8_t> w(rb * rows, static_cast<uint8_t>(fill)), wp(w.size());
        for (size_t blk = 0; blk < w.size() / bb; ++blk)
            for (size_t off : row.scales)
                std::memcpy(w.data() + blk * bb + off, &one, 2);
        pack_matrix_panels(row.type, w.data(), rows, cols, wp.data(), nullptr);
        // The bound of each output: the sum of its weights' magnitudes (|x| = 1).
        std::vector<double> bound(static_cast<size_t>(rows));
        std::vector<float> deq(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows; ++r) {
            dequantize_row(row.type, w.data() + static_cast<size_t>(r) * rb, deq.data(), cols);
            for (float v : deq)
                bound[static_cast<size_t>(r)] += std::fabs(static_cast<double>(v));
        }
        const WeightMatrix mr{row.type, w.data(), rows, cols, WeightLayout::Rows};
        const WeightMatrix mp{row.type, wp.data(), rows, cols, WeightLayout::Panels};
        for (const float sign : {1.0f, -1.0f}) {
            const std::vector<int64_t> counts =
                row.kernel ? std::vector<int64_t>{1, 2, 5} : std::vector<int64_t>{70};
            for (const int64_t nt : counts) {
                MT_SCOPE("fill 0x%02X, x %+g, %lld tokens", fill, static_cast<double>(sign),
                         static_cast<long long>(nt));
                const std::vector<float> x(static_cast<size_t>(nt * cols), sign);
                std::vector<float> ref(static_cast<size_t>(rows * nt)), y;
                matmul_reference(ref.data(), mr, x.data(), nt);
                if (row.kernel) {
                    y = test::run_panel_kernel(*row.kernel, row.type, wp.data(), rows, cols,
                                               x.data(), nt);
                } else {
                    set_simd_level(row.level);
                    y.assign(ref.size(), NAN);
                    matmul(y.data(), mp, x.data(), nt, nullptr);
                }
                int reported = 0;
                for (size_t i = 0; i < y.size(); ++i) {
                    const double b = bound[i % static_cast<size_t>(rows)];
                    const bool ok =
                        std::fabs(static_cast<double>(y[i]) - ref[i]) <= 1e-5 * b + 1e-3;
                    if (!ok && ++reported <= 4)
                        MT_CHECK_MSG(ok, "output %zu (row %zu): %.9g vs ref %.9g (|w| sum %g)", i,
                                     i % static_cast<size_t>(rows), static_cast<double>(y[i]),
                                     ref[i], b);
                }
                MT_CHECK_MSG(reported == 0, "%d outputs differ", reported);
            }
        }
    }
}

MINI_TEST_MAIN()
