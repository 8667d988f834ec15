// Weight x activation products: GEMV kernels for small token counts (any dtype, weights read in
// place), cuBLAS for larger ones (quantized weights dequantized to bf16 in the workspace first).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>

#include "kernels/cuda/ops/blas.cuh"
#include "kernels/cuda/ops/common.cuh"
#include "kernels/cuda/ops/dequant.cuh"

namespace llmwb::cuda {

using detail::check_launch;
using detail::invalid;

namespace {

constexpr int kGemvMaxN = 8;
constexpr int kGemvWarps = 8;            // warps per block of the n = 2..8 kernel
constexpr int kGemvMaxRowsPerWarp = 4;   // weight rows one warp of that kernel handles
constexpr int kGemvTileChunks = 32;      // 32-column chunks staged per pass (one per lane)
constexpr int kGemvChunkStride = 32 + 4; // floats per staged chunk (padded: bank spread)
constexpr int kGemv1Warps = 4;           // warps per block of the n == 1 kernel
constexpr int kThreads = 256;
constexpr size_t kAlign = 256;
constexpr size_t kDefaultTileBytes = size_t{64} << 20;

size_t align_up(size_t v) {
    return (v + kAlign - 1) / kAlign * kAlign;
}

bool is_quantized(DType t) {
    return dtype_block_elems(t) > 1;
}

// The decoders load each block with the widest words its size allows once the matrix starts
// 16-byte aligned (detail::dtype_load_align); a base with less alignment would fault.
bool weights_aligned(const DeviceMatrix& w) {
    return reinterpret_cast<uintptr_t>(w.data) % detail::dtype_load_align(w.type) == 0;
}

// n = 2..8 token rows (batched decode, short verification steps). Each warp handles up to
// kGemvMaxRowsPerWarp weight rows (rows_per_warp, warp-uniform) and reads every weight once; the
// block's kGemvWarps warps share the activations, staged in shared memory kGemvTileChunks chunks
// of 32 columns at a time for all N tokens. The activations are thus read from global memory
// once per block (8 x rows_per_warp weight rows), not once per row. Each staged chunk is padded
// to kGemvChunkStride floats so that the lanes' 16-byte reads of their own chunk fall in
// different banks.
template <DType T, int N>
__global__ void __launch_bounds__(kGemvWarps * 32)
    gemv_kernel(float* out, const uint8_t* w, int64_t row_bytes, const float* x, int64_t rows,
                int64_t cols, int rows_per_warp, bool vec_w, bool vec_x) {
    __shared__ __align__(16) float xs[N * kGemvTileChunks * kGemvChunkStride];
    const int lane = threadIdx.x % 32;
    const int64_t row0 =
        (static_cast<int64_t>(blockIdx.x) * kGemvWarps + threadIdx.x / 32) * rows_per_warp;
    // Rows of this warp (warp-uniform; 0 for a warp past the end, which still stages and
    // reaches every barrier).
    const int nr = row0 >= rows                  ? 0
                   : rows - row0 < rows_per_warp ? static_cast<int>(rows - row0)
                                                 : rows_per_warp;
    float acc[kGemvMaxRowsPerWarp][N];
#pragma unroll
    for (int r = 0; r < kGemvMaxRowsPerWarp; ++r)
#pragma unroll
        for (int t = 0; t < N; ++t)
            acc[r][t] = 0.0f;
    const int64_t chunks = cols / 32;
    for (int64_t c0 = 0; c0 < chunks; c0 += kGemvTileChunks) {
        const int tc =
            chunks - c0 < kGemvTileChunks ? static_cast<int>(chunks - c0) : kGemvTileChunks;
        // Stage x[t][32 c0 .. 32 (c0 + tc)) of every token.
        if (vec_x) {
            const int per_token = tc * 8; // float4 words
            for (int i = threadIdx.x; i < N * per_token; i += blockDim.x) {
                const int t = i / per_token, j = i % per_token;
                const float4 v = reinterpret_cast<const float4*>(x + t * cols + c0 * 32)[j];
                *reinterpret_cast<float4*>(
                    &xs[(t * kGemvTileChunks + j / 8) * kGemvChunkStride + 4 * (j % 8)]) = v;
            }
        } else {
            const int per_token = tc * 32;
            for (int i = threadIdx.x; i < N * per_token; i += blockDim.x) {
                const int t = i / per_token, j = i % per_token;
                xs[(t * kGemvTileChunks + j / 32) * kGemvChunkStride + j % 32] =
                    x[t * cols + c0 * 32 + j];
            }
        }
        __syncthreads();
        if (lane < tc) { // one chunk per lane
#pragma unroll
            for (int r = 0; r < kGemvMaxRowsPerWarp; ++r) {
                if (r < nr) {
                    float wv[32];
                    detail::dequant_chunk32<T>(w + (row0 + r) * row_bytes, c0 + lane, vec_w, wv);
#pragma unroll
                    for (int t = 0; t < N; ++t) {
                        const float4* xp = reinterpret_cast<const float4*>(
                            &xs[(t * kGemvTileChunks + lane) * kGemvChunkStride]);
                        float s = 0.0f;
#pragma unroll
                        for (int i = 0; i < 8; ++i) {
                            const float4 v = xp[i];
                            s += wv[4 * i] * v.x + wv[4 * i + 1] * v.y + wv[4 * i + 2] * v.z +
                                 wv[4 * i + 3] * v.w;
                        }
                        acc[r][t] += s;
                    }
                }
            }
        }
        __syncthreads(); // the next tile overwrites xs
    }
    // Tail of a float-typed row whose length is not a multiple of 32 (read in place).
    for (int64_t e = chunks * 32 + lane; e < cols; e += 32) {
#pragma unroll
        for (int r = 0; r < kGemvMaxRowsPerWarp; ++r) {
            if (r < nr) {
                const float wv = detail::dequant_elem<T>(w + (row0 + r) * row_bytes, e);
#pragma unroll
                for (int t = 0; t < N; ++t)
                    acc[r][t] += wv * x[t * cols + e];
            }
        }
    }
#pragma unroll
    for (int r = 0; r < kGemvMaxRowsPerWarp; ++r) {
        if (r < nr) {
#pragma unroll
            for (int t = 0; t < N; ++t) {
                const float s = detail::warp_sum(acc[r][t]);
                if (lane == 0)
                    out[t * rows + row0 + r] = s;
            }
        }
    }
}

// Weight rows per warp of the n = 2..8 kernel: more sharing of the staged activations for large
// matrices, more blocks for small ones.
int gemv_rows_per_warp(int64_t rows) {
    return rows >= 8192 ? 4 : (rows >= 2048 ? 2 : 1);
}

// n == 1 (single-stream decode): each warp handles R rows so that the 32 activations a lane
// loads for a chunk are reused for R weight chunks (the activation reads, not the weights,
// would otherwise bound the kernel for 4-bit types).
template <DType T, int R>
__global__ void __launch_bounds__(kGemv1Warps * 32)
    gemv1_kernel(float* out, const uint8_t* w, int64_t row_bytes, const float* x, int64_t rows,
                 int64_t cols, bool vec_w, bool vec_x) {
    const int lane = threadIdx.x % 32;
    const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * kGemv1Warps + threadIdx.x / 32) * R;
    if (row0 >= rows)
        return; // no block-level synchronisation below
    const int nr = rows - row0 < R ? static_cast<int>(rows - row0) : R; // warp-uniform
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
        acc[r] = 0.0f;
    const int64_t chunks = cols / 32;
    for (int64_t c = lane; c < chunks; c += 32) {
        float xv[32];
        const float* xp = x + c * 32;
        if (vec_x) {
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float4 v = reinterpret_cast<const float4*>(xp)[i];
                xv[4 * i] = v.x;
                xv[4 * i + 1] = v.y;
                xv[4 * i + 2] = v.z;
                xv[4 * i + 3] = v.w;
            }
        } else {
#pragma unroll
            for (int i = 0; i < 32; ++i)
                xv[i] = xp[i];
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            if (r < nr) {
                float wv[32];
                detail::dequant_chunk32<T>(w + (row0 + r) * row_bytes, c, vec_w, wv);
                float s = 0.0f;
#pragma unroll
                for (int i = 0; i < 32; ++i)
                    s += wv[i] * xv[i];
                acc[r] += s;
            }
        }
    }
    for (int64_t e = chunks * 32 + lane; e < cols; e += 32) { // float types: row tail
        const float xe = x[e];
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (r < nr)
                acc[r] += detail::dequant_elem<T>(w + (row0 + r) * row_bytes, e) * xe;
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const float s = detail::warp_sum(acc[r]);
        if (lane == 0 && r < nr)
            out[row0 + r] = s;
    }
}

