// Tiny Qt-free harness of the per-op CUDA tests: checks that count failures, device buffers,
// random data, and the skip (exit 77) when there is no CUDA device.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cuda/ops/cuda_ops.h"
#include "tests/support/mini_test.h"

namespace llmwb::gputest {

// Failures are counted and printed by the project's Qt-free harness (tests/support/mini_test.h);
// g_checks counts the checks made, for the summary line.
inline int g_checks = 0;

#define GT_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        ++::llmwb::gputest::g_checks;                                                              \
        if (!(cond))                                                                               \
            ::llmwb::mini_test::report_failure(__FILE__, __LINE__, #cond,                          \
                                               ::llmwb::mini_test::format(__VA_ARGS__));           \
    } while (0)

#define GT_CUDA(expr)                                                                              \
    do {                                                                                           \
        const cudaError_t gt_e = (expr);                                                           \
        if (gt_e != cudaSuccess) {                                                                 \
            std::fprintf(stderr, "FATAL %s:%d: %s -> %s\n", __FILE__, __LINE__, #expr,             \
                         cudaGetErrorString(gt_e));                                                \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

#define GT_OP(expr)                                                                                \
    do {                                                                                           \
        const ::llmwb::cuda::OpStatus gt_s = (expr);                                               \
        GT_CHECK(gt_s == ::llmwb::cuda::OpStatus::Ok, "%s (%s)",                                   \
                 ::llmwb::cuda::op_status_name(gt_s), ::llmwb::cuda::last_error_message());        \
    } while (0)

// Returns 77 (after printing the reason) when no CUDA device is usable, else 0.
inline int skip_without_device() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        std::printf("SKIPPED: no CUDA device (%s)\n", cudaGetErrorString(e));
        return 77;
    }
    if (n == 0) {
        std::printf("SKIPPED: no CUDA device (device count is 0)\n");
        return 77;
    }
    return 0;
}

inline int finish(const char* name) {
    GT_CUDA(cudaDeviceSynchronize());
    if (const int failures = ::llmwb::mini_test::failures()) {
        std::printf("%s: %d of %d checks FAILED\n", name, failures, g_checks);
        return 1;
    }
    std::printf("%s: all %d checks passed\n", name, g_checks);
    return 0;
}

// A device array of n T, freed on destruction.
template <typename T> class DeviceBuffer {
  public:
    explicit DeviceBuffer(size_t n) : n_(n) {
        if (n)
            GT_CUDA(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)));
    }
    explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
    ~DeviceBuffer() {
        if (p_)
            cudaFree(p_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* get() const { return p_; }
    size_t size() const { return n_; }
    void upload(const std::vector<T>& host) {
        if (n_)
            GT_CUDA(cudaMemcpy(p_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
    }
    std::vector<T> download() const {
        GT_CUDA(cudaDeviceSynchronize());
        std::vector<T> host(n_);
        if (n_)
            GT_CUDA(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
        return host;
    }
    // All bytes 0xFF: NaN for floats, -1 for integers; catches elements an op never writes.
    void poison() {
        if (n_)
            GT_CUDA(cudaMemset(p_, 0xFF, n_ * sizeof(T)));
    }

  private:
    T* p_ = nullptr;
    size_t n_ = 0;
};

// One fixed seed, so that a run is reproducible (a tolerance failure is the same on every rerun);
// LLMWB_TEST_SEED=N tries other data.
inline std::mt19937& rng() {
    static std::mt19937 gen([] {
        unsigned seed = 20261202u;
        if (const char* e = std::getenv("LLMWB_TEST_SEED"))
            seed = static_cast<unsigned>(std::strtoul(e, nullptr, 10));
        std::fprintf(stderr, "random data seed %u (LLMWB_TEST_SEED)\n", seed);
        return seed;
    }());
    return gen;
}

inline std::vector<float> random_floats(size_t n, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float& x : v)
        x = d(rng());
    return v;
}

inline int random_int(int lo, int hi) { // inclusive
    return std::uniform_int_distribution<int>(lo, hi)(rng());
}

// Compares rows of `cols`: |got - want| <= rel * max|want row| + abs_tol for every element (NaN
// anywhere fails). Returns the number of bad rows (reported once each).
inline int compare_rows(const char* what, const std::vector<float>& got,
                        const std::vector<float>& want, int64_t rows, int64_t cols, double rel,
                        double abs_tol = 1e-6) {
    int bad_rows = 0;
    for (int64_t r = 0; r < rows; ++r) {
        double scale = 0.0;
        for (int64_t c = 0; c < cols; ++c)
            scale = std::fmax(scale, std::fabs(static_cast<double>(want[r * cols + c])));
        const double bound = rel * scale + abs_tol;
        double worst = 0.0;
        int64_t worst_c = -1;
        for (int64_t c = 0; c < cols; ++c) {
            const double err = std::fabs(static_cast<double>(got[r * cols + c]) -
                                         static_cast<double>(want[r * cols + c]));
            if (!(err <= bound) && (worst_c < 0 || !(err <= worst))) {
                worst = err;
                worst_c = c;
            }
        }
        if (worst_c >= 0) {
            ++bad_rows;
            GT_CHECK(false, "%s row %lld col %lld: got %g want %g (bound %g)", what,
                     static_cast<long long>(r), static_cast<long long>(worst_c),
                     static_cast<double>(got[r * cols + worst_c]),
                     static_cast<double>(want[r * cols + worst_c]), bound);
        }
    }
    if (!bad_rows)
        ++g_checks;
    return bad_rows;
}

} // namespace llmwb::gputest
