// Row and element-wise ops: rmsnorm (+ fused residual add), silu_mul, gelu_tanh_mul, softcap,
// scale, add, bias_add, rope,
// embedding_gather, argmax_rows (kv_write: kv_write.cu).
#include <cuda_fp16.h>

#include <cfloat>
#include <climits>
#include <cmath>

#include "kernels/cuda/ops/common.cuh"
#include "kernels/cuda/ops/dequant.cuh"

namespace llmwb::cuda {

using detail::check_launch;
using detail::grid_for;
using detail::invalid;

namespace {

constexpr int kThreads = 256;
constexpr int kNormThreads = 128;

// Sum of v over the block (blockDim.x a multiple of 32, <= 1024); every thread gets the result.
__device__ float block_sum(float v) {
    __shared__ float partial[32];
    v = detail::warp_sum(v);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    const int warps = blockDim.x / 32;
    float total = lane < warps ? partial[lane] : 0.0f;
    total = detail::warp_sum(total);
    __syncthreads(); // partial may be reused by the caller's next block_sum
    return total;
}

__global__ void rmsnorm_kernel(float* out, const float* x, const float* weight, int64_t dim,
                               float eps) {
    const int64_t row = blockIdx.x;
    const float* xr = x + row * dim;
    float* outr = out + row * dim;
    float ss = 0.0f;
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x)
        ss += xr[i] * xr[i];
    ss = block_sum(ss);
    const float scale = rsqrtf(ss / static_cast<float>(dim) + eps);
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x)
        outr[i] = xr[i] * scale * weight[i];
}

__global__ void add_rmsnorm_kernel(float* residual, float* out, const float* delta,
                                   const float* weight, int64_t dim, float eps) {
    const int64_t row = blockIdx.x;
    float* rr = residual + row * dim;
    const float* dr = delta + row * dim;
    float* outr = out + row * dim;
    float ss = 0.0f;
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
        const float v = rr[i] + dr[i];
        rr[i] = v;
        ss += v * v;
    }
    ss = block_sum(ss);
    const float scale = rsqrtf(ss / static_cast<float>(dim) + eps);
    // Each thread reads back only the elements it wrote itself.
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x)
        outr[i] = rr[i] * scale * weight[i];
}

__global__ void silu_mul_kernel(float* out, const float* gate, const float* up, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const float g = gate[i];
        out[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

__global__ void add_kernel(float* out, const float* a, const float* b, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        out[i] = a[i] + b[i];
}

__global__ void bias_add_kernel(float* x, const float* bias, int64_t total, int64_t dim) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        x[i] += bias[i % dim];
}

// gelu_tanh(g) * up with 0.5 (1 + tanh z) written as 1 / (1 + e^(-2z)), as the CPU op does (no
// cancellation for negative gates).
__global__ void gelu_tanh_mul_kernel(float* out, const float* gate, const float* up, int64_t n) {
    constexpr float kC = 0.7978845608028654f; // sqrt(2 / pi)
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const float g = gate[i];
        const float z = kC * (g + 0.044715f * g * g * g);
        out[i] = g / (1.0f + expf(-2.0f * z)) * up[i];
    }
}

__global__ void softcap_kernel(float* x, int64_t n, float cap, float inv_cap) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        x[i] = cap * tanhf(x[i] * inv_cap);
}

__global__ void scale_kernel(float* x, float s, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        x[i] *= s;
}

// One thread per (token, head of q then k, pair of the rotated dimensions); dimensions past
// rotary_dim pass through.
__global__ void rope_kernel(float* q, float* k, const int32_t* positions, int64_t n, int32_t heads,
                            int32_t kv_heads, int32_t head_dim, const double* inv_freq,
                            bool interleaved, int32_t rotary_dim, float cs_scale) {
    const int32_t half = rotary_dim / 2;
    const int32_t all_heads = heads + (k ? kv_heads : 0);
    const int64_t total = n * all_heads * half;
    for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
         idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int32_t i = static_cast<int32_t>(idx % half);
        const int32_t h = static_cast<int32_t>((idx / half) % all_heads);
        const int64_t t = idx / (static_cast<int64_t>(half) * all_heads);
        float* v = h < heads ? q + (t * heads + h) * head_dim
                             : k + (t * kv_heads + (h - heads)) * head_dim;
        double s, c;
        sincos(static_cast<double>(positions[t]) * inv_freq[i], &s, &c);
        // As engine/runtime/rope.cpp: the (LongRoPE) multiplier applied in double, then rounded.
        const float cf = static_cast<float>(c * cs_scale), sf = static_cast<float>(s * cs_scale);
        const int32_t ia = interleaved ? 2 * i : i;
        const int32_t ib = interleaved ? 2 * i + 1 : i + half;
        const float a = v[ia], b = v[ib];
        v[ia] = a * cf - b * sf;
        v[ib] = a * sf + b * cf;
    }
}

