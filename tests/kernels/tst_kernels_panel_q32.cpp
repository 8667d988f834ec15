// Panel layout of Q8_0 and Q4_0 (panel_q32.h): pack / unpack_row are exact byte inverses, matmul
// on panels matches matmul_reference and the Rows layout at every SIMD level of this CPU (tails,
// one block, odd block counts, 1..40 tokens), and a token's outputs are bit-identical alone or
// in any batch, with and without threads.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/panel_q32.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight_layout.h"
#include "panel_test_util.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

// Quantized random rows (magnitude varying per row), in Rows and in Panels order.
struct Problem {
    DType type;
    int64_t rows, cols, n_tokens;
    std::vector<uint8_t> w_rows, w_panels;
    std::vector<float> x;
    std::vector<double> row_norm, tok_norm;

    Problem(DType t, int64_t r, int64_t c, int64_t nt, uint32_t seed)
        : type(t), rows(r), cols(c), n_tokens(nt) {
        const auto wf = test::random_floats(static_cast<size_t>(r * c), seed, 0.05f);
        x = test::random_floats(static_cast<size_t>(nt * c), seed + 1, 1.0f);
        const int64_t rb = dtype_row_bytes(t, c);
        w_rows.resize(static_cast<size_t>(rb * r));
        std::vector<float> row(static_cast<size_t>(c)), deq(static_cast<size_t>(c));
        row_norm.resize(static_cast<size_t>(r));
        for (int64_t i = 0; i < r; ++i) {
            for (int64_t j = 0; j < c; ++j)
                row[static_cast<size_t>(j)] =
                    wf[static_cast<size_t>(i * c + j)] * (0.25f + static_cast<float>(i % 5));
            quantize_row(t, row.data(), w_rows.data() + i * rb, c);
            dequantize_row(t, w_rows.data() + i * rb, deq.data(), c);
            double s = 0;
            for (float v : deq)
                s += static_cast<double>(v) * v;
            row_norm[static_cast<size_t>(i)] = std::sqrt(s);
        }
        w_panels.resize(w_rows.size());
        pack_matrix_panels(t, w_rows.data(), r, c, w_panels.data(), nullptr);
        tok_norm.resize(static_cast<size_t>(nt));
        for (int64_t k = 0; k < nt; ++k) {
            double s = 0;
            for (int64_t j = 0; j < c; ++j)
                s += static_cast<double>(x[static_cast<size_t>(k * c + j)]) *
                     x[static_cast<size_t>(k * c + j)];
            tok_norm[static_cast<size_t>(k)] = std::sqrt(s);
        }
    }
    WeightMatrix rows_matrix() const {
        return WeightMatrix{type, w_rows.data(), rows, cols, WeightLayout::Rows};
    }
    WeightMatrix panels_matrix() const {
        return WeightMatrix{type, w_panels.data(), rows, cols, WeightLayout::Panels};
    }
};

constexpr int kGuard = 16;
constexpr float kGuardValue = 12345.0f;

// matmul of tokens [t0, t0 + n) into a NaN-poisoned buffer with a guard zone after it.
std::vector<float> run(const WeightMatrix& w, const float* x, int64_t n, ThreadPool* pool,
                       bool* ok) {
    std::vector<float> y(static_cast<size_t>(w.rows * n + kGuard), NAN);
    for (int i = 0; i < kGuard; ++i)
        y[y.size() - 1 - static_cast<size_t>(i)] = kGuardValue;
    matmul(y.data(), w, x, n, pool);
    *ok = true;
    for (int i = 0; i < kGuard; ++i)
        if (y[y.size() - 1 - static_cast<size_t>(i)] != kGuardValue)
            *ok = false;
    y.resize(static_cast<size_t>(w.rows * n));
    return y;
}

struct Row {
    std::string name;
    DType type;
    SimdLevel level;
};