template <DType T>
OpStatus launch_gemv_t(float* out, const DeviceMatrix& w, const float* x, int64_t n, bool vec_w,
                       bool vec_x, cudaStream_t stream) {
    const int rpw = gemv_rows_per_warp(w.rows);
    const unsigned grid =
        static_cast<unsigned>(detail::ceil_div(w.rows, int64_t{kGemvWarps} * rpw));
    const auto* wp = static_cast<const uint8_t*>(w.data);
    const int64_t rb = dtype_row_bytes(w.type, w.cols);
#define LLMWB_GEMV(NN)                                                                             \
    case NN:                                                                                       \
        LLMWB_LAUNCH(grid, kGemvWarps * 32, 0, stream, gemv_kernel<T, NN>)                         \
        (out, wp, rb, x, w.rows, w.cols, rpw, vec_w, vec_x);                                       \
        break
    if (n == 1) {
        // Rows per warp: more reuse of the activations for large matrices, more warps for small.
        const int r = w.rows >= 16384 ? 4 : (w.rows >= 4096 ? 2 : 1);
        const unsigned g1 =
            static_cast<unsigned>(detail::ceil_div(w.rows, int64_t{kGemv1Warps} * r));
        if (r == 4) {
            LLMWB_LAUNCH(g1, kGemv1Warps * 32, 0, stream, gemv1_kernel<T, 4>)
            (out, wp, rb, x, w.rows, w.cols, vec_w, vec_x);
        } else if (r == 2) {
            LLMWB_LAUNCH(g1, kGemv1Warps * 32, 0, stream, gemv1_kernel<T, 2>)
            (out, wp, rb, x, w.rows, w.cols, vec_w, vec_x);
        } else {
            LLMWB_LAUNCH(g1, kGemv1Warps * 32, 0, stream, gemv1_kernel<T, 1>)
            (out, wp, rb, x, w.rows, w.cols, vec_w, vec_x);
        }
        return check_launch("matmul (GEMV n=1)");
    }
    switch (n) {
        LLMWB_GEMV(2);
        LLMWB_GEMV(3);
        LLMWB_GEMV(4);
        LLMWB_GEMV(5);
        LLMWB_GEMV(6);
        LLMWB_GEMV(7);
        LLMWB_GEMV(8);
    default:
        return invalid("matmul", "GEMV token count out of range");
    }
#undef LLMWB_GEMV
    return check_launch("matmul (GEMV)");
}

