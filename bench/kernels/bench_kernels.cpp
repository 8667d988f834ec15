// llmwb-bench-kernels: figures of the CPU kernels on this machine, each against a baseline
// measured in the same run.
//   1. read bandwidth: wide vector loads on all threads, and scalar 8-byte loads;
//   2. matrix-vector (decode) throughput per weight type on Qwen2.5-0.5B-like shapes, as GB/s of
//      weights streamed and as a fraction of the wide read bandwidth (enough copies of each
//      matrix are cycled that they are read from memory, not from the caches);
//   3. matrix-matrix (prefill, 512 tokens) GFLOP/s against the measured peak fp32 FMA rate
//      (float weights) or int8 dot rate (quantized weights), and the speed-up over looping the
//      matrix-vector path token by token; also per CPU-second of the threads, which compares
//      with the peak (measured in thread CPU time) even when other processes take the cores.
// Timings are best-of-N and the bandwidth passes of (2) run interleaved with the kernel sweeps,
// so a busy machine lowers both alike; (4) single-thread matrix-vector on L2-resident weights
// gives the kernels' compute cost in TSC ticks per 256 weights, which hardly depends on load.
// Usage: llmwb-bench-kernels [--threads N] [--json] [--quick] [--simd scalar|avx2|avx512]
//                            [--weight-layout rows|panels] [--no-matvec] [--no-matmat] [--type T]
//                            [--rounds N]
//                            [--tokens N,N..]   (matrix-matrix token counts, default 512)
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <time.h>
#include <x86intrin.h>

#include "bench/kernels/peak.h"
#include "kernels/cpu/bandwidth.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU seconds used by this process so far (to show how much of the machine the run really got).
double process_cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Options {
    int threads = 2;
    bool json = false;
    bool quick = false;
    bool skip_mv = false;
    bool skip_mm = false;
    int rounds = 7;
    std::string only;                    // one weight type, by name (any case)
    std::vector<int64_t> mm_tokens{512}; // matrix-matrix token counts (--tokens 32,512)
    size_t bw_bytes = size_t{512} << 20;
};

struct MvResult {
    DType type;
    int64_t rows, cols;
    double us_per_call, gbs, frac, bw_gbs; // bw_gbs: best read bandwidth of the interleaved passes
};

struct MmResult {
    DType type;
    int64_t rows, cols, tokens;
    double gflops, frac_peak, speedup_vs_mv;
    double gflops_cpu;  // per CPU-second of the threads: robust against other load on the machine
    double speedup_cpu; // vs looped mv, both in CPU time
};

constexpr auto& kTypes = kAllDTypes;

std::vector<float> random_row(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 0.05f);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v)
        x = nd(rng);
    return v;
}

// A weight matrix whose rows all hold the same quantized random row (timing does not depend on
// the values), `copies` times over so that a sweep over all copies exceeds the caches.
// --weight-layout: panels (the engine's default where a type has a panel layout) or rows.
bool g_panels = true;

struct BenchMatrix {
    std::vector<uint8_t> data;
    int64_t rows, cols, row_bytes, matrix_bytes;
    int copies;
    WeightLayout layout = WeightLayout::Rows;
    BenchMatrix(DType t, int64_t r, int64_t c, size_t min_total) : rows(r), cols(c) {
        row_bytes = dtype_row_bytes(t, c);
        matrix_bytes = row_bytes * r;
        copies = static_cast<int>(
            std::clamp<int64_t>(static_cast<int64_t>(min_total) / matrix_bytes + 1, 1, 256));
        data.resize(static_cast<size_t>(matrix_bytes) * static_cast<size_t>(copies));
        const auto row = random_row(c, 42);
        quantize_row(t, row.data(), data.data(), c);
        for (int64_t i = 1; i < r * copies; ++i)
            std::memcpy(data.data() + i * row_bytes, data.data(), static_cast<size_t>(row_bytes));
        if (g_panels && panel_layout_applies(t, r, c)) {
            layout = WeightLayout::Panels;
            std::vector<uint8_t> packed(static_cast<size_t>(matrix_bytes));
            for (int k = 0; k < copies; ++k) {
                uint8_t* m =
                    data.data() + static_cast<size_t>(k) * static_cast<size_t>(matrix_bytes);
                pack_matrix_panels(t, m, r, c, packed.data(), nullptr);
                std::memcpy(m, packed.data(), packed.size());
            }
        }
    }
    WeightMatrix matrix(DType t, int copy) const {
        return WeightMatrix{
            t, data.data() + static_cast<size_t>(copy) * static_cast<size_t>(matrix_bytes), rows,
            cols, layout};
    }
};

