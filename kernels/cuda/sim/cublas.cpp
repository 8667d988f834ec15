// cudasim: the cuBLAS subset the backend uses (handles, stream and workspace binding,
// cublasSgemm and cublasGemmEx with F32 / F16 / BF16 operands, fp32 accumulation, column-major
// as in cuBLAS). The product is enqueued on the handle's stream like any other work; operands
// must be device memory.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/cuda/sim/runtime.h"

struct cublasContext {
    cudaStream_t stream = nullptr;
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
    cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
};

using namespace cudasim::detail;

namespace {

float element(const void* base, cudaDataType t, size_t i) {
    switch (t) {
    case CUDA_R_32F:
        return static_cast<const float*>(base)[i];
    case CUDA_R_16F:
        return __half2float(static_cast<const __half*>(base)[i]);
    case CUDA_R_16BF:
        return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    default:
        return 0.0f;
    }
}

bool supported(cudaDataType t) {
    return t == CUDA_R_32F || t == CUDA_R_16F || t == CUDA_R_16BF;
}

size_t elem_bytes(cudaDataType t) {
    return t == CUDA_R_32F ? 4 : 2;
}

// Bytes spanned by a column-major rows x cols matrix with leading dimension ld.
size_t span(int rows, int cols, int ld, cudaDataType t) {
    if (rows == 0 || cols == 0)
        return 0;
    return (static_cast<size_t>(cols - 1) * ld + rows) * elem_bytes(t);
}

cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, const void* alpha_p, const void* A, cudaDataType at, int lda,
                    const void* B, cudaDataType bt, int ldb, const void* beta_p, void* C,
                    cudaDataType ct, int ldc, const char* api) {
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || k < 0 || !supported(at) || !supported(bt) || ct != CUDA_R_32F ||
        (ta != CUBLAS_OP_N && ta != CUBLAS_OP_T) || (tb != CUBLAS_OP_N && tb != CUBLAS_OP_T))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    const int a_rows = ta == CUBLAS_OP_N ? m : k, a_cols = ta == CUBLAS_OP_N ? k : m;
    const int b_rows = tb == CUBLAS_OP_N ? k : n, b_cols = tb == CUBLAS_OP_N ? n : k;
    if (lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) || ldc < std::max(1, m))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0)
        return CUBLAS_STATUS_SUCCESS;
    if (h->pointer_mode != CUBLAS_POINTER_MODE_HOST)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    const float alpha = *static_cast<const float*>(alpha_p);
    const float beta = *static_cast<const float*>(beta_p);
    std::lock_guard lock(api_mutex());
    if ((k > 0 && (!in_allocation(A, span(a_rows, a_cols, lda, at), MemoryKind::Device) ||
                   !in_allocation(B, span(b_rows, b_cols, ldb, bt), MemoryKind::Device))) ||
        !in_allocation(C, span(m, n, ldc, ct), MemoryKind::Device)) {
        std::fprintf(stderr, "cudasim: %s: an operand is not (wholly) inside device memory\n", api);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    const cudaError_t e = enqueue(h->stream, [=] {
        // op(A) as [m][k] and op(B) as [n][k] rows of fp32, then fp32 dot products.
        std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(n) * k);
        for (int i = 0; i < m; ++i)
            for (int p = 0; p < k; ++p)
                a[size_t(i) * k + p] =
                    element(A, at, ta == CUBLAS_OP_N ? size_t(p) * lda + i : size_t(i) * lda + p);
        for (int j = 0; j < n; ++j)
            for (int p = 0; p < k; ++p)
                b[size_t(j) * k + p] =
                    element(B, bt, tb == CUBLAS_OP_N ? size_t(j) * ldb + p : size_t(p) * ldb + j);
        auto* c = static_cast<float*>(C);
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
                const float* ar = &a[size_t(i) * k];
                const float* br = &b[size_t(j) * k];
                float s = 0.0f;
                for (int p = 0; p < k; ++p)
                    s += ar[p] * br[p];
                float& out = c[size_t(j) * ldc + i];
                out = beta == 0.0f ? alpha * s : alpha * s + beta * out;
            }
    });
    return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

} // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    *handle = new cublasContext();
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    handle->workspace = nullptr; // as in cuBLAS: a new stream resets the user workspace
    handle->workspace_bytes = 0;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void* workspace, size_t bytes) {
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    std::lock_guard lock(api_mutex());
    if (bytes > 0 && !in_allocation(workspace, bytes, MemoryKind::Device))
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->workspace = workspace;
    handle->workspace_bytes = bytes;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) {
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusString(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_SUCCESS:
        return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
        return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_EXECUTION_FAILED:
        return "CUBLAS_STATUS_EXECUTION_FAILED";
    default:
        return "CUBLAS_STATUS_UNKNOWN (cudasim)";
    }
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
                           int n, int k, const float* alpha, const float* A, int lda,
                           const float* B, int ldb, const float* beta, float* C, int ldc) {
    return gemm(handle, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, beta, C,
                CUDA_R_32F, ldc, "cublasSgemm");
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                            int m, int n, int k, const void* alpha, const void* A, cudaDataType at,
                            int lda, const void* B, cudaDataType bt, int ldb, const void* beta,
                            void* C, cudaDataType ct, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t) {
    if (compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_FAST_16F &&
        compute != CUBLAS_COMPUTE_32F_FAST_16BF)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    return gemm(handle, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc,
                "cublasGemmEx");
}