OpStatus launch_gemv(float* out, const DeviceMatrix& w, const float* x, int64_t n,
                     cudaStream_t stream) {
    const bool w_aligned = (reinterpret_cast<uintptr_t>(w.data) % 16) == 0;
    const bool vec_w = w_aligned && w.cols % 32 == 0;
    const bool vec_x = (reinterpret_cast<uintptr_t>(x) % 16) == 0 && w.cols % 4 == 0;
#define LLMWB_GEMV_T(T)                                                                            \
    case T:                                                                                        \
        return launch_gemv_t<T>(out, w, x, n, vec_w, vec_x, stream)
    switch (w.type) { // every dtype: GEMV reads each weight type in place
        LLMWB_GEMV_T(DType::F32);
        LLMWB_GEMV_T(DType::F16);
        LLMWB_GEMV_T(DType::BF16);
        LLMWB_GEMV_T(DType::Q4_0);
        LLMWB_GEMV_T(DType::Q4_1);
        LLMWB_GEMV_T(DType::Q5_0);
        LLMWB_GEMV_T(DType::Q5_1);
        LLMWB_GEMV_T(DType::Q8_0);
        LLMWB_GEMV_T(DType::Q2_K);
        LLMWB_GEMV_T(DType::Q3_K);
        LLMWB_GEMV_T(DType::Q4_K);
        LLMWB_GEMV_T(DType::Q5_K);
        LLMWB_GEMV_T(DType::Q6_K);
        LLMWB_GEMV_T(DType::IQ4_NL);
        LLMWB_GEMV_T(DType::IQ4_XS);
    }
#undef LLMWB_GEMV_T
    return invalid("matmul", "unknown dtype");
}

template <typename H> __device__ __forceinline__ H from_float(float v);
template <> __device__ __forceinline__ __half from_float<__half>(float v) {
    return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

template <typename H> __global__ void convert_kernel(H* out, const float* x, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        out[i] = from_float<H>(x[i]);
}

// Rows [r0, r0 + tile_rows) of w dequantized to bf16 tile[tile_rows][cols]; one thread per
// chunk of 32 elements (cols is a multiple of 32 for every quantized type).
template <DType T>
__global__ void dequant_tile_kernel(__nv_bfloat16* tile, const uint8_t* w, int64_t row_bytes,
                                    int64_t r0, int64_t tile_rows, int64_t cols) {
    const int64_t cpr = cols / 32;
    const int64_t total = tile_rows * cpr;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t r = i / cpr, c = i % cpr;
        float wv[32];
        detail::dequant_chunk32<T>(w + (r0 + r) * row_bytes, c, true, wv);
        uint4* dst = reinterpret_cast<uint4*>(tile + r * cols + c * 32);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            uint32_t words[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const uint32_t lo = __bfloat16_as_ushort(__float2bfloat16_rn(wv[8 * q + 2 * k]));
                const uint32_t hi =
                    __bfloat16_as_ushort(__float2bfloat16_rn(wv[8 * q + 2 * k + 1]));
                words[k] = lo | (hi << 16);
            }
            dst[q] = make_uint4(words[0], words[1], words[2], words[3]);
        }
    }
}

