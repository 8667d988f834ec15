// ModelRunner's KV pool: resizing it, copying blocks, the KV-type switch and fp8 calibration
// (kept apart from model_runner.cu's forward).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cuda/ops/launch.cuh"
#include "kernels/cuda/runner/model_runner.h"
#include "kernels/cuda/runner/runner_util.cuh"

namespace llmwb::cuda {

namespace {

constexpr int kAbsmaxThreads = 256;

// One KV block of every plane (layer x K/V): dst_pool[p][dst] = src_pool[p][src], in 16-byte
// words. Pools are [planes][num_blocks][block_words].
__global__ void copy_block_kernel(uint4* __restrict__ dst_pool, const uint4* __restrict__ src_pool,
                                  int64_t src_plane_words, int64_t dst_plane_words,
                                  int64_t block_words, int32_t src, int32_t dst) {
    const int64_t plane = blockIdx.y;
    const uint4* s = src_pool + plane * src_plane_words + static_cast<int64_t>(src) * block_words;
    uint4* d = dst_pool + plane * dst_plane_words + static_cast<int64_t>(dst) * block_words;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < block_words;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        d[i] = s[i];
}

// out[plane] = max |x| over the first `count` floats of each plane (planes `stride` floats
// apart); one block per plane.
__global__ void __launch_bounds__(kAbsmaxThreads)
    plane_absmax_kernel(float* out, const float* pool, int64_t stride, int64_t count) {
    __shared__ float partial[kAbsmaxThreads / 32];
    const float* x = pool + static_cast<int64_t>(blockIdx.x) * stride;
    float m = 0.0f;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
        m = fmaxf(m, fabsf(x[i]));
    for (int o = 16; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0)
        partial[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        float r = 0.0f;
        for (int w = 0; w < kAbsmaxThreads / 32; ++w)
            r = fmaxf(r, partial[w]);
        out[blockIdx.x] = r;
    }
}

std::string cuda_error(const char* what, cudaError_t e) {
    return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

} // namespace

bool ModelRunner::set_kv_dtype(KvDtype t, const float* k_scales, const float* v_scales,
                               int32_t n_layers, std::string&) {
    PendingKv p{t, std::vector<float>(size_t(layers_n_), 1.0f),
                std::vector<float>(size_t(layers_n_), 1.0f)};
    if (kv_dtype_is_fp8(t) && n_layers == layers_n_)
        for (int32_t l = 0; l < layers_n_; ++l) {
            if (k_scales && std::isfinite(k_scales[l]) && k_scales[l] > 0.0f)
                p.k_scale[size_t(l)] = k_scales[l];
            if (v_scales && std::isfinite(v_scales[l]) && v_scales[l] > 0.0f)
                p.v_scale[size_t(l)] = v_scales[l];
        }
    pending_kv_ = std::move(p);
    return true;
}

void ModelRunner::commit_kv_dtype() {
    if (!pending_kv_)
        return;
    kv_dtype_ = pending_kv_->dtype;
    k_scale_ = std::move(pending_kv_->k_scale);
    v_scale_ = std::move(pending_kv_->v_scale);
    pending_kv_.reset();
}

bool ModelRunner::kv_absmax(const int32_t* tokens, int32_t n, float* k_out, float* v_out,
                            std::string& err) {
    if (n <= 0) {
        err = "KV calibration: no tokens";
        return false;
    }
    if (cudaError_t e = cudaSetDevice(device_); e != cudaSuccess) {
        err = cuda_error("cudaSetDevice", e);
        return false;
    }
    if (cudaError_t e = cudaStreamSynchronize(stream_); e != cudaSuccess) {
        err = cuda_error("KV calibration", e);
        return false;
    }
    // Set the engine's pool aside (its device memory stays where it is, so graphs captured
    // over it stay valid) and run on a scratch F32 pool.
    struct Saved {
        ModelRunner* r;
        DeviceBuffer kv;
        KvDtype dtype;
        std::vector<float> k_scale, v_scale;
        int32_t num_blocks, block_size;
        bool graphs;
        ~Saved() {
            cudaStreamSynchronize(r->stream_);
            r->kv_.swap(kv);
            r->kv_dtype_ = dtype;
            r->k_scale_ = std::move(k_scale);
            r->v_scale_ = std::move(v_scale);
            r->num_blocks_ = num_blocks;
            r->block_size_ = block_size;
            r->use_graphs_ = graphs;
        }
    } saved{this, {}, kv_dtype_, k_scale_, v_scale_, num_blocks_, block_size_, use_graphs_};
    saved.kv.swap(kv_);
    constexpr int32_t bs = 16;
    const int32_t nb = (n + bs - 1) / bs;
    kv_dtype_ = KvDtype::F32;
    k_scale_.assign(size_t(layers_n_), 1.0f);
    v_scale_.assign(size_t(layers_n_), 1.0f);
    use_graphs_ = false; // graphs would bind the scratch pool
    const size_t block_bytes = size_t(kv_layout(bs).block_bytes());
    if (!kv_.ensure(size_t(2 * layers_n_) * size_t(nb) * block_bytes, nullptr, err)) {
        err = "KV calibration scratch pool: " + err;
        return false;
    }
    num_blocks_ = nb;
    block_size_ = bs;
    if (cudaError_t e = cudaMemsetAsync(kv_.get(), 0, kv_.bytes(), stream_); e != cudaSuccess) {
        err = cuda_error("KV calibration", e);
        return false;
    }
    std::vector<int32_t> table(static_cast<size_t>(nb)), positions, query_start(2), context(1),
        no_rows(1, 0);
    std::vector<int64_t> slots;
    for (int32_t i = 0; i < nb; ++i)
        table[size_t(i)] = i;
    const int32_t chunk = std::max(1, cap_tokens_);
    for (int32_t p0 = 0; p0 < n; p0 += chunk) {
        const int32_t len = std::min(chunk, n - p0);
        positions.resize(size_t(len));
        slots.resize(size_t(len));
        for (int32_t i = 0; i < len; ++i) {
            positions[size_t(i)] = p0 + i;
            slots[size_t(i)] = p0 + i;
        }
        query_start[0] = 0;
        query_start[1] = len;
        context[0] = p0 + len;
        LlmwbBatch b{};
        b.n_tokens = len;
        b.n_seqs = 1;
        b.max_blocks_per_seq = nb;
        b.n_logits = 0;
        b.token_ids = tokens + p0;
        b.positions = positions.data();
        b.slot_mapping = slots.data();
        b.query_start = query_start.data();
        b.context_lens = context.data();
        b.block_tables = table.data();
        b.logits_rows = no_rows.data(); // n_logits == 0: never read
        if (!forward(b, nullptr, nullptr, err))
            return false;
    }
    // Slots 0..n-1 are blocks 0.. in order: the first n * kv_dim floats of every plane.
    DeviceBuffer out;
    if (!out.ensure(size_t(2 * layers_n_) * 4, nullptr, err))
        return false;
    const int64_t kv_dim = int64_t{kv_heads_} * head_dim_;
    LLMWB_LAUNCH(static_cast<unsigned>(2 * layers_n_), kAbsmaxThreads, 0, stream_,
                 plane_absmax_kernel)
    (out.as<float>(), kv_.as<float>(), int64_t{nb} * bs * kv_dim, int64_t{n} * kv_dim);
    std::vector<float> host(size_t(2 * layers_n_));
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(host.data(), out.get(), host.size() * 4, cudaMemcpyDeviceToHost,
                            stream_);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) {
        err = cuda_error("KV calibration", e);
        return false;
    }
    for (int32_t l = 0; l < layers_n_; ++l) {
        k_out[l] = host[size_t(2 * l)];
        v_out[l] = host[size_t(2 * l + 1)];
    }
    return true;
}

bool ModelRunner::resize_kv(int32_t num_blocks, int32_t block_size, const int32_t* keep_src,
                            const int32_t* keep_dst, int32_t n_keep, std::string& err) {
    LLMWB_CU(cudaSetDevice(device_), "cudaSetDevice");
    if (num_blocks < 1 || (block_size != 8 && block_size != 16 && block_size != 32)) {
        err = "KV cache: bad size (" + std::to_string(num_blocks) + " blocks of " +
              std::to_string(block_size) + ")";
        return false;
    }
    // A KV type switch (set_kv_dtype) takes effect here: the new pool is in the new type and
    // keeps nothing; if it cannot be allocated, the old type stays (and the switch pending).
    const KvDtype new_dtype = pending_kv_ ? pending_kv_->dtype : kv_dtype_;
    if (n_keep > 0 && pending_kv_) {
        err = "KV cache resize: blocks cannot be kept across a KV type switch";
        return false;
    }
    // Values and (int8) scales of a block are contiguous: one copy per block and plane.
    const size_t block_bytes =
        size_t(KvLayout{new_dtype, block_size, kv_heads_, head_dim_}.block_bytes());
    if (block_bytes % 16 != 0) {
        err = "KV cache: a block of " + std::to_string(block_bytes) +
              " bytes is not a whole number of 16-byte words";
        return false;
    }
    if (n_keep > 0 && !kv_.get()) {
        err = "KV cache resize: no pool to keep blocks from";
        return false;
    }
    const size_t planes = size_t(2 * layers_n_);
    if (n_keep == 0 && kv_.get()) {
        // Nothing to keep: free the old pool first so that a pool of most of the device's memory
        // can be replaced by another one. On failure the old size is allocated again.
        const size_t old_bytes = kv_.bytes();
        LLMWB_CU(cudaStreamSynchronize(stream_), "KV resize");
        drop_graphs();
        kv_.reset();
        std::string fresh_err;
        if (!kv_.ensure(planes * size_t(num_blocks) * block_bytes, nullptr, fresh_err)) {
            std::string again;
            if (!kv_.ensure(old_bytes, nullptr, again))
                num_blocks_ = 0; // no pool at all: forward() reports it
            err = "KV cache of " + std::to_string(num_blocks) + " blocks: " + fresh_err;
            return false;
        }
        LLMWB_CU(cudaMemsetAsync(kv_.get(), 0, kv_.bytes(), stream_), "KV clear");
        LLMWB_CU(cudaStreamSynchronize(stream_), "KV resize");
        num_blocks_ = num_blocks;
        block_size_ = block_size;
        commit_kv_dtype();
        return true;
    }
    DeviceBuffer fresh;
    if (!fresh.ensure(planes * size_t(num_blocks) * block_bytes, nullptr, err))
        return false;
    // Zeroed, so that never-written slots (padding reads of block 0) hold finite values.
    LLMWB_CU(cudaMemsetAsync(fresh.get(), 0, fresh.bytes(), stream_), "KV clear");
    if (kv_.get() && block_size == block_size_) {
        const int64_t words = int64_t(block_bytes / 16);
        for (int32_t i = 0; i < n_keep; ++i) {
            if (keep_src[i] < 0 || keep_src[i] >= num_blocks_ || keep_dst[i] < 0 ||
                keep_dst[i] >= num_blocks) {
                err = "KV cache resize: block move out of range";
                return false;
            }
            const dim3 grid(static_cast<unsigned>(std::min<int64_t>((words + 255) / 256, 64)),
                            static_cast<unsigned>(planes));
            LLMWB_LAUNCH(grid, 256, 0, stream_, copy_block_kernel)
            (fresh.as<uint4>(), kv_.as<uint4>(), int64_t(num_blocks_) * words,
             int64_t(num_blocks) * words, words, keep_src[i], keep_dst[i]);
        }
        LLMWB_CU(cudaGetLastError(), "KV block copy");
    }
    LLMWB_CU(cudaStreamSynchronize(stream_), "KV resize");
    drop_graphs(); // they captured the old pool's address
    kv_.swap(fresh);
    num_blocks_ = num_blocks;
    block_size_ = block_size;
    commit_kv_dtype();
    return true;
}

bool ModelRunner::copy_block(int32_t src, int32_t dst, std::string& err) {
    LLMWB_CU(cudaSetDevice(device_), "cudaSetDevice");
    if (src < 0 || dst < 0 || src >= num_blocks_ || dst >= num_blocks_ || src == dst) {
        err = "copy_block: block ids out of range";
        return false;
    }
    const int64_t words = kv_layout(block_size_).block_bytes() / 16; // values + scales
    const int64_t plane = int64_t(num_blocks_) * words;
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>((words + 255) / 256, 64)),
                    static_cast<unsigned>(2 * layers_n_));
    LLMWB_LAUNCH(grid, 256, 0, stream_, copy_block_kernel)
    (kv_.as<uint4>(), kv_.as<uint4>(), plane, plane, words, src, dst);
    LLMWB_CU(cudaGetLastError(), "KV block copy");
    return true;
}

bool ModelRunner::memory_info(int64_t& total, int64_t& free, std::string& err) const {
    LLMWB_CU(cudaSetDevice(device_), "cudaSetDevice");
    size_t f = 0, t = 0;
    LLMWB_CU(cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
    total = static_cast<int64_t>(t);
    free = static_cast<int64_t>(f);
    return true;
}

} // namespace llmwb::cuda
