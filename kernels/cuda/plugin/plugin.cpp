// The CUDA plugin's C entry point: the function table of plugin_api.h over ModelRunner. No C++
// exception crosses the boundary; every failure becomes -1 / NULL plus last_error().
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "kernels/cuda/plugin/plugin_api.h"
#include "kernels/cuda/runner/model_runner.h"

struct LlmwbRunner {
    std::unique_ptr<llmwb::cuda::ModelRunner> runner;
};

namespace {

thread_local std::string g_last_error;

int fail(std::string msg) {
    g_last_error = std::move(msg);
    return -1;
}

int fail_cuda(const char* what, cudaError_t e) {
    return fail(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                ")");
}

int api_device_count() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fail_cuda("cudaGetDeviceCount", e);
    }
    return n;
}

int api_device_info(int32_t device, LlmwbDeviceInfo* out) {
    if (!out)
        return fail("device_info: null output");
    std::memset(out, 0, sizeof(*out));
    cudaDeviceProp p{};
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess)
        return fail_cuda("cudaGetDeviceProperties", e);
    const size_t name_len = strnlen(p.name, sizeof(p.name));
    std::memcpy(out->name, p.name, std::min(name_len, sizeof(out->name) - 1));
    out->total_bytes = static_cast<int64_t>(p.totalGlobalMem);
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->multiprocessors = p.multiProcessorCount;
    int clock_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) == cudaSuccess)
        out->memory_bandwidth_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9; // DDR
    cudaGetLastError();
    int current = 0;
    size_t free = 0, total = 0;
    if (cudaGetDevice(&current) == cudaSuccess && cudaSetDevice(device) == cudaSuccess &&
        cudaMemGetInfo(&free, &total) == cudaSuccess)
        out->free_bytes = static_cast<int64_t>(free);
    cudaSetDevice(current);
    cudaGetLastError();
    return 0;
}

LlmwbRunner* api_create_runner(const LlmwbModel* model, const LlmwbRunnerOptions* options) {
    if (!model || !options) {
        fail("create_runner: null argument");
        return nullptr;
    }
    try {
        std::string err;
        auto r = llmwb::cuda::ModelRunner::create(*model, *options, err);
        if (!r) {
            fail(err);
            return nullptr;
        }
        auto* h = new LlmwbRunner();
        h->runner = std::move(r);
        return h;
    } catch (const std::exception& e) {
        fail(std::string("create_runner: ") + e.what());
        return nullptr;
    }
}

void api_destroy_runner(LlmwbRunner* r) {
    delete r;
}

int api_resize_kv(LlmwbRunner* r, int32_t num_blocks, int32_t block_size, const int32_t* keep_src,
                  const int32_t* keep_dst, int32_t n_keep) {
    if (!r || (n_keep > 0 && (!keep_src || !keep_dst)))
        return fail("resize_kv: null argument");
    try {
        std::string err;
        return r->runner->resize_kv(num_blocks, block_size, keep_src, keep_dst, n_keep, err)
                   ? 0
                   : fail(err);
    } catch (const std::exception& e) {
        return fail(std::string("resize_kv: ") + e.what());
    }
}

int api_copy_block(LlmwbRunner* r, int32_t src, int32_t dst) {
    if (!r)
        return fail("copy_block: null runner");
    std::string err;
    return r->runner->copy_block(src, dst, err) ? 0 : fail(err);
}

int api_forward(LlmwbRunner* r, const LlmwbBatch* b, float* logits) {
    if (!r || !b || (b->n_logits > 0 && !logits))
        return fail("forward: null argument");
    try {
        std::string err;
        return r->runner->forward(*b, logits, nullptr, err) ? 0 : fail(err);
    } catch (const std::exception& e) {
        return fail(std::string("forward: ") + e.what());
    }
}

int api_forward_greedy(LlmwbRunner* r, const LlmwbBatch* b, int32_t* ids) {
    if (!r || !b || (b->n_logits > 0 && !ids))
        return fail("forward_greedy: null argument");
    try {
        std::string err;
        return r->runner->forward(*b, nullptr, ids, err) ? 0 : fail(err);
    } catch (const std::exception& e) {
        return fail(std::string("forward_greedy: ") + e.what());
    }
}

