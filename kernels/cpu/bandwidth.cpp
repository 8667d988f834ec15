// Memory read bandwidth probe (see bandwidth.h).
#include "kernels/cpu/bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb::kernels {

uint64_t read_sum_scalar(const uint8_t* p, size_t n) {
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    const auto* q = reinterpret_cast<const uint64_t*>(p);
    for (size_t i = 0; i < n / 8; i += 4) {
        a0 += q[i];
        a1 += q[i + 1];
        a2 += q[i + 2];
        a3 += q[i + 3];
        __asm__("" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3)); // keep it scalar (no vectorizing)
    }
    return a0 ^ a1 ^ a2 ^ a3;
}

namespace {
uint64_t (*wide_read_fn())(const uint8_t*, size_t) {
    if (active_simd_level() == SimdLevel::Avx512)
        return read_sum_avx512;
    if (active_simd_level() == SimdLevel::Avx2)
        return read_sum_avx2;
    return read_sum_scalar;
}
std::atomic<uint64_t> g_read_sink{0}; // keeps the checksums (and so the loads) alive
} // namespace

double read_sum_split(ThreadPool& pool, const uint8_t* p, size_t n) {
    const auto begin = (reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t{63};
    const auto end = reinterpret_cast<uintptr_t>(p) + n;
    if (end <= begin)
        return 0.0;
    const int nt = pool.size();
    const size_t slice = (end - begin) / static_cast<size_t>(nt) / 256 * 256;
    if (slice == 0)
        return 0.0;
    const auto fn = wide_read_fn();
    const auto* base = reinterpret_cast<const uint8_t*>(begin);
    pool.run([&](int t, int) {
        g_read_sink.fetch_xor(fn(base + slice * static_cast<size_t>(t), slice),
                              std::memory_order_relaxed);
    });
    return static_cast<double>(slice) * nt;
}

double measure_read_bandwidth_gbs(ThreadPool& pool, size_t bytes, bool wide, int repeats) {
    const int nt = pool.size();
    const size_t slice = std::max<size_t>(bytes / static_cast<size_t>(nt) / 256 * 256, 256);
    const size_t total = slice * static_cast<size_t>(nt);
    struct Free {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t, Free> buf(static_cast<uint8_t*>(std::aligned_alloc(64, total)));
    if (!buf)
        return 0.0;
    pool.run(
        [&](int t, int) { std::memset(buf.get() + slice * static_cast<size_t>(t), 1 + t, slice); });

    uint64_t (*fn)(const uint8_t*, size_t) = wide ? wide_read_fn() : read_sum_scalar;
    std::atomic<uint64_t> sink{0};
    double best = 0.0;
    for (int r = 0; r < std::max(1, repeats); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        pool.run([&](int t, int) {
            sink.fetch_xor(fn(buf.get() + slice * static_cast<size_t>(t), slice),
                           std::memory_order_relaxed);
        });
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s > 0)
            best = std::max(best, static_cast<double>(total) / s / 1e9);
    }
    if (sink.load() == 0x5eed)
        best += 0.0; // uses the checksum
    return best;
}

} // namespace llmwb::kernels
