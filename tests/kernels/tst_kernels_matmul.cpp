// matmul for every weight type x every SIMD level of this CPU x odd shapes x token counts,
// against matmul_reference (dequantize + double accumulation) and against the scalar kernels.
// Outputs are poisoned with NaN before each run and guarded after the end.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

struct Problem {
    DType type;
    int64_t rows, cols, n_tokens;
    std::vector<uint8_t> w;
    std::vector<float> x;
    std::vector<double> row_norm, tok_norm;

    Problem(DType t, int64_t r, int64_t c, int64_t nt, uint32_t seed)
        : type(t), rows(r), cols(c), n_tokens(nt) {
        const auto wf = test::random_floats(static_cast<size_t>(r * c), seed, 0.05f);
        x = test::random_floats(static_cast<size_t>(nt * c), seed + 1, 1.0f);
        // Vary the magnitude per row so that block scales differ.
        std::vector<float> scaled(wf);
        for (int64_t i = 0; i < r; ++i)
            for (int64_t j = 0; j < c; ++j)
                scaled[static_cast<size_t>(i * c + j)] *= 0.25f + static_cast<float>(i % 5);
        const int64_t rb = dtype_row_bytes(t, c);
        w.resize(static_cast<size_t>(rb * r));
        std::vector<float> deq(static_cast<size_t>(c));
        row_norm.resize(static_cast<size_t>(r));
        for (int64_t i = 0; i < r; ++i) {
            quantize_row(t, scaled.data() + i * c, w.data() + i * rb, c);
            dequantize_row(t, w.data() + i * rb, deq.data(), c);
            double s = 0;
            for (float v : deq)
                s += static_cast<double>(v) * v;
            row_norm[static_cast<size_t>(i)] = std::sqrt(s);
        }
        tok_norm.resize(static_cast<size_t>(nt));
        for (int64_t t2 = 0; t2 < nt; ++t2) {
            double s = 0;
            for (int64_t j = 0; j < c; ++j)
                s += static_cast<double>(x[static_cast<size_t>(t2 * c + j)]) *
                     x[static_cast<size_t>(t2 * c + j)];
            tok_norm[static_cast<size_t>(t2)] = std::sqrt(s);
        }
    }
    WeightMatrix matrix() const { return WeightMatrix{type, w.data(), rows, cols}; }
};

constexpr int kGuard = 16;
constexpr float kGuardValue = 12345.0f;

// Runs matmul into a NaN-poisoned buffer with a guard zone; returns the outputs.
std::vector<float> run_matmul(const Problem& p, ThreadPool* pool, bool* ok) {
    std::vector<float> y(static_cast<size_t>(p.rows * p.n_tokens + kGuard), NAN);
    for (int i = 0; i < kGuard; ++i)
        y[y.size() - 1 - static_cast<size_t>(i)] = kGuardValue;
    matmul(y.data(), p.matrix(), p.x.data(), p.n_tokens, pool);
    *ok = true;
    for (int i = 0; i < kGuard; ++i)
        if (y[y.size() - 1 - static_cast<size_t>(i)] != kGuardValue)
            *ok = false;
    y.resize(static_cast<size_t>(p.rows * p.n_tokens));
    return y;
}

double tolerance(DType t) {
    switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
        return 2e-5;
    default:
        return 1e-2; // activations are quantized to 8 bits per block
    }
}

} // namespace

namespace {

struct MatmulRow {
    std::string name;
    DType type;
    SimdLevel level;
    int rows, cols;
};

std::vector<MatmulRow> matmul_rows() {
    std::printf("CPU SIMD level: %s\n", simd_level_name(cpu_simd_level()));
    std::vector<MatmulRow> out;
    for (DType t : kAllDTypes) {
        const int be = static_cast<int>(dtype_block_elems(t));
        std::vector<std::pair<int, int>> shapes;
        if (be == 1)
            shapes = {{1, 1}, {7, 33}, {21, 301}};
        else if (be == 32)
            shapes = {{1, 32}, {7, 96}, {21, 288}};
        else
            shapes = {{1, 256}, {7, 768}, {5, 1280}};
        for (SimdLevel l : test::available_levels())
            for (auto [r, c] : shapes)
                out.push_back(
                    {mini_test::format("%s/%s/%dx%d", dtype_name(t), simd_level_name(l), r, c), t,
                     l, r, c});
    }
    return out;
}

struct TypeRow {
    std::string name;
    DType type;
};

std::vector<TypeRow> type_rows(std::initializer_list<DType> types) {
    std::vector<TypeRow> out;
    for (DType t : types)
        out.push_back({dtype_name(t), t});
    return out;
}

} // namespace