// The wide read loop of the active SIMD level (the same loop as measure_read_bandwidth_gbs).
uint64_t (*wide_read_fn())(const uint8_t*, size_t) {
    switch (active_simd_level()) {
    case SimdLevel::Avx512:
        return read_sum_avx512;
    case SimdLevel::Avx2:
        return read_sum_avx2;
    case SimdLevel::Scalar:
        break;
    }
    return read_sum_scalar;
}

// A persistent buffer (much larger than the caches) for read-bandwidth passes that run
// interleaved with the kernel timings, so both see the same background load. A pass reads the
// buffer in chunks of a few MiB (every thread its own part of a chunk), timed one by one: like
// the per-call kernel timings, the best chunk is one that ran without being preempted.
struct BandwidthProbe {
    struct Free {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    static constexpr size_t kChunk = size_t{8} << 20;
    std::unique_ptr<uint8_t, Free> buf;
    size_t total = 0;
    uint64_t sink = 0;
    BandwidthProbe(ThreadPool& pool, size_t bytes) {
        total = std::max(bytes / kChunk, size_t{1}) * kChunk;
        buf.reset(static_cast<uint8_t*>(std::aligned_alloc(64, total)));
        pool.parallel_for(static_cast<int64_t>(total / kChunk), 1, [&](int64_t c0, int64_t c1) {
            std::memset(buf.get() + static_cast<size_t>(c0) * kChunk, 1,
                        static_cast<size_t>(c1 - c0) * kChunk);
        });
    }
    double pass_gbs(ThreadPool& pool) {
        const auto fn = wide_read_fn();
        const size_t part = kChunk / static_cast<size_t>(pool.size()) / 256 * 256;
        std::vector<uint64_t> sums(static_cast<size_t>(pool.size()));
        double best = 0, second = 0; // the second best: robust against a timer glitch
        for (size_t off = 0; off < total; off += kChunk) {
            const auto t0 = Clock::now();
            pool.run([&](int t, int) {
                sums[static_cast<size_t>(t)] =
                    fn(buf.get() + off + part * static_cast<size_t>(t), part);
            });
            const double s = seconds_since(t0);
            for (uint64_t v : sums)
                sink ^= v;
            const double gbs = s > 0 ? static_cast<double>(part * sums.size()) / s / 1e9 : 0.0;
            if (gbs > best) {
                second = best;
                best = gbs;
            } else {
                second = std::max(second, gbs);
            }
        }
        return second;
    }
};

// Rounds of [one bandwidth pass, one sweep over every copy of the matrix]; each call is timed,
// the second-best call and the second-best bandwidth chunk are compared.
MvResult bench_mv(DType t, int64_t rows, int64_t cols, ThreadPool& pool, const Options& o,
                  BandwidthProbe& probe) {
    const BenchMatrix m(t, rows, cols, size_t{256} << 20);
    const auto x = random_row(cols, 7);
    std::vector<float> y(static_cast<size_t>(rows));
    for (int c = 0; c < m.copies; ++c)
        matmul(y.data(), m.matrix(t, c), x.data(), 1, &pool); // warm up
    double best_call = 1e30, second_call = 1e30, best_bw = 0;
    for (int round = 0; round < o.rounds; ++round) {
        best_bw = std::max(best_bw, probe.pass_gbs(pool));
        for (int c = 0; c < m.copies; ++c) {
            const auto t0 = Clock::now();
            matmul(y.data(), m.matrix(t, c), x.data(), 1, &pool);
            const double s = seconds_since(t0);
            if (s < best_call) {
                second_call = best_call;
                best_call = s;
            } else {
                second_call = std::min(second_call, s);
            }
        }
    }
    best_call = std::min(second_call, 1e29) < 1e29 ? second_call : best_call;
    const double gbs = static_cast<double>(m.matrix_bytes) / best_call / 1e9;
    return {t, rows, cols, best_call * 1e6, gbs, gbs / best_bw, best_bw};
}

inline uint64_t tsc() {
    return __rdtsc();
}

// TSC ticks per second (the TSC runs at a fixed rate on this CPU; not the core clock).
double tsc_hz() {
    const auto t0 = Clock::now();
    const uint64_t c0 = tsc();
    while (seconds_since(t0) < 0.05) {
    }
    return static_cast<double>(tsc() - c0) / seconds_since(t0);
}

// Single-thread matrix-vector on a matrix that stays in L2: the compute cost of the kernel
// without the memory, as TSC ticks per 256 weights and GB/s of weights. The best of many short
// calls is close to load-independent (a call that was not preempted).
struct CacheResult {
    DType type;
    double ticks_per_256, gbs;
};

CacheResult bench_mv_in_cache(DType t, const Options& o, double hz) {
    const int64_t cols = 4864;
    // Whole 16-row panels, at least 3 (the float kernels' matrix-vector register block): a
    // partial panel would run its rows through the Rows kernels. ~512 KiB: in L2.
    const int64_t rows = std::max<int64_t>(48, (512 << 10) / dtype_row_bytes(t, cols)) / 16 * 16;
    const BenchMatrix m(t, rows, cols, 0);
    const auto x = random_row(cols, 3);
    std::vector<float> y(static_cast<size_t>(rows));
    const WeightMatrix w = m.matrix(t, 0);
    uint64_t best = ~uint64_t{0};
    const int calls = o.quick ? 300 : 1500;
    for (int i = 0; i < calls; ++i) {
        const uint64_t c0 = tsc();
        matmul(y.data(), w, x.data(), 1, nullptr);
        best = std::min(best, tsc() - c0);
    }
    const double weights = static_cast<double>(rows * cols);
    return {t, static_cast<double>(best) * 256.0 / weights,
            static_cast<double>(m.matrix_bytes) / (static_cast<double>(best) / hz) / 1e9};
}

MmResult bench_mm(DType t, int64_t rows, int64_t cols, int64_t tokens, ThreadPool& pool,
                  const Options& o, double fma_peak, double int8_peak) {
    const BenchMatrix m(t, rows, cols, 0);
    const auto x = random_row(cols * tokens, 9);
    std::vector<float> y(static_cast<size_t>(rows * tokens));
    const WeightMatrix w = m.matrix(t, 0);
    matmul(y.data(), w, x.data(), tokens, &pool);
    double best = 1e30;
    // About as much work per type whatever the token count (small batches: more calls).
    const int reps =
        static_cast<int>(std::max<int64_t>(o.quick ? 2 : 3, (o.quick ? 2 : 3) * 512 / tokens));
    const double cpu0 = process_cpu_seconds();
    for (int rep = 0; rep < reps; ++rep) {
        const auto t0 = Clock::now();
        matmul(y.data(), w, x.data(), tokens, &pool);
        best = std::min(best, seconds_since(t0));
    }
    const double cpu_per_call = (process_cpu_seconds() - cpu0) / reps / pool.size();
    // The same tokens one by one through the matrix-vector path.
    const int64_t loop_tokens = std::min<int64_t>(tokens, o.quick ? 64 : 128);
    const auto t1 = Clock::now();
    const double cpu1 = process_cpu_seconds();
    for (int64_t i = 0; i < loop_tokens; ++i)
        matmul(y.data() + i * rows, w, x.data() + i * cols, 1, &pool);
    const double loop_per_token = seconds_since(t1) / static_cast<double>(loop_tokens);
    const double loop_cpu_per_token =
        (process_cpu_seconds() - cpu1) / static_cast<double>(loop_tokens) / pool.size();
    const double flops = 2.0 * static_cast<double>(rows * cols * tokens);
    const double gflops = flops / best / 1e9;
    const bool is_float = t == DType::F32 || t == DType::F16 || t == DType::BF16;
    const double peak = is_float ? fma_peak : int8_peak;
    const double gflops_cpu = cpu_per_call > 0 ? flops / cpu_per_call / 1e9 : 0.0;
    // The peak is per thread CPU second too, so the fraction holds under other load.
    return {t,
            rows,
            cols,
            tokens,
            gflops,
            peak > 0 ? gflops_cpu / peak : 0.0,
            loop_per_token / (best / static_cast<double>(tokens)),
            gflops_cpu,
            cpu_per_call > 0 ? loop_cpu_per_token / (cpu_per_call / static_cast<double>(tokens))
                             : 0.0};
}

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Runs a peak probe on every thread at once; returns GFLOP/s (or G int8 ops/s) in total, as the
// sum of each thread's rate over its own CPU time (the probe has no memory traffic, so time
// spent preempted by other processes is simply left out).
double measure_peak(ThreadPool& pool, double (*probe)(int64_t)) {
    if (!probe)
        return 0.0;
    const int64_t iters = 5'000'000;
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
        std::vector<double> rate(static_cast<size_t>(pool.size()));
        pool.run([&](int t, int) {
            const double c0 = thread_cpu_seconds();
            const double ops = probe(iters);
            const double c = thread_cpu_seconds() - c0;
            rate[static_cast<size_t>(t)] = c > 0 ? ops / c / 1e9 : 0.0;
        });
        double total = 0;
        for (double v : rate)
            total += v;
        best = std::max(best, total);
    }
    return best;
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json")
            o.json = true;
        else if (a == "--no-matvec")
            o.skip_mv = true;
        else if (a == "--no-matmat")
            o.skip_mm = true;
        else if (a == "--type" && i + 1 < argc) {
            o.only = argv[++i];
            for (char& ch : o.only)
                ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        } else if (a == "--tokens" && i + 1 < argc) {
            o.mm_tokens.clear();
            for (const char* s = argv[++i]; *s;) {
                char* end = nullptr;
                const long v = std::strtol(s, &end, 10);
                if (end == s || v < 1 || v > 4096) {
                    std::fprintf(stderr, "--tokens: a comma-separated list of counts in 1..4096\n");
                    return false;
                }
                o.mm_tokens.push_back(v);
                s = *end == ',' ? end + 1 : end;
            }
            if (o.mm_tokens.empty())
                return false;
        } else if (a == "--rounds" && i + 1 < argc)
            o.rounds = std::max(1, std::atoi(argv[++i]));
        else if (a == "--quick") {
            o.quick = true;
            o.rounds = 3;
            o.bw_bytes = size_t{256} << 20;
        } else if (a == "--threads" && i + 1 < argc)
            o.threads = std::max(1, std::atoi(argv[++i]));
        else if (a == "--weight-layout" && i + 1 < argc) {
            const std::string l = argv[++i];
            if (l != "rows" && l != "panels") {
                std::fprintf(stderr, "--weight-layout: rows or panels, not %s\n", l.c_str());
                return false;
            }
            g_panels = l == "panels";
        } else if (a == "--simd" && i + 1 < argc) {
            const std::string l = argv[++i];
            set_simd_level(l == "scalar" ? SimdLevel::Scalar
                           : l == "avx2" ? SimdLevel::Avx2
                                         : SimdLevel::Avx512);
        } else {
            std::fprintf(stderr, "usage: llmwb-bench-kernels [--threads N] [--json] [--quick] "
                                 "[--simd scalar|avx2|avx512] [--weight-layout rows|panels] "
                                 "[--no-matvec] [--no-matmat] [--type "
                                 "T] [--rounds N] [--tokens N,N..]\n");
            return false;
        }
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o))
        return 2;
    ThreadPool pool(o.threads);
    const auto run_start = Clock::now();
    const double cpu_start = process_cpu_seconds();
    const SimdLevel level = active_simd_level();
    const double bw_wide = measure_read_bandwidth_gbs(pool, o.bw_bytes, true, 5);
    const double bw_scalar = measure_read_bandwidth_gbs(pool, o.bw_bytes, false, 3);
    double (*fma_probe)(int64_t) = nullptr;
    double (*int8_probe)(int64_t) = nullptr;
    if (level == SimdLevel::Avx512) {
        fma_probe = bench::peak_fma_avx512;
        int8_probe = bench::peak_int8_avx512;
    } else if (level == SimdLevel::Avx2) {
        fma_probe = bench::peak_fma_avx2;
        int8_probe = bench::peak_int8_avx2;
    }
    const double fma_peak = measure_peak(pool, fma_probe);
    const double int8_peak = measure_peak(pool, int8_probe);

    auto selected = [&](DType t) { return o.only.empty() || o.only == dtype_name(t); };
    if (!o.json) {
        std::printf("threads %d, SIMD %s (cpu %s), weight layout %s where the type has it\n",
                    o.threads, simd_level_name(level), simd_level_name(cpu_simd_level()),
                    g_panels ? "panels" : "rows");
        std::printf("read bandwidth: %.1f GB/s wide, %.1f GB/s scalar\n", bw_wide, bw_scalar);
        std::printf("peak: %.1f GFLOP/s fp32 FMA, %.1f Gop/s int8 dot\n\n", fma_peak, int8_peak);
    }
    const double hz = tsc_hz();
    std::vector<CacheResult> cache;
    if (!o.skip_mv) {
        if (!o.json)
            std::printf("matrix-vector, 1 thread, weights in L2 (compute cost; TSC %.2f GHz)\n%-6s "
                        "%14s %12s\n",
                        hz / 1e9, "type", "ticks/256 w", "GB/s");
        for (DType t : kTypes) {
            if (!selected(t))
                continue;
            cache.push_back(bench_mv_in_cache(t, o, hz));
            if (!o.json)
                std::printf("%-6s %14.1f %12.1f\n", dtype_name(t), cache.back().ticks_per_256,
                            cache.back().gbs);
        }
        if (!o.json)
            std::printf("\nmatrix-vector (1 token), best call of %d sweeps, each after a bandwidth "
                        "pass\n%-6s %14s %10s %9s %9s %9s\n",
                        o.rounds, "type", "shape", "us/call", "GB/s", "bw GB/s", "of bw");
    }
    BandwidthProbe probe(pool, size_t{128} << 20);
    const int64_t shapes[][2] = {{896, 896}, {128, 896}, {4864, 896}, {896, 4864}, {151936, 896}};
    std::vector<MvResult> mv;
    for (DType t : kTypes)
        for (const auto& s : shapes) {
            if (o.skip_mv || !selected(t))
                break;
            if (s[1] % dtype_block_elems(t) != 0)
                continue;
            mv.push_back(bench_mv(t, s[0], s[1], pool, o, probe));
            const MvResult& r = mv.back();
            if (!o.json)
                std::printf("%-6s %7lldx%-6lld %10.1f %9.1f %9.1f %8.0f%%\n", dtype_name(t),
                            static_cast<long long>(r.rows), static_cast<long long>(r.cols),
                            r.us_per_call, r.gbs, r.bw_gbs, 100 * r.frac);
        }
    if (!o.json && !o.skip_mm)
        std::printf("\nmatrix-matrix (896x4864)\n%-6s %6s %9s %9s %13s %17s %13s\n", "type",
                    "tokens", "GFLOP/s", "of peak*", "vs looped mv", "GFLOP/s cpu-time",
                    "vs mv (cpu)");
    std::vector<MmResult> mm;
    for (DType t : kTypes) {
        if (o.skip_mm || !selected(t))
            continue;
        for (const int64_t tokens : o.mm_tokens) {
            mm.push_back(bench_mm(t, 896, 4864, tokens, pool, o, fma_peak, int8_peak));
            const MmResult& r = mm.back();
            if (!o.json)
                std::printf("%-6s %6lld %9.1f %8.0f%% %12.1fx %17.1f %12.1fx\n", dtype_name(t),
                            static_cast<long long>(tokens), r.gflops, 100 * r.frac_peak,
                            r.speedup_vs_mv, r.gflops_cpu, r.speedup_cpu);
        }
    }
    if (!o.json && !o.skip_mm)
        std::printf(
            "* GFLOP/s per CPU second of the threads over the peak measured the same way\n");
    // Busy-waiting workers count as used CPU, so this is an upper bound of the share we got.
    const double cpu_share =
        (process_cpu_seconds() - cpu_start) / (seconds_since(run_start) * o.threads);
    if (!o.json)
        std::printf("\nCPU share of %d threads during the run: %.0f%% (below ~90%%: other load; "
                    "figures low)\n",
                    o.threads, 100 * cpu_share);
    if (o.json) {
        std::printf("{\"threads\": %d, \"cpu_share\": %.3f, \"simd\": \"%s\", "
                    "\"read_bandwidth_gbs\": %.3f, \"read_bandwidth_scalar_gbs\": %.3f,\n",
                    o.threads, cpu_share, simd_level_name(level), bw_wide, bw_scalar);
        std::printf(" \"peak_fma_gflops\": %.3f, \"peak_int8_gops\": %.3f,\n \"matvec\": [",
                    fma_peak, int8_peak);
        for (size_t i = 0; i < mv.size(); ++i)
            std::printf(
                "%s\n  {\"type\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"us_per_call\": %.3f, "
                "\"gbs\": %.3f, \"bandwidth_gbs\": %.3f, \"fraction_of_bandwidth\": %.4f}",
                i ? "," : "", dtype_name(mv[i].type), static_cast<long long>(mv[i].rows),
                static_cast<long long>(mv[i].cols), mv[i].us_per_call, mv[i].gbs, mv[i].bw_gbs,
                mv[i].frac);
        std::printf("],\n \"matvec_in_cache_1_thread\": [");
        for (size_t i = 0; i < cache.size(); ++i)
            std::printf(
                "%s\n  {\"type\": \"%s\", \"tsc_ticks_per_256_weights\": %.3f, \"gbs\": %.3f}",
                i ? "," : "", dtype_name(cache[i].type), cache[i].ticks_per_256, cache[i].gbs);
        std::printf("],\n \"matmat\": [");
        for (size_t i = 0; i < mm.size(); ++i)
            std::printf(
                "%s\n  {\"type\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"tokens\": %lld, "
                "\"gflops\": %.3f, \"fraction_of_peak\": %.4f, \"speedup_vs_looped_matvec\": %.3f, "
                "\"gflops_cpu_time\": %.3f, \"speedup_vs_looped_matvec_cpu_time\": %.3f}",
                i ? "," : "", dtype_name(mm[i].type), static_cast<long long>(mm[i].rows),
                static_cast<long long>(mm[i].cols), static_cast<long long>(mm[i].tokens),
                mm[i].gflops, mm[i].frac_peak, mm[i].speedup_vs_mv, mm[i].gflops_cpu,
                mm[i].speedup_cpu);
        std::printf("]}\n");
    }
    return 0;
}