OpStatus launch_dequant_tile(__nv_bfloat16* tile, const DeviceMatrix& w, int64_t r0,
                             int64_t tile_rows, cudaStream_t stream) {
    const auto* wp = static_cast<const uint8_t*>(w.data);
    const int64_t rb = dtype_row_bytes(w.type, w.cols);
    const unsigned grid = detail::grid_for(tile_rows * (w.cols / 32), kThreads);
#define LLMWB_DQ(T)                                                                                \
    LLMWB_LAUNCH(grid, kThreads, 0, stream, dequant_tile_kernel<T>)                                \
    (tile, wp, rb, r0, tile_rows, w.cols)
#define LLMWB_DQ_CASE(T)                                                                           \
    case T:                                                                                        \
        LLMWB_DQ(T);                                                                               \
        break
    switch (w.type) {
        LLMWB_DQ_CASE(DType::Q4_0);
        LLMWB_DQ_CASE(DType::Q4_1);
        LLMWB_DQ_CASE(DType::Q5_0);
        LLMWB_DQ_CASE(DType::Q5_1);
        LLMWB_DQ_CASE(DType::Q8_0);
        LLMWB_DQ_CASE(DType::Q2_K);
        LLMWB_DQ_CASE(DType::Q3_K);
        LLMWB_DQ_CASE(DType::Q4_K);
        LLMWB_DQ_CASE(DType::Q5_K);
        LLMWB_DQ_CASE(DType::Q6_K);
        LLMWB_DQ_CASE(DType::IQ4_NL);
        LLMWB_DQ_CASE(DType::IQ4_XS);
    case DType::F32: // float types go to cuBLAS directly (matmul) and are not "dequantized"
    case DType::F16:
    case DType::BF16:
        return invalid("matmul", "dequantize: not a quantized dtype");
    }
#undef LLMWB_DQ_CASE
#undef LLMWB_DQ
    return check_launch("matmul (dequantize tile)");
}

