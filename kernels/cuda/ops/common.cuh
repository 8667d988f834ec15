// Internal helpers shared by the op sources (not part of the public header).
#pragma once

#include <cstdint>

#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/launch.cuh"

namespace llmwb::cuda::detail {

// Records msg (+ the CUDA error text) as this thread's last error message.
void set_error(const char* op, const char* msg);

// Checks the launch just enqueued: Ok, or CudaError with the message recorded.
OpStatus check_launch(const char* op);

inline OpStatus invalid(const char* op, const char* msg) {
    set_error(op, msg);
    return OpStatus::InvalidArgument;
}

constexpr int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

// Grid size for n elements with `threads` per block and a grid-stride loop: capped so that the
// grid x dimension stays far below its limit.
inline unsigned grid_for(int64_t n, int threads) {
    const int64_t blocks = ceil_div(n, threads);
    return static_cast<unsigned>(blocks < 65535 ? (blocks < 1 ? 1 : blocks) : 65535);
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

} // namespace llmwb::cuda::detail
