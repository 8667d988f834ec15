// llmwb-bench-cuda-ops: throughput of the CUDA matmul paths on one GPU, for every weight type
// (kAllDTypes).
//   GEMV (decode, n = 1/2/4/8 tokens): weight GB/s against the HBM peak (from the device's memory
//   clock and bus width) and against a measured device-to-device copy; a summary of n = 1 per
//   type against Q4_K's figure.
//   GEMM (prefill, n = 2048 tokens): TFLOP/s per weight dtype; for quantized types also on a bf16
//   copy made once (the bf16 weight cache), with its speed-up over dequantizing per call.
//   Paged attention: decode KV GB/s and prefill TFLOP/s at a Qwen2.5-7B shape; per KV type
//   (every KvDtype): decode at 1 and 32 sequences and a 512-token prefill (--kv-only: just
//   this table; --kv-ctx N: its context, default 4096).
// Shape: a Qwen2.5-7B MLP projection (rows 18944, cols 3584) unless --rows/--cols are given;
// --shape NAME: qwen2.5-0.5b / qwen2.5-1.5b / qwen2.5-7b (their ffn_down, whose rows K-quants can
// hold), or all (the three in turn). --no-attention skips the attention part; --copy-mib N sizes
// the copy that measures the bandwidth ceiling (default 1024). Exits 1 when any op failed.
// Prints "SKIPPED: no CUDA device (...)" and exits 77 without a device.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cuda/ops/cuda_ops.h"

namespace cu = llmwb::cuda;
using llmwb::DType;
using llmwb::KvDtype;

namespace {

bool check(cudaError_t e, const char* what) {
    if (e == cudaSuccess)
        return true;
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return false;
}

// kv_format's names (the bench links only the ops library, not kernels/cpu).
const char* kv_name(KvDtype t) {
    static const char* const names[] = {"f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8"};
    return names[static_cast<int>(t)];
}

// Milliseconds per call of fn, averaged over iters after a warm-up call.
template <typename Fn> double time_ms(Fn&& fn, int iters) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    fn();
    cudaEventRecord(a);
    for (int i = 0; i < iters; ++i)
        fn();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms / iters;
}

// One paged attention call at the Qwen2.5-7B attention shape (28 heads, 4 kv heads, head_dim
// 128, blocks of 16) with KV type t: seqs sequences of ctx keys, qlen query rows each. Returns
// the milliseconds per call (-1 after printing why it failed); *kv_bytes: the pools' bytes.
constexpr int32_t kHeads = 28, kKvHeads = 4, kHd = 128, kBs = 16;