// out^T (rows x n, column-major) = W^T' ... in cuBLAS terms: C[m=rows][n] = A^T B with A the
// row-major weight seen column-major (cols x rows, lda = cols) and B = x (cols x n, ldb = cols).
OpStatus gemm_ex(BlasContext& blas, float* out, int64_t ldc, const void* a, cudaDataType at,
                 const void* b, int64_t m, int64_t n, int64_t k) {
    const float alpha = 1.0f, beta = 0.0f;
    return detail::blas_check(
        "cublasGemmEx",
        cublasGemmEx(blas.handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m),
                     static_cast<int>(n), static_cast<int>(k), &alpha, a, at, static_cast<int>(k),
                     b, at, static_cast<int>(k), &beta, out, CUDA_R_32F, static_cast<int>(ldc),
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

int64_t default_tile_rows(int64_t rows, int64_t cols) {
    int64_t t = static_cast<int64_t>(kDefaultTileBytes) / (cols * 2);
    if (t < 128)
        t = 128;
    return t < rows ? t : rows;
}

} // namespace

size_t matmul_workspace_bytes(int64_t rows, int64_t cols, int64_t max_n, DType type) {
    if (rows <= 0 || cols <= 0 || max_n <= kGemvMaxN || type == DType::F32)
        return 0;
    const size_t act = align_up(static_cast<size_t>(max_n) * static_cast<size_t>(cols) * 2);
    if (!is_quantized(type))
        return act;
    return act + align_up(static_cast<size_t>(default_tile_rows(rows, cols)) *
                          static_cast<size_t>(cols) * 2);
}

OpStatus dequantize_to_bf16(void* out, const DeviceMatrix& w, cudaStream_t stream) {
    const int64_t be = dtype_block_elems(w.type);
    if (!is_quantized(w.type) || w.rows <= 0 || w.cols <= 0 || w.cols % be != 0 || !w.data)
        return invalid("dequantize_to_bf16", "not a quantized matrix of whole blocks");
    if (reinterpret_cast<uintptr_t>(out) % 16 != 0 || !weights_aligned(w))
        return invalid("dequantize_to_bf16", "pointers must be 16-byte aligned");
    return launch_dequant_tile(static_cast<__nv_bfloat16*>(out), w, 0, w.rows, stream);
}

OpStatus matmul(BlasContext& blas, float* out, const DeviceMatrix& w, const float* x, int64_t n,
                void* workspace, size_t workspace_bytes, cudaStream_t stream) {
    const int64_t be = dtype_block_elems(w.type);
    if (be == 0 || w.rows <= 0 || w.cols <= 0 || w.cols % be != 0 || n < 0 || !w.data)
        return invalid("matmul", "bad weight shape or dtype");
    if (w.rows > INT_MAX || w.cols > INT_MAX || n > INT_MAX)
        return invalid("matmul", "dimension beyond cuBLAS' int range");
    if (!weights_aligned(w))
        return invalid("matmul", "weights not aligned as their blocks need (16 bytes suffice)");
    if (n == 0)
        return OpStatus::Ok;
    if (n <= kGemvMaxN)
        return launch_gemv(out, w, x, n, stream);

    OpStatus s = detail::blas_bind(blas, stream);
    if (s != OpStatus::Ok)
        return s;
    if (w.type == DType::F32) {
        const float alpha = 1.0f, beta = 0.0f;
        return detail::blas_check(
            "cublasSgemm",
            cublasSgemm(blas.handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(w.rows),
                        static_cast<int>(n), static_cast<int>(w.cols), &alpha,
                        static_cast<const float*>(w.data), static_cast<int>(w.cols), x,
                        static_cast<int>(w.cols), &beta, out, static_cast<int>(w.rows)));
    }
    const size_t act = align_up(static_cast<size_t>(n) * static_cast<size_t>(w.cols) * 2);
    if (!workspace || workspace_bytes < act) {
        detail::set_error("matmul", "workspace smaller than matmul_workspace_bytes()");
        return OpStatus::WorkspaceTooSmall;
    }
    const unsigned grid = detail::grid_for(n * w.cols, kThreads);
    if (w.type == DType::F16 || w.type == DType::BF16) {
        const bool f16 = w.type == DType::F16;
        if (f16) {
            LLMWB_LAUNCH(grid, kThreads, 0, stream, convert_kernel<__half>)
            (static_cast<__half*>(workspace), x, n * w.cols);
        } else {
            LLMWB_LAUNCH(grid, kThreads, 0, stream, convert_kernel<__nv_bfloat16>)
            (static_cast<__nv_bfloat16*>(workspace), x, n * w.cols);
        }
        s = check_launch("matmul (convert activations)");
        if (s != OpStatus::Ok)
            return s;
        return gemm_ex(blas, out, w.rows, w.data, f16 ? CUDA_R_16F : CUDA_R_16BF, workspace, w.rows,
                       n, w.cols);
    }
    // Quantized: bf16 activations + bf16 tiles of dequantized weight rows.
    const size_t row_tile_bytes = static_cast<size_t>(w.cols) * 2;
    int64_t tile_rows = static_cast<int64_t>((workspace_bytes - act) / row_tile_bytes);
    if (tile_rows < 1) {
        detail::set_error("matmul", "workspace too small for one dequantized row");
        return OpStatus::WorkspaceTooSmall;
    }
    if (tile_rows >= w.rows)
        tile_rows = w.rows;
    else if (tile_rows >= 128)
        tile_rows = tile_rows / 128 * 128;
    auto* xb = static_cast<__nv_bfloat16*>(workspace);
    auto* tile = reinterpret_cast<__nv_bfloat16*>(static_cast<uint8_t*>(workspace) + act);
    LLMWB_LAUNCH(grid, kThreads, 0, stream, convert_kernel<__nv_bfloat16>)(xb, x, n * w.cols);
    s = check_launch("matmul (convert activations)");
    if (s != OpStatus::Ok)
        return s;
    for (int64_t r0 = 0; r0 < w.rows; r0 += tile_rows) {
        const int64_t tr = w.rows - r0 < tile_rows ? w.rows - r0 : tile_rows;
        s = launch_dequant_tile(tile, w, r0, tr, stream);
        if (s != OpStatus::Ok)
            return s;
        s = gemm_ex(blas, out + r0, w.rows, tile, CUDA_R_16BF, xb, tr, n, w.cols);
        if (s != OpStatus::Ok)
            return s;
    }
    return OpStatus::Ok;
}

} // namespace llmwb::cuda