int api_memory_info(LlmwbRunner* r, int64_t* total, int64_t* free) {
    if (!r || !total || !free)
        return fail("memory_info: null argument");
    std::string err;
    return r->runner->memory_info(*total, *free, err) ? 0 : fail(err);
}

int64_t api_weight_bytes(const LlmwbRunner* r) {
    return r ? r->runner->weight_bytes() : 0;
}

int api_stats(const LlmwbRunner* r, int64_t* graph_steps, int64_t* eager_steps) {
    if (!r || !graph_steps || !eager_steps)
        return fail("stats: null argument");
    *graph_steps = r->runner->graph_steps();
    *eager_steps = r->runner->eager_steps();
    return 0;
}

int api_set_kv_dtype(LlmwbRunner* r, int32_t kv_dtype, const float* k_scales, const float* v_scales,
                     int32_t n_layers) {
    if (!r)
        return fail("set_kv_dtype: null runner");
    const std::optional<llmwb::KvDtype> t = llmwb::cuda::kv_dtype_from_abi(kv_dtype);
    if (!t)
        return fail("set_kv_dtype: unknown KV cache type id " + std::to_string(kv_dtype));
    try {
        std::string err;
        return r->runner->set_kv_dtype(*t, k_scales, v_scales, n_layers, err) ? 0 : fail(err);
    } catch (const std::exception& e) {
        return fail(std::string("set_kv_dtype: ") + e.what());
    }
}

int api_kv_absmax(LlmwbRunner* r, const int32_t* tokens, int32_t n, float* k_absmax,
                  float* v_absmax) {
    if (!r || !tokens || !k_absmax || !v_absmax || n <= 0)
        return fail("kv_absmax: null argument or no tokens");
    try {
        std::string err;
        return r->runner->kv_absmax(tokens, n, k_absmax, v_absmax, err) ? 0 : fail(err);
    } catch (const std::exception& e) {
        return fail(std::string("kv_absmax: ") + e.what());
    }
}

int api_set_weight_cache(LlmwbRunner* r, const int32_t* slots, int32_t n) {
    if (!r || n < 0 || (n > 0 && !slots))
        return fail("set_weight_cache: null argument");
    try {
        std::string err;
        return r->runner->set_weight_cache(slots, n, err) ? 0 : fail(err);
    } catch (const std::exception& e) {
        return fail(std::string("set_weight_cache: ") + e.what());
    }
}

int api_weight_cache_info(const LlmwbRunner* r, int64_t* bytes, int32_t* matrices,
                          int64_t* cached_matmuls) {
    if (!r || !bytes || !matrices || !cached_matmuls)
        return fail("weight_cache_info: null argument");
    *bytes = r->runner->weight_cache_bytes();
    *matrices = r->runner->weight_cache_count();
    *cached_matmuls = r->runner->cached_matmuls();
    return 0;
}

int api_reserve_step(LlmwbRunner* r, int32_t max_tokens, int32_t max_seqs) {
    if (!r)
        return fail("reserve_step: null runner");
    try {
        std::string err;
        return r->runner->reserve(max_tokens, max_seqs, err) ? 0 : fail(err);
    } catch (const std::exception& e) {
        return fail(std::string("reserve_step: ") + e.what());
    }
}

int64_t api_step_buffer_bytes(const LlmwbRunner* r) {
    return r ? r->runner->step_buffer_bytes() : 0;
}

const char* api_last_error() {
    return g_last_error.c_str();
}

const LlmwbCudaApi kApi = {
    LLMWB_CUDA_ABI_VERSION,
    sizeof(LlmwbCudaApi),
    api_device_count,
    api_device_info,
    api_create_runner,
    api_destroy_runner,
    api_resize_kv,
    api_copy_block,
    api_forward,
    api_forward_greedy,
    api_memory_info,
    api_weight_bytes,
    api_stats,
    api_last_error,
    api_set_kv_dtype,
    api_kv_absmax,
    api_set_weight_cache,
    api_weight_cache_info,
    api_reserve_step,
    api_step_buffer_bytes,
};

} // namespace

extern "C" __attribute__((visibility("default"))) const LlmwbCudaApi*
llmwb_cuda_plugin_api(uint32_t abi_version) {
    return abi_version == LLMWB_CUDA_ABI_VERSION ? &kApi : nullptr;
}