double time_attention(cudaStream_t stream, KvDtype t, int32_t seqs, int32_t ctx, int32_t qlen,
                      bool tc, double* kv_bytes) {
    const int32_t blocks_per_seq = (ctx + kBs - 1) / kBs;
    const llmwb::KvLayout layout{t, kBs, kKvHeads, kHd};
    const int64_t pool_bytes = int64_t{seqs} * blocks_per_seq * layout.block_bytes();
    const int32_t n_tokens = seqs * qlen;
    std::vector<int32_t> qs(seqs + 1), ctxs(seqs, ctx), tables(int64_t{seqs} * blocks_per_seq);
    for (int32_t s = 0; s <= seqs; ++s)
        qs[s] = s * qlen;
    for (size_t i = 0; i < tables.size(); ++i)
        tables[i] = static_cast<int32_t>(i);
    void *kc = nullptr, *vc = nullptr, *ws = nullptr, *meta = nullptr;
    float *q = nullptr, *out = nullptr;
    const size_t ws_bytes = cu::paged_attention_workspace_bytes(n_tokens, kHeads, kHd, ctx);
    const size_t meta_bytes = sizeof(int32_t) * (qs.size() + ctxs.size() + tables.size());
    const size_t act = sizeof(float) * n_tokens * kHeads * kHd;
    double ms = -1;
    const bool ok = check(cudaMalloc(&kc, pool_bytes), "cudaMalloc") &&
                    check(cudaMalloc(&vc, pool_bytes), "cudaMalloc") &&
                    check(cudaMalloc(reinterpret_cast<void**>(&q), act), "cudaMalloc") &&
                    check(cudaMalloc(reinterpret_cast<void**>(&out), act), "cudaMalloc") &&
                    check(cudaMalloc(&meta, meta_bytes), "cudaMalloc") &&
                    (ws_bytes == 0 || check(cudaMalloc(&ws, ws_bytes), "cudaMalloc"));
    if (ok) {
        cudaMemset(kc, 0, pool_bytes);
        cudaMemset(vc, 0, pool_bytes);
        cudaMemset(q, 0, act);
        auto* m = static_cast<int32_t*>(meta);
        cudaMemcpy(m, qs.data(), qs.size() * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(m + qs.size(), ctxs.data(), ctxs.size() * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(m + qs.size() + ctxs.size(), tables.data(), tables.size() * 4,
                   cudaMemcpyHostToDevice);
        cu::AttentionBatch b;
        b.query_start = m;
        b.context_lens = m + qs.size();
        b.block_tables = m + qs.size() + ctxs.size();
        b.max_blocks_per_seq = blocks_per_seq;
        b.n_seqs = seqs;
        b.n_tokens = n_tokens;
        b.max_query_len = qlen;
        b.max_context_len = ctx;
        const cu::AttentionParams p{kHeads, kKvHeads, kHd, kBs, 0.088f, t, tc};
        cu::OpStatus st = cu::OpStatus::Ok;
        const double t_ms = time_ms(
            [&] { st = cu::paged_attention(out, q, kc, vc, b, p, ws, ws_bytes, stream); }, 10);
        if (st != cu::OpStatus::Ok)
            std::printf("  %s seqs %d ctx %d q %d: failed: %s\n", kv_name(t), seqs, ctx, qlen,
                        cu::last_error_message());
        else
            ms = t_ms;
    }
    cudaFree(kc);
    cudaFree(vc);
    cudaFree(q);
    cudaFree(out);
    cudaFree(meta);
    cudaFree(ws);
    *kv_bytes = 2.0 * static_cast<double>(pool_bytes);
    return ms;
}

// Paged attention with the F16 KV cache: decode (KV bytes read per second) for 1 and 64
// sequences at 4096 context, and one 2048-token prefill (TFLOP/s over the causal half of the
// score matrix) on tensor cores and on the fp32 kernel.
bool bench_attention(cudaStream_t stream, double copy_gbs) {
    std::printf("attention (heads %d, kv heads %d, head_dim %d, F16 KV, blocks of %d)\n", kHeads,
                kKvHeads, kHd, kBs);
    struct Run {
        int32_t seqs, ctx, qlen;
        bool tc;
    };
    bool ok = true;
    for (const Run r : {Run{1, 4096, 1, true}, Run{64, 4096, 1, true}, Run{1, 2048, 2048, true},
                        Run{1, 2048, 2048, false}}) {
        double bytes = 0;
        const double ms = time_attention(stream, KvDtype::F16, r.seqs, r.ctx, r.qlen, r.tc, &bytes);
        if (ms < 0) {
            ok = false;
        } else if (r.qlen == 1) {
            const double gbs = bytes / (ms * 1e6);
            std::printf("  decode seqs %3d ctx %d: %.4f ms, KV %.0f GB/s (%.2f of copy)\n", r.seqs,
                        r.ctx, ms, gbs, gbs / copy_gbs);
        } else {
            const double flops = 4.0 * kHeads * kHd * (double(r.qlen) * r.qlen / 2.0);
            std::printf("  prefill %d tokens (%s): %.3f ms, %.1f TFLOP/s\n", r.qlen,
                        r.tc ? "tensor cores" : "fp32 kernel", ms, flops / (ms * 1e9));
        }
    }
    return ok;
}

// Per KV type (every KvDtype): decode attention at `ctx` keys for 1 and 32 sequences (ms, KV
// GB/s, time relative to F16) and a 512-token prefill on tensor cores (ms relative to F16).
bool bench_attention_kv_types(cudaStream_t stream, double copy_gbs, int32_t ctx) {
    std::printf("attention per KV type (heads %d, kv heads %d, head_dim %d, blocks of %d, "
                "context %d)\n",
                kHeads, kKvHeads, kHd, kBs, ctx);
    std::printf("  %-9s %12s %9s %12s %9s %12s %9s\n", "kv", "decode1 ms", "GB/s", "decode32 ms",
                "GB/s", "prefill ms", "vs f16");
    bool ok = true;
    struct Row {
        KvDtype t;
        double ms[3], bytes[3];
    };
    std::vector<Row> rows;
    double f16_ms = 0;
    for (KvDtype t : llmwb::kAllKvDtypes) {
        Row r{t, {}, {}};
        r.ms[0] = time_attention(stream, t, 1, ctx, 1, true, &r.bytes[0]);
        r.ms[1] = time_attention(stream, t, 32, ctx, 1, true, &r.bytes[1]);
        const int32_t pre = std::min(ctx, 512);
        r.ms[2] = time_attention(stream, t, 1, pre, pre, true, &r.bytes[2]);
        if (r.ms[0] < 0 || r.ms[1] < 0 || r.ms[2] < 0) {
            ok = false;
            continue;
        }
        if (t == KvDtype::F16)
            f16_ms = r.ms[1];
        rows.push_back(r);
    }
    for (const Row& r : rows)
        std::printf("  %-9s %12.4f %9.0f %12.4f %9.0f %12.4f %8.2fx\n", kv_name(r.t), r.ms[0],
                    r.bytes[0] / (r.ms[0] * 1e6), r.ms[1], r.bytes[1] / (r.ms[1] * 1e6), r.ms[2],
                    f16_ms > 0 ? r.ms[1] / f16_ms : 0.0);
    std::printf("  (vs f16: decode32 time / f16's; copy ceiling %.0f GB/s)\n", copy_gbs);
    return ok;
}

struct Shape {
    const char* name;
    int64_t rows, cols;
};
// ffn_down of each model: [hidden][intermediate] (intermediate sizes 4864, 8960, 18944 are whole
// 256-blocks; the hidden sizes 896 and 1536 of the small models are not, so ffn_down is the
// matrix every type can hold).
constexpr Shape kShapes[] = {{"qwen2.5-0.5b ffn_down", 896, 4864},
                             {"qwen2.5-1.5b ffn_down", 1536, 8960},
                             {"qwen2.5-7b ffn_up", 18944, 3584}};

// GEMV (n = 1, 4, 8) and GEMM (n = prefill_n) of every weight type at one shape.
// Returns false when an allocation or an op failed (after printing why).
bool bench_matmul(const Shape& shape, int64_t prefill_n, double peak_gbs, double copy_gbs,
                  cu::BlasContext* blas, cudaStream_t stream) {
    bool ok = true;
    const int64_t rows = shape.rows, cols = shape.cols;
    float *x = nullptr, *out = nullptr;
    if (!check(cudaMalloc(reinterpret_cast<void**>(&x), sizeof(float) * prefill_n * cols),
               "cudaMalloc") ||
        !check(cudaMalloc(reinterpret_cast<void**>(&out), sizeof(float) * prefill_n * rows),
               "cudaMalloc"))
        return false;
    cudaMemset(x, 0, sizeof(float) * prefill_n * cols);

    std::printf("\nshape %s: rows %lld cols %lld\n", shape.name, static_cast<long long>(rows),
                static_cast<long long>(cols));
    std::printf("%-6s %6s %10s %9s %8s %8s\n", "dtype", "n", "ms", "GB/s", "of-peak", "of-copy");
    struct Gemv1 {
        DType t;
        double gbs, bpw;
    };
    std::vector<Gemv1> gemv1;
    for (DType t : llmwb::kAllDTypes) {
        const size_t wbytes = static_cast<size_t>(llmwb::dtype_row_bytes(t, cols) * rows);
        void* w = nullptr;
        if (!check(cudaMalloc(&w, wbytes), "cudaMalloc weights"))
            return false;
        cudaMemset(w, 0x11, wbytes); // small finite scales and values in every dtype
        const cu::DeviceMatrix m{t, w, rows, cols};
        const size_t ws_bytes = cu::matmul_workspace_bytes(rows, cols, prefill_n, t);
        void* ws = nullptr;
        if (ws_bytes && !check(cudaMalloc(&ws, ws_bytes), "cudaMalloc workspace"))
            return false;
        for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{8}}) {
            cu::OpStatus st = cu::OpStatus::Ok;
            const double ms =
                time_ms([&] { st = cu::matmul(*blas, out, m, x, n, ws, ws_bytes, stream); }, 20);
            if (st != cu::OpStatus::Ok) {
                std::printf("%-6s %6lld failed: %s\n", llmwb::dtype_name(t),
                            static_cast<long long>(n), cu::last_error_message());
                ok = false;
                continue;
            }
            const double gbs = wbytes / (ms * 1e6);
            if (n == 1)
                gemv1.push_back({t, gbs, llmwb::dtype_bits_per_weight(t)});
            std::printf("%-6s %6lld %10.4f %9.0f %8.2f %8.2f\n", llmwb::dtype_name(t),
                        static_cast<long long>(n), ms, gbs, peak_gbs > 0 ? gbs / peak_gbs : 0.0,
                        gbs / copy_gbs);
        }
        cu::OpStatus st = cu::OpStatus::Ok;
        const double ms =
            time_ms([&] { st = cu::matmul(*blas, out, m, x, prefill_n, ws, ws_bytes, stream); }, 5);
        if (st == cu::OpStatus::Ok) {
            const double tflops = 2.0 * rows * cols * prefill_n / (ms * 1e9);
            std::printf("%-6s %6lld %10.4f  GEMM %.1f TFLOP/s\n", llmwb::dtype_name(t),
                        static_cast<long long>(prefill_n), ms, tflops);
            // Quantized: the same GEMM on a bf16 copy made once (the bf16 weight cache).
            void* copy = nullptr;
            if (llmwb::dtype_block_elems(t) > 1 &&
                check(cudaMalloc(&copy, static_cast<size_t>(rows * cols * 2)), "cudaMalloc copy") &&
                cu::dequantize_to_bf16(copy, m, stream) == cu::OpStatus::Ok) {
                const cu::DeviceMatrix mb{DType::BF16, copy, rows, cols};
                const double cms = time_ms(
                    [&] { st = cu::matmul(*blas, out, mb, x, prefill_n, ws, ws_bytes, stream); },
                    5);
                if (st == cu::OpStatus::Ok)
                    std::printf("%-6s %6lld %10.4f  GEMM on the bf16 cache %.1f TFLOP/s (%.2fx)\n",
                                llmwb::dtype_name(t), static_cast<long long>(prefill_n), cms,
                                2.0 * rows * cols * prefill_n / (cms * 1e9), ms / cms);
                else
                    ok = false;
            }
            cudaFree(copy);
        } else {
            std::printf("%-6s GEMM failed: %s\n", llmwb::dtype_name(t), cu::last_error_message());
            ok = false;
        }
        cudaFree(ws);
        cudaFree(w);
    }
    double q4k = 0;
    for (const Gemv1& g : gemv1)
        if (g.t == DType::Q4_K)
            q4k = g.gbs;
    std::printf("GEMV n=1 per type (%s): GB/s of weights, ratio to Q4_K, us per call\n",
                shape.name);
    for (const Gemv1& g : gemv1) {
        const double bytes = g.bpw / 8.0 * static_cast<double>(rows * cols);
        std::printf("  %-6s %5.2f bpw %7.0f GB/s  %5.2f x Q4_K  %8.2f us\n", llmwb::dtype_name(g.t),
                    g.bpw, g.gbs, q4k > 0 ? g.gbs / q4k : 0.0, bytes / (g.gbs * 1e3));
    }
    cudaFree(x);
    cudaFree(out);
    return ok;
}

} // namespace