std::vector<Row> level_rows() {
    std::printf("CPU SIMD level: %s\n", simd_level_name(cpu_simd_level()));
    std::vector<Row> out;
    for (DType t : {DType::Q8_0, DType::Q4_0})
        for (SimdLevel l : test::available_levels())
            out.push_back({mini_test::format("%s/%s", dtype_name(t), simd_level_name(l)), t, l});
    return out;
}

std::vector<Row> type_rows() {
    return {{"Q8_0", DType::Q8_0, SimdLevel::Scalar}, {"Q4_0", DType::Q4_0, SimdLevel::Scalar}};
}

} // namespace

// Random bytes (every fp16 scale pattern, NaN and inf included: bytes, not values) survive
// pack + unpack_row exactly, for one block, odd and even block counts; pack moves every byte.
MT_TEST_TABLE(packUnpackExactInverse, Row, type_rows()) {
    const PanelFormat* f = panel_format(row.type);
    MT_REQUIRE(f != nullptr);
    std::mt19937 rng(7);
    for (int64_t cols : {32, 64, 96, 288, 896}) {
        MT_SCOPE("cols %lld", static_cast<long long>(cols));
        const auto rb = static_cast<size_t>(dtype_row_bytes(row.type, cols));
        std::vector<uint8_t> src(16 * rb), panel(16 * rb, 0xAB), back(rb);
        for (auto& b : src)
            b = static_cast<uint8_t>(rng());
        // Special fp16 scales: +inf, -inf, NaN (quiet and signalling), -0, the largest normal.
        const uint16_t special[] = {0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x8000, 0x7BFF};
        const size_t nb = static_cast<size_t>(cols / 32), bb = rb / nb;
        for (size_t i = 0; i < 6; ++i)
            std::memcpy(src.data() + i * rb + (i % nb) * bb, &special[i], 2);
        f->pack(src.data(), cols, panel.data());
        for (int r = 0; r < 16; ++r) {
            std::fill(back.begin(), back.end(), 0xCD);
            f->unpack_row(panel.data(), cols, r, back.data());
            MT_CHECK_MSG(std::memcmp(back.data(), src.data() + static_cast<size_t>(r) * rb, rb) ==
                             0,
                         "row %d", r);
        }
        // A permutation of the bytes: the sorted byte multisets agree.
        auto a = src, b = panel;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        MT_CHECK(a == b);
    }
}

// pack_matrix_panels + copy_weight_row give back every row, the rows % 16 tail included.
MT_TEST_TABLE(matrixRowsRoundTrip, Row, type_rows()) {
    const Problem p(row.type, 37, 160, 1, 3);
    const auto rb = static_cast<size_t>(dtype_row_bytes(row.type, 160));
    std::vector<uint8_t> back(rb);
    for (int64_t r = 0; r < p.rows; ++r) {
        copy_weight_row(p.panels_matrix(), r, back.data());
        MT_CHECK_MSG(std::memcmp(back.data(), p.w_rows.data() + r * rb, rb) == 0, "row %lld",
                     static_cast<long long>(r));
    }
    MT_CHECK(p.w_panels != p.w_rows); // the 32 panel rows were rearranged
}

// The kernels exist where they should (otherwise the tests below measure the driver's fallback).
MT_TEST_TABLE(kernelsPresent, Row, type_rows()) {
    MT_CHECK(detail::q32_panel_kernel(row.type, SimdLevel::Scalar) == nullptr);
    if (cpu_simd_level() >= SimdLevel::Avx512)
        MT_CHECK(detail::q32_panel_kernel(row.type, SimdLevel::Avx512) != nullptr);
    if (cpu_simd_level() >= SimdLevel::Avx2) {
        const detail::PanelKernel* k = detail::q32_panel_kernel(row.type, SimdLevel::Avx2);
        MT_CHECK(k != nullptr);
        MT_CHECK(k == (cpu_has_avx_vnni() ? detail::avx2_vnni_q32_panel_kernel(row.type)
                                          : detail::avx2_plain_q32_panel_kernel(row.type)));
    }
}

