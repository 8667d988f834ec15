// Panel layout of IQ4_XS, Q3_K and Q2_K (kernels/cpu/panel_kx.h): pack / unpack_row are exact
// inverses on arbitrary bytes (NaN / inf fp16 patterns included); matmul over a Panels matrix
// matches matmul_reference at every SIMD level of this CPU (panel kernels where the level has them,
// the driver's unpack fallback elsewhere, the Rows tail); a (row, token) result is bit-identical
// alone and in any batch.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/panel_kq.h"
#include "kernels/cpu/panel_kx.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight_layout.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

constexpr DType kTypes[] = {DType::IQ4_XS, DType::Q3_K, DType::Q2_K};

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> v(n);
    for (auto& b : v)
        b = static_cast<uint8_t>(rng());
    return v;
}

// A quantized matrix in both layouts, activations, and the norms the tolerance scales with.
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
            for (int64_t j = 0; j < c; ++j) // magnitudes vary per row: block scales differ
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
        return {type, w_rows.data(), rows, cols, WeightLayout::Rows};
    }
    WeightMatrix panels_matrix() const {
        return {type, w_panels.data(), rows, cols, WeightLayout::Panels};
    }
};

constexpr int kGuard = 16;
constexpr float kGuardValue = 12345.0f;

// matmul of n tokens (from x) into a NaN-poisoned buffer with a guard zone after it.
std::vector<float> run(const WeightMatrix& w, const float* x, int64_t n, ThreadPool* pool,
                       bool* ok) {
    std::vector<float> y(static_cast<size_t>(w.rows * n + kGuard), NAN);
    std::fill(y.end() - kGuard, y.end(), kGuardValue);
    matmul(y.data(), w, x, n, pool);
    *ok = std::all_of(y.end() - kGuard, y.end(), [](float v) { return v == kGuardValue; });
    y.resize(static_cast<size_t>(w.rows * n));
    return y;
}

struct TypeRow {
    std::string name;
    DType type;
};

std::vector<TypeRow> type_rows() {
    std::vector<TypeRow> out;
    for (DType t : kTypes)
        out.push_back({dtype_name(t), t});
    return out;
}

struct LevelRow {
    std::string name;
    DType type;
    SimdLevel level;
};

std::vector<LevelRow> level_rows() {
    std::vector<LevelRow> out;
    for (DType t : kTypes)
        for (SimdLevel l : test::available_levels())
            out.push_back({mini_test::format("%s/%s", dtype_name(t), simd_level_name(l)), t, l});
    return out;
}

} // namespace

// pack then unpack_row gives every row's bytes back, and packing the unpacked rows gives the
// panel back, on random bytes (every bit pattern of scales, codes and fp16 fields).
MT_TEST_TABLE(formatRoundTripsBytes, TypeRow, type_rows()) {
    const PanelFormat* f = panel_format(row.type);
    MT_REQUIRE(f != nullptr);
    MT_CHECK(f == detail::kx_panel_format(row.type));
    for (int64_t cols : {256, 768, 2048}) {
        MT_SCOPE("cols %lld", static_cast<long long>(cols));
        const auto row_bytes = static_cast<size_t>(dtype_row_bytes(row.type, cols));
        const auto src = random_bytes(row_bytes * kPanelRows, static_cast<uint32_t>(cols));
        std::vector<uint8_t> panel(src.size()), back(src.size()), again(src.size());
        f->pack(src.data(), cols, panel.data());
        MT_CHECK(panel != src); // rearranged, not copied
        for (int r = 0; r < kPanelRows; ++r)
            f->unpack_row(panel.data(), cols, r, back.data() + r * row_bytes);
        MT_CHECK(back == src);
        f->pack(back.data(), cols, again.data());
        MT_CHECK(again == panel);
    }
}

// Dequantizing a row of the Panels matrix (copy_weight_row + unpack_row) gives the Rows values.
MT_TEST_TABLE(panelRowsDequantizeAsRows, TypeRow, type_rows()) {
    const Problem p(row.type, 37, 512, 1, 3);
    std::vector<float> a(512), b(512);
    for (int64_t r = 0; r < p.rows; ++r) {
        dequantize_weight_row(p.rows_matrix(), r, a.data());
        dequantize_weight_row(p.panels_matrix(), r, b.data());
        MT_CHECK_MSG(a == b, "row %lld", static_cast<long long>(r));
    }
}