int main(int argc, char** argv) {
    int64_t rows = 18944, cols = 3584, prefill_n = 2048, copy_mib = 1024;
    bool attention = true, kv_only = false;
    int64_t kv_ctx = 4096;
    std::vector<Shape> shapes;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (!std::strcmp(argv[i], "--no-attention")) {
            attention = false;
        } else if (!std::strcmp(argv[i], "--kv-only")) {
            kv_only = true;
        } else if (!std::strcmp(argv[i], "--kv-ctx") && has_value) {
            kv_ctx = std::atoll(argv[++i]);
        } else if (!std::strcmp(argv[i], "--rows") && has_value) {
            rows = std::atoll(argv[++i]);
        } else if (!std::strcmp(argv[i], "--cols") && has_value) {
            cols = std::atoll(argv[++i]);
        } else if (!std::strcmp(argv[i], "--copy-mib") && has_value) {
            copy_mib = std::atoll(argv[++i]);
        } else if (!std::strcmp(argv[i], "--prefill") && has_value) {
            prefill_n = std::atoll(argv[++i]);
        } else if (!std::strcmp(argv[i], "--shape") && has_value) {
            const std::string name = argv[++i];
            bool found = false;
            for (const Shape& s : kShapes) {
                if (name == "all" || std::string(s.name).rfind(name + " ", 0) == 0) {
                    shapes.push_back(s);
                    found = true;
                }
            }
            if (!found) {
                std::fprintf(stderr,
                             "unknown shape '%s' (qwen2.5-0.5b, qwen2.5-1.5b, "
                             "qwen2.5-7b, all)\n",
                             name.c_str());
                return 2;
            }
        } else {
            rows = -1; // usage below
            break;
        }
    }
    if (rows <= 0 || cols <= 0 || cols % 256 != 0 || prefill_n <= 8 || copy_mib <= 0 ||
        copy_mib > 65536 || kv_ctx < 1 || kv_ctx > (1 << 20)) {
        std::fprintf(stderr, "usage: llmwb-bench-cuda-ops [--rows R] [--cols C (multiple of 256)] "
                             "[--shape qwen2.5-0.5b|qwen2.5-1.5b|qwen2.5-7b|all] "
                             "[--prefill N (> 8)] [--copy-mib N] [--no-attention] "
                             "[--kv-only] [--kv-ctx N]\n");
        return 2;
    }
    if (shapes.empty())
        shapes.push_back({"--rows x --cols", rows, cols});
    int devices = 0;
    const cudaError_t de = cudaGetDeviceCount(&devices);
    if (de != cudaSuccess || devices == 0) {
        std::printf("SKIPPED: no CUDA device (%s)\n",
                    de != cudaSuccess ? cudaGetErrorString(de) : "device count is 0");
        return 77;
    }
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    int mem_khz = 0, bus_bits = 0;
    cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0);
    const double peak_gbs = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9; // DDR
    std::printf("device: %s, %d SMs, HBM peak %.0f GB/s (clock %d kHz, bus %d bits)\n", prop.name,
                prop.multiProcessorCount, peak_gbs, mem_khz, bus_bits);

    // Measured copy bandwidth (read + write) as a practical ceiling.
    const size_t copy_bytes = static_cast<size_t>(copy_mib) << 20;
    void *src = nullptr, *dst = nullptr;
    if (!check(cudaMalloc(&src, copy_bytes), "cudaMalloc") ||
        !check(cudaMalloc(&dst, copy_bytes), "cudaMalloc"))
        return 1;
    cudaMemset(src, 1, copy_bytes);
    const double copy_ms =
        time_ms([&] { cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice); }, 10);
    const double copy_gbs = 2.0 * copy_bytes / (copy_ms * 1e6);
    std::printf("device-to-device copy: %.0f GB/s (read + write)\n", copy_gbs);
    cudaFree(src);
    cudaFree(dst);

    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cu::BlasContext* blas = nullptr;
    if (cu::blas_create(&blas, stream) != cu::OpStatus::Ok) {
        std::fprintf(stderr, "blas_create: %s\n", cu::last_error_message());
        return 1;
    }
    bool ok = true;
    if (!kv_only) {
        for (const Shape& shape : shapes)
            ok = bench_matmul(shape, prefill_n, peak_gbs, copy_gbs, blas, stream) && ok;
        if (attention)
            ok = bench_attention(stream, copy_gbs) && ok;
    }
    if (attention || kv_only)
        ok = bench_attention_kv_types(stream, copy_gbs, static_cast<int32_t>(kv_ctx)) && ok;
    const cudaError_t e = cudaDeviceSynchronize();
    cu::blas_destroy(blas);
    cudaStreamDestroy(stream);
    return check(e, "synchronize") && ok ? 0 : 1;
}