// Panels vs matmul_reference (dequantize + double dot; tolerance of the Rows kernels: 8-bit
// activations) and vs the Rows layout at the same level (same integer products: only the float
// order differs). Shapes: one block, odd block counts, rows % 16 != 0, 1 .. 3 panels.
MT_TEST_TABLE(matchesReference, Row, level_rows()) {
    test::SimdLevelGuard guard;
    set_simd_level(row.level);
    MT_REQUIRE(active_simd_level() == row.level);
    ThreadPool pool(2);
    const int64_t shapes[][2] = {{16, 32}, {35, 96}, {48, 288}, {50, 160}, {33, 64}};
    for (const auto& s : shapes) {
        const int64_t rows = s[0], cols = s[1];
        const Problem p(row.type, rows, cols, 40, static_cast<uint32_t>(rows * 131 + cols));
        std::vector<float> ref(static_cast<size_t>(rows * 40));
        matmul_reference(ref.data(), p.rows_matrix(), p.x.data(), 40);
        for (int64_t nt = 1; nt <= 40; ++nt) {
            MT_SCOPE("%lldx%lld n_tokens %lld", static_cast<long long>(rows),
                     static_cast<long long>(cols), static_cast<long long>(nt));
            for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
                bool ok = false;
                const auto y = run(p.panels_matrix(), p.x.data(), nt, tp, &ok);
                MT_CHECK_MSG(ok, "wrote past the end of y");
                const auto yr = run(p.rows_matrix(), p.x.data(), nt, tp, &ok);
                for (int64_t tk = 0; tk < nt; ++tk)
                    for (int64_t r = 0; r < rows; ++r) {
                        const size_t i = static_cast<size_t>(tk * rows + r);
                        const double scale = p.row_norm[static_cast<size_t>(r)] *
                                                 p.tok_norm[static_cast<size_t>(tk)] +
                                             1e-30;
                        const double err = std::fabs(static_cast<double>(y[i]) - ref[i]) / scale;
                        const double err_rows =
                            std::fabs(static_cast<double>(y[i]) - yr[i]) / scale;
                        MT_CHECK_MSG(std::isfinite(y[i]) && err <= 1e-2,
                                     "token %lld row %lld: %g vs ref %g (rel %g)",
                                     static_cast<long long>(tk), static_cast<long long>(r),
                                     static_cast<double>(y[i]), ref[i], err);
                        MT_CHECK_MSG(err_rows <= 2e-4, "token %lld row %lld: %g vs rows %g",
                                     static_cast<long long>(tk), static_cast<long long>(r),
                                     static_cast<double>(y[i]), static_cast<double>(yr[i]));
                    }
            }
        }
    }
}

// A token's outputs of the panel rows do not depend on the other tokens of the call: each token
// alone and every window of 2..40 tokens equal the 40-token call bit for bit, with ThreadPool(2)
// and without. (The rows % 16 tail goes through the Rows kernels: not checked here.)
MT_TEST_TABLE(bitIdenticalInAnyBatch, Row, level_rows()) {
    test::SimdLevelGuard guard;
    set_simd_level(row.level);
    ThreadPool pool(2);
    for (const int64_t rows : {48, 80}) {
        const int64_t cols = 288, total = 40;
        const Problem p(row.type, rows, cols, total, static_cast<uint32_t>(rows + 5));
        bool ok = false;
        const auto all = run(p.panels_matrix(), p.x.data(), total, &pool, &ok);
        MT_CHECK(ok);
        for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool})
            for (int64_t n = 1; n <= total; ++n) {
                const int64_t t0 = (n * 7) % (total - n + 1); // a window [t0, t0 + n)
                const auto y = run(p.panels_matrix(), p.x.data() + t0 * cols, n, tp, &ok);
                MT_CHECK(ok);
                for (int64_t i = 0; i < n * rows; ++i)
                    MT_CHECK_MSG(std::memcmp(&y[static_cast<size_t>(i)],
                                             &all[static_cast<size_t>(t0 * rows + i)], 4) == 0,
                                 "rows %lld n %lld token %lld row %lld",
                                 static_cast<long long>(rows), static_cast<long long>(n),
                                 static_cast<long long>(t0 + i / rows),
                                 static_cast<long long>(i % rows));
            }
        for (int64_t t = 0; t < total; ++t) { // each token alone
            const auto y = run(p.panels_matrix(), p.x.data() + t * cols, 1, nullptr, &ok);
            MT_CHECK(std::memcmp(y.data(), all.data() + t * rows, static_cast<size_t>(rows) * 4) ==
                     0);
        }
    }
}