// The panel kernels use the KP activation rows of panel_kq.h (each level's quantizer writes
// prepare_act_kp's bytes); the scalar level has none (the driver's unpack fallback).
MT_TEST_TABLE(kernelsPerLevel, LevelRow, level_rows()) {
    const detail::PanelKernel* k = detail::kx_panel_kernel(row.type, row.level);
    if (row.level == SimdLevel::Scalar) {
        MT_CHECK(k == nullptr);
        return;
    }
    MT_REQUIRE(k != nullptr && k->prepare_act != nullptr && k->panels != nullptr);
    for (int64_t cols : {256, 1792}) {
        MT_COMPARE(k->act_row_bytes(cols), detail::kp_bytes(cols));
        // The level's quantizer writes the plain one's bytes.
        const auto x = test::random_floats(static_cast<size_t>(cols), 9, 3.0f);
        std::vector<uint8_t> a(detail::kp_bytes(cols), 0), b(a.size(), 0);
        k->prepare_act(x.data(), cols, a.data());
        detail::prepare_act_kp(x.data(), cols, b.data());
        MT_CHECK(a == b);
    }
}

// The AVX2 level's two dot steps (vpmaddubsw into int16 sums; AVX-VNNI's vpdpbusd) give the
// same bits: matmul at that level tests the one this CPU selects, this test ties the other to it.
MT_TEST_TABLE(avx2VnniAndPlainAgree, TypeRow, type_rows()) {
    if (cpu_simd_level() < SimdLevel::Avx2 || !cpu_has_avx_vnni())
        MT_SKIP("no AVX-VNNI on this CPU");
    const detail::PanelKernel* plain = detail::avx2_kx_panel_kernel(row.type, false);
    const detail::PanelKernel* vnni = detail::avx2_kx_panel_kernel(row.type, true);
    MT_REQUIRE(plain != nullptr && vnni != nullptr && plain != vnni);
    const int64_t rows = 48, cols = 768;
    for (int64_t nt : {1, 2, 5}) {
        MT_SCOPE("n_tokens %lld", static_cast<long long>(nt));
        const Problem p(row.type, rows, cols, nt, 23);
        const size_t stride = plain->act_row_bytes(cols);
        std::vector<uint8_t> acts(stride * static_cast<size_t>(nt) + 64);
        auto* a = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(acts.data()) + 63) &
                                             ~uintptr_t{63});
        for (int64_t t = 0; t < nt; ++t)
            plain->prepare_act(p.x.data() + t * cols, cols, a + t * stride);
        std::vector<float> y1(static_cast<size_t>(rows * nt), NAN), y2(y1.size(), NAN);
        const auto row_bytes = static_cast<size_t>(dtype_row_bytes(row.type, cols));
        const detail::PanelArgs args1{p.w_panels.data(), row_bytes, cols, a, stride, nt,
                                      y1.data(),         rows};
        detail::PanelArgs args2 = args1;
        args2.y = y2.data();
        plain->panels(args1, 0, rows / kPanelRows);
        vnni->panels(args2, 0, rows / kPanelRows);
        MT_CHECK(std::all_of(y1.begin(), y1.end(), [](float v) { return std::isfinite(v); }));
        MT_CHECK(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)) == 0);
    }
}

// Panels matmul against the reference (dequantize + double dot) and against the same level's
// Rows matmul (same integer products, only the float order differs), for shapes with and
// without a Rows tail, one and several super-blocks, 1..40 tokens, with and without threads.
MT_TEST_TABLE(matchesReference, LevelRow, level_rows()) {
    test::SimdLevelGuard guard;
    set_simd_level(row.level);
    MT_REQUIRE(active_simd_level() == row.level);
    if (row.level != SimdLevel::Scalar)
        MT_CHECK(detail::kx_panel_kernel(row.type, row.level) != nullptr);
    ThreadPool pool(2);
    const std::pair<int64_t, int64_t> shapes[] = {{16, 256}, {37, 512}, {64, 1280}, {21, 256}};
    for (const auto& shape : shapes) {
        const int64_t rows = shape.first, cols = shape.second; // (a lambda below uses them)
        for (int64_t nt = 1; nt <= 40; nt += (nt < 10 ? 1 : 7)) {
            MT_SCOPE("%lldx%lld n_tokens %lld", static_cast<long long>(rows),
                     static_cast<long long>(cols), static_cast<long long>(nt));
            const Problem p(row.type, rows, cols, nt, static_cast<uint32_t>(rows * 7 + cols + nt));
            std::vector<float> ref(static_cast<size_t>(rows * nt));
            matmul_reference(ref.data(), p.rows_matrix(), p.x.data(), nt);
            bool ok = false;
            const auto y_rows = run(p.rows_matrix(), p.x.data(), nt, nullptr, &ok);
            for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
                const auto y = run(p.panels_matrix(), p.x.data(), nt, tp, &ok);
                MT_CHECK_MSG(ok, "wrote past the end of y");
                for (int64_t tk = 0; tk < nt; ++tk)
                    for (int64_t r = 0; r < rows; ++r) {
                        const size_t i = static_cast<size_t>(tk * rows + r);
                        const double scale = p.row_norm[static_cast<size_t>(r)] *
                                                 p.tok_norm[static_cast<size_t>(tk)] +
                                             1e-30;
                        const double err = std::fabs(static_cast<double>(y[i]) - ref[i]) / scale;
                        const double err_rows =
                            std::fabs(static_cast<double>(y[i]) - y_rows[i]) / scale;
                        MT_CHECK_MSG(std::isfinite(y[i]), "token %lld row %lld not written",
                                     static_cast<long long>(tk), static_cast<long long>(r));
                        MT_CHECK_MSG(err <= 1e-2, "token %lld row %lld: %g vs ref %g (rel %g)",
                                     static_cast<long long>(tk), static_cast<long long>(r),
                                     static_cast<double>(y[i]), ref[i], err);
                        MT_CHECK_MSG(err_rows <= 2e-4, "token %lld row %lld: %g vs rows %g",
                                     static_cast<long long>(tk), static_cast<long long>(r),
                                     static_cast<double>(y[i]), static_cast<double>(y_rows[i]));
                    }
            }
        }
    }
}