template <DType T>
__global__ void embedding_kernel(float* out, const uint8_t* table, int64_t row_bytes, int64_t vocab,
                                 const int32_t* ids, int64_t n, int64_t hidden) {
    const int64_t total = n * hidden;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t t = i / hidden, e = i % hidden;
        int64_t id = ids[t];
        id = id < 0 ? 0 : (id >= vocab ? vocab - 1 : id);
        out[i] = detail::dequant_elem<T>(table + id * row_bytes, e);
    }
}

// Better candidate: larger value, or equal value at a lower index. NaN never wins.
__device__ __forceinline__ bool better(float v, int32_t i, float bv, int32_t bi) {
    return v > bv || (v == bv && i < bi);
}

__global__ void argmax_kernel(int32_t* out, const float* logits, int64_t vocab) {
    const float* row = logits + static_cast<int64_t>(blockIdx.x) * vocab;
    float bv = -INFINITY;
    int32_t bi = INT_MAX;
    for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) {
        const float v = row[i];
        if (better(v, static_cast<int32_t>(i), bv, bi)) {
            bv = v;
            bi = static_cast<int32_t>(i);
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
        const int32_t oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (better(ov, oi, bv, bi)) {
            bv = ov;
            bi = oi;
        }
    }
    __shared__ float sv[32];
    __shared__ int32_t si[32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        sv[warp] = bv;
        si[warp] = bi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w)
            if (better(sv[w], si[w], bv, bi)) {
                bv = sv[w];
                bi = si[w];
            }
        out[blockIdx.x] = bi == INT_MAX ? 0 : bi; // all NaN: index 0
    }
}

bool row_grid_ok(int64_t rows) {
    return rows >= 0 && rows <= INT_MAX;
}

} // namespace

OpStatus rmsnorm(float* out, const float* x, const float* weight, int64_t rows, int64_t dim,
                 float eps, cudaStream_t stream) {
    if (!row_grid_ok(rows) || dim <= 0)
        return invalid("rmsnorm", "bad rows/dim");
    if (rows == 0)
        return OpStatus::Ok;
    LLMWB_LAUNCH(static_cast<unsigned>(rows), kNormThreads, 0, stream, rmsnorm_kernel)
    (out, x, weight, dim, eps);
    return check_launch("rmsnorm");
}

OpStatus add_rmsnorm(float* residual_inout, float* out, const float* delta, const float* weight,
                     int64_t rows, int64_t dim, float eps, cudaStream_t stream) {
    if (!row_grid_ok(rows) || dim <= 0)
        return invalid("add_rmsnorm", "bad rows/dim");
    if (rows == 0)
        return OpStatus::Ok;
    LLMWB_LAUNCH(static_cast<unsigned>(rows), kNormThreads, 0, stream, add_rmsnorm_kernel)
    (residual_inout, out, delta, weight, dim, eps);
    return check_launch("add_rmsnorm");
}

OpStatus silu_mul(float* out, const float* gate, const float* up, int64_t n_elems,
                  cudaStream_t stream) {
    if (n_elems < 0)
        return invalid("silu_mul", "negative size");
    if (n_elems == 0)
        return OpStatus::Ok;
    LLMWB_LAUNCH(grid_for(n_elems, kThreads), kThreads, 0, stream, silu_mul_kernel)
    (out, gate, up, n_elems);
    return check_launch("silu_mul");
}

OpStatus add(float* out, const float* a, const float* b, int64_t n_elems, cudaStream_t stream) {
    if (n_elems < 0)
        return invalid("add", "negative size");
    if (n_elems == 0)
        return OpStatus::Ok;
    LLMWB_LAUNCH(grid_for(n_elems, kThreads), kThreads, 0, stream, add_kernel)(out, a, b, n_elems);
    return check_launch("add");
}

OpStatus bias_add(float* x, const float* bias, int64_t n, int64_t dim, cudaStream_t stream) {
    if (n < 0 || dim <= 0)
        return invalid("bias_add", "bad size");
    if (n == 0)
        return OpStatus::Ok;
    LLMWB_LAUNCH(grid_for(n * dim, kThreads), kThreads, 0, stream, bias_add_kernel)
    (x, bias, n * dim, dim);
    return check_launch("bias_add");
}

