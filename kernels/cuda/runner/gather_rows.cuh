// The row-gather kernel of model_runner.cu (the logits rows) and model_runner_moe.cu (the tokens
// routed to one expert): one source, a file-local copy in each (anonymous namespace).
#pragma once

#include <cstdint>

#include "kernels/cuda/ops/launch.cuh"

namespace llmwb::cuda {
namespace {

// out[i][:] = x[rows[i]][:], i < n.
__global__ void gather_rows_kernel(float* __restrict__ out, const float* __restrict__ x,
                                   const int32_t* __restrict__ rows, int32_t n, int32_t dim) {
    const int32_t i = blockIdx.x;
    if (i >= n)
        return;
    const float* src = x + static_cast<int64_t>(rows[i]) * dim;
    float* dst = out + static_cast<int64_t>(i) * dim;
    for (int32_t c = threadIdx.x; c < dim; c += blockDim.x)
        dst[c] = src[c];
}

} // namespace
} // namespace llmwb::cuda
