#include "kernels/cuda/ops/blas.cuh"

#include "kernels/cuda/ops/common.cuh"

namespace llmwb::cuda {

namespace detail {

OpStatus blas_check(const char* op, cublasStatus_t st) {
    if (st == CUBLAS_STATUS_SUCCESS)
        return OpStatus::Ok;
    set_error(op, cublasGetStatusString(st));
    return OpStatus::BlasError;
}

OpStatus blas_bind(BlasContext& ctx, cudaStream_t stream) {
    if (ctx.stream == stream)
        return OpStatus::Ok;
    OpStatus s = blas_check("cublasSetStream", cublasSetStream(ctx.handle, stream));
    if (s != OpStatus::Ok)
        return s;
    s = blas_check("cublasSetWorkspace",
                   cublasSetWorkspace(ctx.handle, ctx.workspace, ctx.workspace_bytes));
    if (s != OpStatus::Ok)
        return s;
    ctx.stream = stream;
    return OpStatus::Ok;
}

} // namespace detail

OpStatus blas_create(BlasContext** out, cudaStream_t stream, size_t workspace_bytes) {
    *out = nullptr;
    auto* ctx = new BlasContext;
    ctx->workspace_bytes = workspace_bytes ? workspace_bytes : (size_t{32} << 20);
    const cudaError_t e = cudaMalloc(&ctx->workspace, ctx->workspace_bytes);
    if (e != cudaSuccess) {
        detail::set_error("blas_create", cudaGetErrorString(e));
        delete ctx;
        return OpStatus::CudaError;
    }
    OpStatus s = detail::blas_check("cublasCreate", cublasCreate(&ctx->handle));
    if (s == OpStatus::Ok)
        s = detail::blas_check("cublasSetPointerMode",
                               cublasSetPointerMode(ctx->handle, CUBLAS_POINTER_MODE_HOST));
    if (s == OpStatus::Ok) {
        ctx->stream = reinterpret_cast<cudaStream_t>(~uintptr_t{0}); // force the first bind
        s = detail::blas_bind(*ctx, stream);
    }
    if (s != OpStatus::Ok) {
        blas_destroy(ctx);
        return s;
    }
    *out = ctx;
    return OpStatus::Ok;
}

void blas_destroy(BlasContext* ctx) {
    if (!ctx)
        return;
    cudaDeviceSynchronize();
    if (ctx->handle)
        cublasDestroy(ctx->handle);
    if (ctx->workspace)
        cudaFree(ctx->workspace);
    delete ctx;
}

} // namespace llmwb::cuda
