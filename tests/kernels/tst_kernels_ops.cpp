// fp32 ops against double-precision references, at every SIMD level, with ragged lengths.
#include <QtTest>

#include <cmath>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/bandwidth.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

using namespace llmwb::kernels;

class TestKernelsOps : public QObject {
    Q_OBJECT
private slots:
    void simdLevels() {
        test::SimdLevelGuard guard;
        set_simd_level(SimdLevel::Avx512);
        QCOMPARE(active_simd_level(), cpu_simd_level());  // clamped to what the CPU has
        set_simd_level(SimdLevel::Scalar);
        QCOMPARE(active_simd_level(), SimdLevel::Scalar);
        QCOMPARE(QByteArray(simd_level_name(SimdLevel::Avx2)), QByteArray("avx2"));
    }

    void dotAndAxpy_data() {
        QTest::addColumn<int>("level");
        QTest::addColumn<int>("n");
        for (SimdLevel l : test::available_levels())
            for (int n : {0, 1, 7, 15, 16, 17, 33, 64, 1001})
                QTest::addRow("%s/%d", simd_level_name(l), n) << static_cast<int>(l) << n;
    }
    void dotAndAxpy() {
        QFETCH(int, level);
        QFETCH(int, n);
        test::SimdLevelGuard guard;
        set_simd_level(static_cast<SimdLevel>(level));
        const auto a = test::random_floats(static_cast<size_t>(n) + 1, 1);
        const auto b = test::random_floats(static_cast<size_t>(n) + 1, 2);
        double ref = 0, norm = 0;
        for (int i = 0; i < n; ++i) {
            ref += static_cast<double>(a[i]) * b[i];
            norm += std::fabs(static_cast<double>(a[i]) * b[i]);
        }
        QVERIFY(std::fabs(dot_f32(a.data(), b.data(), n) - ref) <= 1e-6 * norm + 1e-30);

        auto y = test::random_floats(static_cast<size_t>(n) + 1, 3);
        const float guard_value = y[static_cast<size_t>(n)];
        const auto y0 = y;
        axpy_f32(y.data(), 0.75f, a.data(), n);
        for (int i = 0; i < n; ++i) QVERIFY(std::fabs(y[i] - (y0[i] + 0.75 * a[i])) <= 1e-6 * (std::fabs(y0[i]) + std::fabs(a[i])));
        QCOMPARE(y[static_cast<size_t>(n)], guard_value);  // nothing written past n
    }

    void rmsnorm_data() {
        QTest::addColumn<int>("level");
        for (SimdLevel l : test::available_levels()) QTest::newRow(simd_level_name(l)) << static_cast<int>(l);
    }
    void rmsnorm() {
        QFETCH(int, level);
        test::SimdLevelGuard guard;
        set_simd_level(static_cast<SimdLevel>(level));
        for (int n : {1, 13, 896}) {
            const auto x = test::random_floats(static_cast<size_t>(n), 5, 3.0f);
            const auto w = test::random_floats(static_cast<size_t>(n), 6);
            std::vector<float> out(static_cast<size_t>(n), NAN);
            llmwb::kernels::rmsnorm(out.data(), x.data(), w.data(), n, 1e-6f);
            double ss = 0;
            for (float v : x) ss += static_cast<double>(v) * v;
            const double inv = 1.0 / std::sqrt(ss / n + 1e-6);
            for (int i = 0; i < n; ++i) QVERIFY(std::fabs(out[i] - x[i] * inv * w[i]) <= 1e-5 * (std::fabs(x[i] * inv * w[i]) + 1e-3));
            auto inplace = x;  // out may alias x
            llmwb::kernels::rmsnorm(inplace.data(), inplace.data(), w.data(), n, 1e-6f);
            QVERIFY(inplace == out);
        }
    }

    void elementwise_data() {
        QTest::addColumn<int>("level");
        for (SimdLevel l : test::available_levels()) QTest::newRow(simd_level_name(l)) << static_cast<int>(l);
    }
    void elementwise() {
        QFETCH(int, level);
        test::SimdLevelGuard guard;
        set_simd_level(static_cast<SimdLevel>(level));
        const int n = 1003;
        auto g = test::random_floats(n, 7, 4.0f);
        const auto u = test::random_floats(n, 8);
        // Extremes: exp(-g) overflowing / underflowing, zero, and a wide sweep.
        const float extremes[] = {-200.0f, -90.0f, -88.5f, -30.0f, -1e-8f, 0.0f, 1e-8f, 30.0f, 88.5f, 90.0f, 200.0f};
        for (size_t k = 0; k < std::size(extremes); ++k) g[k] = extremes[k];
        for (int k = 0; k < 400; ++k) g[20 + k] = -40.0f + 0.2f * static_cast<float>(k);
        for (int len : {n, 1, 7, 15, 17}) {  // ragged tails of every vector width
            std::vector<float> out(static_cast<size_t>(n), NAN);
            silu_mul(out.data(), g.data(), u.data(), len);
            for (int i = 0; i < len; ++i) {
                const double ref = g[i] / (1.0 + std::exp(-static_cast<double>(g[i]))) * u[i];
                QVERIFY2(std::fabs(out[i] - ref) <= 1e-6 * (std::fabs(ref) + 1e-30),
                         qPrintable(QString("g=%1 u=%2 out=%3 ref=%4").arg(g[i]).arg(u[i]).arg(out[i]).arg(ref)));
            }
            for (int i = len; i < n; ++i) QVERIFY(std::isnan(out[i]));  // nothing written past n
        }
        std::vector<float> sum(n, NAN);
        add(sum.data(), g.data(), u.data(), n);
        for (int i = 0; i < n; ++i) QCOMPARE(sum[i], g[i] + u[i]);
        auto s2 = g;
        add(s2.data(), s2.data(), u.data(), n);  // out may alias a
        QVERIFY(s2 == sum);
    }

    void softmaxRow() {
        for (int n : {1, 5, 1000}) {
            auto x = test::random_floats(static_cast<size_t>(n), 9, 10.0f);
            x[0] = 80.0f;  // large values must not overflow
            const auto x0 = x;
            softmax(x.data(), n);
            double mx = x0[0], total = 0;
            for (float v : x0) mx = std::max<double>(mx, v);
            double z = 0;
            for (float v : x0) z += std::exp(v - mx);
            for (int i = 0; i < n; ++i) {
                QVERIFY(std::fabs(x[i] - std::exp(x0[i] - mx) / z) <= 1e-6);
                total += x[i];
            }
            QVERIFY(std::fabs(total - 1.0) < 1e-5);
        }
    }

    void bandwidthProbe() {
        ThreadPool pool(2);
        const double wide = measure_read_bandwidth_gbs(pool, size_t{8} << 20, true, 2);
        const double scalar = measure_read_bandwidth_gbs(pool, size_t{8} << 20, false, 2);
        QVERIFY(wide > 0.1 && std::isfinite(wide));
        QVERIFY(scalar > 0.1 && std::isfinite(scalar));
    }
};

QTEST_APPLESS_MAIN(TestKernelsOps)
#include "tst_kernels_ops.moc"
