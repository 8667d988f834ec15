// fp32 ops against double-precision references, at every SIMD level, with ragged lengths.
#include <cmath>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/bandwidth.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

struct LevelRow {
    std::string name;
    SimdLevel level;
};

std::vector<LevelRow> level_rows() {
    std::vector<LevelRow> rows;
    for (SimdLevel l : test::available_levels())
        rows.push_back({simd_level_name(l), l});
    return rows;
}

struct LevelLengthRow {
    std::string name;
    SimdLevel level;
    int n;
};

std::vector<LevelLengthRow> level_length_rows() {
    std::vector<LevelLengthRow> rows;
    for (SimdLevel l : test::available_levels())
        for (int n : {0, 1, 7, 15, 16, 17, 33, 64, 1001})
            rows.push_back({mini_test::format("%s/%d", simd_level_name(l), n), l, n});
    return rows;
}

} // namespace

MT_TEST(simdLevels) {
    test::SimdLevelGuard guard;
    set_simd_level(SimdLevel::Avx512);
    MT_COMPARE(active_simd_level(), cpu_simd_level()); // clamped to what the CPU has
    set_simd_level(SimdLevel::Scalar);
    MT_COMPARE(active_simd_level(), SimdLevel::Scalar);
    MT_COMPARE(std::string(simd_level_name(SimdLevel::Avx2)), std::string("avx2"));
}

MT_TEST_TABLE(dotAndAxpy, LevelLengthRow, level_length_rows()) {
    const int n = row.n;
    test::SimdLevelGuard guard;
    set_simd_level(row.level);
    const auto a = test::random_floats(static_cast<size_t>(n) + 1, 1);
    const auto b = test::random_floats(static_cast<size_t>(n) + 1, 2);
    double ref = 0, norm = 0;
    for (int i = 0; i < n; ++i) {
        ref += static_cast<double>(a[i]) * b[i];
        norm += std::fabs(static_cast<double>(a[i]) * b[i]);
    }
    MT_CHECK(std::fabs(dot_f32(a.data(), b.data(), n) - ref) <= 1e-6 * norm + 1e-30);

    auto y = test::random_floats(static_cast<size_t>(n) + 1, 3);
    const float guard_value = y[static_cast<size_t>(n)];
    const auto y0 = y;
    axpy_f32(y.data(), 0.75f, a.data(), n);
    for (int i = 0; i < n; ++i)
        MT_CHECK(std::fabs(y[i] - (y0[i] + 0.75 * a[i])) <=
                 1e-6 * (std::fabs(y0[i]) + std::fabs(a[i])));
    MT_COMPARE(y[static_cast<size_t>(n)], guard_value); // nothing written past n
}

MT_TEST_TABLE(rmsnorm, LevelRow, level_rows()) {
    test::SimdLevelGuard guard;
    set_simd_level(row.level);
    for (int n : {1, 13, 896}) {
        MT_SCOPE("n %d", n);
        const auto x = test::random_floats(static_cast<size_t>(n), 5, 3.0f);
        const auto w = test::random_floats(static_cast<size_t>(n), 6);
        std::vector<float> out(static_cast<size_t>(n), NAN);
        llmwb::kernels::rmsnorm(out.data(), x.data(), w.data(), n, 1e-6f);
        double ss = 0;
        for (float v : x)
            ss += static_cast<double>(v) * v;
        const double inv = 1.0 / std::sqrt(ss / n + 1e-6);
        for (int i = 0; i < n; ++i)
            MT_CHECK(std::fabs(out[i] - x[i] * inv * w[i]) <=
                     1e-5 * (std::fabs(x[i] * inv * w[i]) + 1e-3));
        auto inplace = x; // out may alias x
        llmwb::kernels::rmsnorm(inplace.data(), inplace.data(), w.data(), n, 1e-6f);
        MT_CHECK(inplace == out);
    }
}