MT_TEST_TABLE(matchesReference, MatmulRow, matmul_rows()) {
    const DType t = row.type;
    const int level = static_cast<int>(row.level);
    const int rows = row.rows;
    const int cols = row.cols;
    test::SimdLevelGuard guard;
    ThreadPool pool(3);
    // Token counts on both sides of the packed-GEMM thresholds (5 and 10) and of its token
    // tiles (up to 6 or 4 tokens, split evenly).
    for (int64_t nt : {1, 2, 3, 4, 5, 7, 9, 10, 16, 17, 33, 67}) {
        MT_SCOPE("n_tokens %lld", static_cast<long long>(nt));
        const Problem p(t, rows, cols, nt, static_cast<uint32_t>(rows * 131 + cols + nt));
        std::vector<float> ref(static_cast<size_t>(rows * nt));
        matmul_reference(ref.data(), p.matrix(), p.x.data(), nt);

        set_simd_level(SimdLevel::Scalar);
        bool ok = false;
        const auto scalar = run_matmul(p, nullptr, &ok);
        MT_CHECK(ok);
        set_simd_level(static_cast<SimdLevel>(level));
        MT_COMPARE(static_cast<int>(active_simd_level()), level);
        for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
            const auto y = run_matmul(p, tp, &ok);
            MT_CHECK_MSG(ok, "wrote past the end of y");
            for (int64_t tk = 0; tk < nt; ++tk)
                for (int64_t r = 0; r < rows; ++r) {
                    const size_t i = static_cast<size_t>(tk * rows + r);
                    const double scale =
                        p.row_norm[static_cast<size_t>(r)] * p.tok_norm[static_cast<size_t>(tk)] +
                        1e-30;
                    const double err = std::fabs(static_cast<double>(y[i]) - ref[i]) / scale;
                    const double err_scalar =
                        std::fabs(static_cast<double>(y[i]) - scalar[i]) / scale;
                    MT_CHECK_MSG(std::isfinite(y[i]),
                                 "token %lld row %lld not written (n_tokens %lld)",
                                 static_cast<long long>(tk), static_cast<long long>(r),
                                 static_cast<long long>(nt));
                    MT_CHECK_MSG(err <= tolerance(t),
                                 "token %lld row %lld n_tokens %lld: %g vs ref %g (rel %g)",
                                 static_cast<long long>(tk), static_cast<long long>(r),
                                 static_cast<long long>(nt), static_cast<double>(y[i]),
                                 static_cast<double>(ref[i]), err);
                    // Same integer arithmetic as the scalar kernels: only float order differs.
                    MT_CHECK_MSG(err_scalar <= 2e-4,
                                 "token %lld row %lld n_tokens %lld: %g vs scalar %g",
                                 static_cast<long long>(tk), static_cast<long long>(r),
                                 static_cast<long long>(nt), static_cast<double>(y[i]),
                                 static_cast<double>(scalar[i]));
                }
        }
    }
}

// A larger matrix through the pool: each row range is written by exactly one thread.
MT_TEST_TABLE(largeThreaded, TypeRow,
              type_rows({DType::F32, DType::F16, DType::Q8_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                         DType::IQ4_NL, DType::Q4_K, DType::Q6_K})) {
    const DType t = row.type;
    ThreadPool pool(4);
    for (int64_t nt : {1, 9, 40}) {
        MT_SCOPE("n_tokens %lld", static_cast<long long>(nt));
        const Problem p(t, 515, 1024, nt, 5);
        std::vector<float> ref(static_cast<size_t>(515 * nt));
        matmul_reference(ref.data(), p.matrix(), p.x.data(), nt);
        bool ok = false;
        const auto y = run_matmul(p, &pool, &ok);
        MT_CHECK(ok);
        for (size_t i = 0; i < y.size(); ++i) {
            const double scale = p.row_norm[i % 515] * p.tok_norm[i / 515];
            MT_CHECK_MSG(std::fabs(y[i] - ref[i]) <= tolerance(t) * scale, "%zu", i);
        }
    }
}