OpStatus rope(float* q, float* k, const int32_t* positions, int64_t n, int32_t heads,
              int32_t kv_heads, int32_t head_dim, const double* inv_freq, bool interleaved,
              cudaStream_t stream, int32_t rotary_dim, float cs_scale) {
    if (n < 0 || heads <= 0 || kv_heads < 0 || head_dim <= 0 || head_dim % 2 != 0)
        return invalid("rope", "bad shape");
    const int32_t rd = rotary_dim > 0 ? rotary_dim : head_dim;
    if (rd % 2 != 0 || rd > head_dim)
        return invalid("rope", "rotary_dim must be even and at most head_dim");
    if (!std::isfinite(cs_scale))
        return invalid("rope", "cos/sin scale is not finite");
    if (n == 0)
        return OpStatus::Ok;
    const int64_t total = n * (heads + (k ? kv_heads : 0)) * (rd / 2);
    LLMWB_LAUNCH(grid_for(total, kThreads), kThreads, 0, stream, rope_kernel)
    (q, k, positions, n, heads, kv_heads, head_dim, inv_freq, interleaved, rd, cs_scale);
    return check_launch("rope");
}

OpStatus gelu_tanh_mul(float* out, const float* gate, const float* up, int64_t n_elems,
                       cudaStream_t stream) {
    if (n_elems < 0)
        return invalid("gelu_tanh_mul", "negative size");
    if (n_elems == 0)
        return OpStatus::Ok;
    LLMWB_LAUNCH(grid_for(n_elems, kThreads), kThreads, 0, stream, gelu_tanh_mul_kernel)
    (out, gate, up, n_elems);
    return check_launch("gelu_tanh_mul");
}

OpStatus softcap(float* x, int64_t n_elems, float cap, cudaStream_t stream) {
    if (n_elems < 0 || !(cap > 0.0f) || !std::isfinite(cap))
        return invalid("softcap", "negative size or a cap that is not finite and positive");
    if (n_elems == 0)
        return OpStatus::Ok;
    LLMWB_LAUNCH(grid_for(n_elems, kThreads), kThreads, 0, stream, softcap_kernel)
    (x, n_elems, cap, 1.0f / cap);
    return check_launch("softcap");
}

OpStatus scale(float* x, float s, int64_t n_elems, cudaStream_t stream) {
    if (n_elems < 0 || !std::isfinite(s))
        return invalid("scale", "negative size or a factor that is not finite");
    if (n_elems == 0)
        return OpStatus::Ok;
    LLMWB_LAUNCH(grid_for(n_elems, kThreads), kThreads, 0, stream, scale_kernel)(x, s, n_elems);
    return check_launch("scale");
}

OpStatus embedding_gather(float* out, const DeviceMatrix& table, const int32_t* ids, int64_t n,
                          cudaStream_t stream) {
    const int64_t be = dtype_block_elems(table.type);
    if (n < 0 || table.rows <= 0 || table.cols <= 0 || be == 0 || table.cols % be != 0)
        return invalid("embedding_gather", "bad table shape or dtype");
    if (n == 0)
        return OpStatus::Ok;
    const auto* data = static_cast<const uint8_t*>(table.data);
    const int64_t rb = dtype_row_bytes(table.type, table.cols);
    const unsigned grid = grid_for(n * table.cols, kThreads);
#define LLMWB_EMB(T)                                                                               \
    LLMWB_LAUNCH(grid, kThreads, 0, stream, embedding_kernel<T>)                                   \
    (out, data, rb, table.rows, ids, n, table.cols)
#define LLMWB_EMB_CASE(T)                                                                          \
    case T:                                                                                        \
        LLMWB_EMB(T);                                                                              \
        break
    switch (table.type) { // every dtype a GGUF token_embd can have
        LLMWB_EMB_CASE(DType::F32);
        LLMWB_EMB_CASE(DType::F16);
        LLMWB_EMB_CASE(DType::BF16);
        LLMWB_EMB_CASE(DType::Q4_0);
        LLMWB_EMB_CASE(DType::Q4_1);
        LLMWB_EMB_CASE(DType::Q5_0);
        LLMWB_EMB_CASE(DType::Q5_1);
        LLMWB_EMB_CASE(DType::Q8_0);
        LLMWB_EMB_CASE(DType::Q2_K);
        LLMWB_EMB_CASE(DType::Q3_K);
        LLMWB_EMB_CASE(DType::Q4_K);
        LLMWB_EMB_CASE(DType::Q5_K);
        LLMWB_EMB_CASE(DType::Q6_K);
        LLMWB_EMB_CASE(DType::IQ4_NL);
        LLMWB_EMB_CASE(DType::IQ4_XS);
    }
#undef LLMWB_EMB_CASE
#undef LLMWB_EMB
    return check_launch("embedding_gather");
}

OpStatus argmax_rows(int32_t* out_ids, const float* logits, int64_t n, int64_t vocab,
                     cudaStream_t stream) {
    if (!row_grid_ok(n) || vocab <= 0 || vocab > INT_MAX)
        return invalid("argmax_rows", "bad size");
    if (n == 0)
        return OpStatus::Ok;
    LLMWB_LAUNCH(static_cast<unsigned>(n), kThreads, 0, stream, argmax_kernel)
    (out_ids, logits, vocab);
    return check_launch("argmax_rows");
}

} // namespace llmwb::cuda