namespace {

struct VariantRow {
    std::string name;
    DType type;
    bool vnni;
};

std::vector<VariantRow> avx2_variants() {
    std::vector<VariantRow> out;
    if (cpu_simd_level() < SimdLevel::Avx2)
        return out;
    std::printf("AVX-VNNI: %s\n", cpu_has_avx_vnni() ? "yes" : "no");
    for (DType t : {DType::Q8_0, DType::Q4_0}) {
        out.push_back({mini_test::format("%s/avx2-plain", dtype_name(t)), t, false});
        if (cpu_has_avx_vnni())
            out.push_back({mini_test::format("%s/avx2-vnni", dtype_name(t)), t, true});
    }
    return out;
}

// Runs a panel kernel directly on the full panels of p for tokens [t0, t0 + n).
std::vector<float> run_kernel(const detail::PanelKernel& k, const Problem& p, int64_t t0,
                              int64_t n) {
    return test::run_panel_kernel(k, p.type, p.w_panels.data(), p.rows, p.cols,
                                  p.x.data() + t0 * p.cols, n);
}

} // namespace

// Both AVX2 variants (with and without AVX-VNNI; the driver runs only the one this CPU picks)
// called directly: against matmul_reference, and bit-identical for every window of tokens.
MT_TEST_TABLE(avx2VariantsDirect, VariantRow, avx2_variants()) {
    const detail::PanelKernel* k = row.vnni ? detail::avx2_vnni_q32_panel_kernel(row.type)
                                            : detail::avx2_plain_q32_panel_kernel(row.type);
    MT_REQUIRE(k != nullptr);
    const int64_t shapes[][2] = {{16, 32}, {48, 96}, {32, 288}};
    for (const auto& s : shapes) {
        const int64_t rows = s[0], cols = s[1], total = 40;
        const Problem p(row.type, rows, cols, total, static_cast<uint32_t>(rows * 7 + cols));
        std::vector<float> ref(static_cast<size_t>(rows * total));
        matmul_reference(ref.data(), p.rows_matrix(), p.x.data(), total);
        const auto all = run_kernel(*k, p, 0, total);
        for (int64_t i = 0; i < rows * total; ++i) {
            const size_t u = static_cast<size_t>(i);
            const double scale = p.row_norm[static_cast<size_t>(i % rows)] *
                                 p.tok_norm[static_cast<size_t>(i / rows)];
            MT_CHECK_MSG(std::fabs(static_cast<double>(all[u]) - ref[u]) <= 1e-2 * scale,
                         "%lldx%lld token %lld row %lld: %g vs ref %g",
                         static_cast<long long>(rows), static_cast<long long>(cols),
                         static_cast<long long>(i / rows), static_cast<long long>(i % rows),
                         static_cast<double>(all[u]), ref[u]);
        }
        for (int64_t n = 1; n <= total; ++n) {
            const int64_t t0 = (n * 5) % (total - n + 1);
            const auto y = run_kernel(*k, p, t0, n);
            MT_CHECK_MSG(std::memcmp(y.data(), all.data() + t0 * rows, y.size() * 4) == 0,
                         "%lldx%lld tokens [%lld, %lld) differ from the 40-token call",
                         static_cast<long long>(rows), static_cast<long long>(cols),
                         static_cast<long long>(t0), static_cast<long long>(t0 + n));
        }
    }
}

MINI_TEST_MAIN()