// In the matrix-matrix path a token's outputs do not depend on the other tokens of the call
// (bit for bit), so batching requests does not change their results.
MT_TEST_TABLE(resultIndependentOfBatch, TypeRow,
              type_rows({DType::F32, DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                         DType::Q5_1, DType::IQ4_NL, DType::Q4_K, DType::Q6_K})) {
    const DType t = row.type;
    ThreadPool pool(2);
    const int64_t rows = 75, cols = 512;
    const Problem all(t, rows, cols, 45, 11);
    bool ok = false;
    const auto y_all = run_matmul(all, &pool, &ok);
    MT_CHECK(ok);
    // Tokens 7 .. 7 + n of the same inputs, alone.
    for (int64_t n : {16, 21, 38}) {
        Problem part = all;
        part.n_tokens = n;
        part.x.assign(all.x.begin() + 7 * cols, all.x.begin() + (7 + n) * cols);
        const auto y = run_matmul(part, &pool, &ok);
        MT_CHECK(ok);
        for (int64_t i = 0; i < n * rows; ++i)
            MT_CHECK_MSG(y[static_cast<size_t>(i)] == y_all[static_cast<size_t>(7 * rows + i)],
                         "n %lld token %lld row %lld", static_cast<long long>(n),
                         static_cast<long long>(i / rows), static_cast<long long>(i % rows));
    }
}

// Q4_1, Q5_0, Q5_1 and IQ4_NL have integer kernels at every level (not the dequantize-then-dot
// fallback, which reads fp32 activations), and the packed GEMM at AVX-512.
MT_TEST_TABLE(q32xKernelsAtEveryLevel, TypeRow,
              type_rows({DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL})) {
    const DType t = row.type;
    const detail::MatmulKernel* k = detail::scalar_matmul_kernel(t);
    MT_REQUIRE(k != nullptr);
    MT_CHECK(k->act_row_bytes != nullptr && k->prepare_act != nullptr && k->tile != nullptr);
    MT_CHECK(k == detail::scalar_q32x_matmul_kernel(t));
    if (cpu_simd_level() >= SimdLevel::Avx2) {
        k = detail::avx2_matmul_kernel(t);
        MT_REQUIRE(k != nullptr);
        MT_CHECK(k->act_row_bytes != nullptr && k == detail::avx2_q32x_matmul_kernel(t));
    }
    if (cpu_simd_level() >= SimdLevel::Avx512) {
        k = detail::avx512_matmul_kernel(t);
        MT_REQUIRE(k != nullptr);
        MT_CHECK(k->act_row_bytes != nullptr && k == detail::avx512_q32x_matmul_kernel(t));
        const detail::QGemm* q = detail::avx512_quant_gemm(t);
        MT_REQUIRE(q != nullptr);
        MT_CHECK(q->min_tokens >= 2 && q->min_tokens <= 8);
    }
}

// The tile kernels of these types compute each (row, token) the same way whatever the number of
// tokens in the call (below the packed GEMM's threshold): bit-identical to the token alone.
MT_TEST_TABLE(q32xTilesIndependentOfTokenCount, TypeRow,
              type_rows({DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL})) {
    const DType t = row.type;
    test::SimdLevelGuard guard;
    const int64_t rows = 13, cols = 352; // 11 blocks: an odd count (a last half pair)
    const Problem all(t, rows, cols, 9, 21);
    for (SimdLevel l : test::available_levels()) {
        MT_SCOPE("level %s", simd_level_name(l));
        set_simd_level(l);
        int64_t max_tokens = 9;
        if (l == SimdLevel::Avx512)
            max_tokens = detail::avx512_quant_gemm(t)->min_tokens - 1;
        std::vector<float> alone(static_cast<size_t>(rows * 9));
        for (int64_t tk = 0; tk < 9; ++tk) {
            Problem one = all;
            one.n_tokens = 1;
            one.x.assign(all.x.begin() + tk * cols, all.x.begin() + (tk + 1) * cols);
            bool ok = false;
            const auto y = run_matmul(one, nullptr, &ok);
            MT_CHECK(ok);
            std::copy(y.begin(), y.end(), alone.begin() + tk * rows);
        }
        for (int64_t n = 2; n <= max_tokens; ++n) {
            Problem part = all;
            part.n_tokens = n;
            part.x.assign(all.x.begin(), all.x.begin() + n * cols);
            bool ok = false;
            const auto y = run_matmul(part, nullptr, &ok);
            MT_CHECK(ok);
            for (int64_t i = 0; i < n * rows; ++i)
                MT_CHECK_MSG(y[static_cast<size_t>(i)] == alone[static_cast<size_t>(i)],
                             "n %lld token %lld row %lld", static_cast<long long>(n),
                             static_cast<long long>(i / rows), static_cast<long long>(i % rows));
        }
    }
}

MT_TEST(zeroTokensWritesNothing) {
    const Problem p(DType::Q8_0, 4, 64, 1, 3);
    float y[4] = {1, 2, 3, 4};
    matmul(y, p.matrix(), p.x.data(), 0, nullptr);
    MT_COMPARE(y[0], 1.0f);
    MT_COMPARE(y[3], 4.0f);
}

MINI_TEST_MAIN()
