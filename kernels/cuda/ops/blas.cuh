// The cuBLAS context behind the opaque llmwb::cuda::BlasContext (internal).
#pragma once

#include <cublas_v2.h>

#include "kernels/cuda/ops/cuda_ops.h"

namespace llmwb::cuda {

struct BlasContext {
    cublasHandle_t handle = nullptr;
    cudaStream_t stream = nullptr;
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
};

namespace detail {

// Points the handle at `stream` (re-setting the workspace, which cublasSetStream resets).
OpStatus blas_bind(BlasContext& ctx, cudaStream_t stream);

OpStatus blas_check(const char* op, cublasStatus_t st);

} // namespace detail
} // namespace llmwb::cuda