// A token's outputs over the full panels are the same bits alone, in every prefix batch of
// 1..40 tokens, and in a shuffled batch, with two threads and without.
MT_TEST_TABLE(bitIdenticalInAnyBatch, LevelRow, level_rows()) {
    test::SimdLevelGuard guard;
    set_simd_level(row.level);
    ThreadPool pool(2);
    const int64_t rows = 80, cols = 768, n_all = 40;
    const Problem p(row.type, rows, cols, n_all, 17);
    const WeightMatrix w = p.panels_matrix();
    bool ok = false;
    std::vector<std::vector<float>> alone(n_all);
    for (int64_t t = 0; t < n_all; ++t) {
        alone[static_cast<size_t>(t)] = run(w, p.x.data() + t * cols, 1, nullptr, &ok);
        MT_CHECK(ok);
    }
    auto check = [&](const std::vector<float>& y, const std::vector<int64_t>& tokens,
                     const char* what) {
        for (size_t k = 0; k < tokens.size(); ++k)
            for (int64_t r = 0; r < rows; ++r) {
                const float a = alone[static_cast<size_t>(tokens[k])][static_cast<size_t>(r)];
                const float b = y[k * static_cast<size_t>(rows) + static_cast<size_t>(r)];
                MT_CHECK_MSG(std::memcmp(&a, &b, sizeof a) == 0,
                             "%s batch of %zu: token %lld row %lld: %.9g alone, %.9g in batch",
                             what, tokens.size(), static_cast<long long>(tokens[k]),
                             static_cast<long long>(r), static_cast<double>(a),
                             static_cast<double>(b));
            }
    };
    for (int64_t n = 1; n <= n_all; ++n) {
        std::vector<int64_t> tokens(static_cast<size_t>(n));
        std::iota(tokens.begin(), tokens.end(), 0);
        check(run(w, p.x.data(), n, nullptr, &ok), tokens, "prefix");
        check(run(w, p.x.data(), n, &pool, &ok), tokens, "prefix, 2 threads");
    }
    std::vector<int64_t> order(static_cast<size_t>(n_all));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(5));
    order.resize(29);
    std::vector<float> xs;
    for (int64_t t : order)
        xs.insert(xs.end(), p.x.begin() + t * cols, p.x.begin() + (t + 1) * cols);
    check(run(w, xs.data(), 29, &pool, &ok), order, "shuffled");
}

// Prefill-sized batches: every token's outputs are the bits it gets alone, for several token
// counts, with an odd panel count (the last panel takes the
// register-blocked path) and a Rows tail, with two threads and without; and they stay within
// the reference's tolerance.
MT_TEST_TABLE(largeBatchesBitIdentical, LevelRow, level_rows()) {
    test::SimdLevelGuard guard;
    set_simd_level(row.level);
    ThreadPool pool(2);
    const int64_t rows = 90, cols = 768, n_all = 131;
    const Problem p(row.type, rows, cols, n_all, 29);
    const WeightMatrix w = p.panels_matrix();
    bool ok = false;
    std::vector<float> alone(static_cast<size_t>(rows * n_all));
    for (int64_t t = 0; t < n_all; ++t) {
        const auto y = run(w, p.x.data() + t * cols, 1, nullptr, &ok);
        std::copy(y.begin(), y.end(), alone.begin() + t * rows);
    }
    std::vector<float> ref(alone.size());
    matmul_reference(ref.data(), p.rows_matrix(), p.x.data(), n_all);
    for (int64_t i = 0; i < rows * n_all; ++i) {
        const int64_t tk = i / rows, r = i % rows;
        const double scale =
            p.row_norm[static_cast<size_t>(r)] * p.tok_norm[static_cast<size_t>(tk)] + 1e-30;
        MT_CHECK_MSG(
            std::fabs(alone[static_cast<size_t>(i)] - ref[static_cast<size_t>(i)]) / scale <= 1e-2,
            "token %lld row %lld", static_cast<long long>(tk), static_cast<long long>(r));
    }
    for (int64_t n : {int64_t{63}, int64_t{64}, int64_t{65}, n_all}) {
        for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
            MT_SCOPE("n_tokens %lld, %s", static_cast<long long>(n), tp ? "2 threads" : "1 thread");
            const auto y = run(w, p.x.data(), n, tp, &ok);
            MT_CHECK(ok);
            MT_CHECK(std::memcmp(y.data(), alone.data(), y.size() * sizeof(float)) == 0);
        }
    }
}