MT_TEST_TABLE(elementwise, LevelRow, level_rows()) {
    test::SimdLevelGuard guard;
    set_simd_level(row.level);
    const int n = 1003;
    auto g = test::random_floats(n, 7, 4.0f);
    const auto u = test::random_floats(n, 8);
    // Extremes: exp(-g) overflowing / underflowing, zero, and a wide sweep.
    const float extremes[] = {-200.0f, -90.0f, -88.5f, -30.0f, -1e-8f, 0.0f,
                              1e-8f,   30.0f,  88.5f,  90.0f,  200.0f};
    for (size_t k = 0; k < std::size(extremes); ++k)
        g[k] = extremes[k];
    for (int k = 0; k < 400; ++k)
        g[20 + k] = -40.0f + 0.2f * static_cast<float>(k);
    for (int len : {n, 1, 7, 15, 17}) { // ragged tails of every vector width
        MT_SCOPE("len %d", len);
        std::vector<float> out(static_cast<size_t>(n), NAN);
        silu_mul(out.data(), g.data(), u.data(), len);
        for (int i = 0; i < len; ++i) {
            const double ref = g[i] / (1.0 + std::exp(-static_cast<double>(g[i]))) * u[i];
            MT_CHECK_MSG(std::fabs(out[i] - ref) <= 1e-6 * (std::fabs(ref) + 1e-30),
                         "g=%g u=%g out=%g ref=%g", static_cast<double>(g[i]),
                         static_cast<double>(u[i]), static_cast<double>(out[i]), ref);
        }
        for (int i = len; i < n; ++i)
            MT_CHECK(std::isnan(out[i])); // nothing written past n
    }
    // gelu_tanh_mul (gemma's GeGLU) and softcap (gemma2's logit soft-caps), same inputs.
    for (int len : {n, 1, 7, 15, 17}) {
        MT_SCOPE("gelu len %d", len);
        std::vector<float> out(static_cast<size_t>(n), NAN);
        gelu_tanh_mul(out.data(), g.data(), u.data(), len);
        for (int i = 0; i < len; ++i) {
            const double x = g[i];
            // 0.5 x (1 + tanh z) written as x / (1 + e^(-2z)) (exact in double for any x); the
            // float result's relative error grows with |2z| (the exponent's argument).
            const double z = 0.7978845608028654 * (x + 0.044715 * x * x * x);
            const double ref = x / (1.0 + std::exp(-2.0 * z)) * u[i];
            MT_CHECK_MSG(std::fabs(out[i] - ref) <=
                             5e-7 * (1.0 + std::fabs(2 * z)) * std::fabs(ref) + 1e-30,
                         "g=%g u=%g out=%g ref=%g", x, static_cast<double>(u[i]),
                         static_cast<double>(out[i]), ref);
        }
        for (int i = len; i < n; ++i)
            MT_CHECK(std::isnan(out[i]));
    }
    for (float cap : {0.5f, 30.0f, 50.0f})
        for (int len : {n, 1, 7, 15, 17}) {
            MT_SCOPE("softcap %g len %d", static_cast<double>(cap), len);
            std::vector<float> x(static_cast<size_t>(n), NAN);
            std::copy(g.begin(), g.begin() + len, x.begin());
            softcap(x.data(), len, cap);
            for (int i = 0; i < len; ++i) {
                const double ref = cap * std::tanh(static_cast<double>(g[i]) / cap);
                MT_CHECK_MSG(std::fabs(x[i] - ref) <= 1e-6 * std::fabs(ref) + 1e-30,
                             "x=%g cap=%g out=%g ref=%g", static_cast<double>(g[i]),
                             static_cast<double>(cap), static_cast<double>(x[i]), ref);
            }
            for (int i = len; i < n; ++i)
                MT_CHECK(std::isnan(x[i]));
        }
    std::vector<float> sum(n, NAN);
    add(sum.data(), g.data(), u.data(), n);
    for (int i = 0; i < n; ++i)
        MT_COMPARE(sum[i], g[i] + u[i]);
    auto s2 = g;
    add(s2.data(), s2.data(), u.data(), n); // out may alias a
    MT_CHECK(s2 == sum);
}

MT_TEST(softmaxRow) {
    for (int n : {1, 5, 1000}) {
        MT_SCOPE("n %d", n);
        auto x = test::random_floats(static_cast<size_t>(n), 9, 10.0f);
        x[0] = 80.0f; // large values must not overflow
        const auto x0 = x;
        softmax(x.data(), n);
        double mx = x0[0], total = 0;
        for (float v : x0)
            mx = std::max<double>(mx, v);
        double z = 0;
        for (float v : x0)
            z += std::exp(v - mx);
        for (int i = 0; i < n; ++i) {
            MT_CHECK(std::fabs(x[i] - std::exp(x0[i] - mx) / z) <= 1e-6);
            total += x[i];
        }
        MT_CHECK(std::fabs(total - 1.0) < 1e-5);
    }
}

MT_TEST(bandwidthProbe) {
    ThreadPool pool(2);
    const double wide = measure_read_bandwidth_gbs(pool, size_t{8} << 20, true, 2);
    const double scalar = measure_read_bandwidth_gbs(pool, size_t{8} << 20, false, 2);
    MT_CHECK(wide > 0.1 && std::isfinite(wide));
    MT_CHECK(scalar > 0.1 && std::isfinite(scalar));
}

MINI_TEST_MAIN()