// Every code and scale value (random code, scale and high-bit bytes: both ends of the IQ4_NL
// table and of Q3_K's codes, 6-bit scales 0 and 63) with finite d of both signs: Panels vs
// matmul_reference at every level, within the bound of the activations' 8-bit rounding; and the
// Panels rows dequantize as Rows.
MT_TEST_TABLE(randomCodesMatchReference, LevelRow, level_rows()) {
    test::SimdLevelGuard guard;
    set_simd_level(row.level);
    const int64_t rows = 48, cols = 512, nt = 7;
    const auto rb = static_cast<size_t>(dtype_row_bytes(row.type, cols));
    const auto bb = static_cast<size_t>(dtype_block_bytes(row.type));
    std::mt19937 rng(11);
    std::vector<uint8_t> w(rb * rows), wp(w.size());
    for (auto& b : w)
        b = static_cast<uint8_t>(rng());
    const uint16_t scales[] = {0x2E66, 0xAE66, 0x211F, 0xA11F, 0x3C00}; // +-0.1, +-0.01, 1
    // The fp16 d (and Q2_K's dmin) of a block.
    const size_t d_off = row.type == DType::Q3_K ? bb - 2 : row.type == DType::Q2_K ? bb - 4 : 0;
    for (size_t blk = 0; blk < w.size() / bb; ++blk) {
        std::memcpy(w.data() + blk * bb + d_off, &scales[rng() % 5], 2);
        if (row.type == DType::Q2_K)
            std::memcpy(w.data() + blk * bb + d_off + 2, &scales[rng() % 5], 2);
    }
    pack_matrix_panels(row.type, w.data(), rows, cols, wp.data(), nullptr);
    const auto x = test::random_floats(static_cast<size_t>(nt * cols), 5, 1.0f);
    const WeightMatrix mr{row.type, w.data(), rows, cols, WeightLayout::Rows};
    const WeightMatrix mp{row.type, wp.data(), rows, cols, WeightLayout::Panels};
    std::vector<float> ref(static_cast<size_t>(rows * nt)), y(ref.size(), NAN), wrow(cols),
        wpan(cols);
    matmul_reference(ref.data(), mr, x.data(), nt);
    matmul(y.data(), mp, x.data(), nt, nullptr);
    for (int64_t r = 0; r < rows; ++r) {
        dequantize_weight_row(mr, r, wrow.data());
        dequantize_weight_row(mp, r, wpan.data());
        MT_CHECK_MSG(wrow == wpan, "row %lld", static_cast<long long>(r));
        for (int64_t t = 0; t < nt; ++t) {
            // The activations' 8-bit rounding moves x by at most amax(super-block) / 254: the
            // error bound is sum |w| * amax / 254 (+ float rounding).
            const float* xt = x.data() + t * cols;
            double bound = 0, scale = 0;
            for (int64_t c = 0; c < cols; ++c) {
                float amax = 0;
                for (int64_t k = c / 256 * 256; k < c / 256 * 256 + 256; ++k)
                    amax = std::max(amax, std::fabs(xt[k]));
                const double aw = std::fabs(static_cast<double>(wrow[static_cast<size_t>(c)]));
                bound += aw * amax / 254.0;
                scale += aw * std::fabs(xt[c]);
            }
            const size_t i = static_cast<size_t>(t * rows + r);
            MT_CHECK_MSG(std::fabs(static_cast<double>(y[i]) - ref[i]) <=
                             1.01 * bound + 1e-5 * scale,
                         "token %lld row %lld: %g vs ref %g", static_cast<long long>(t),
                         static_cast<long long>(r), static_cast<double>(y[i]), ref[i]);
        }
    }
}

MINI_TEST_MAIN()
