// Kernel launches and dynamic shared memory, spelled so that one source compiles both with nvcc
// (real launches) and as plain C++ against the CPU emulator in kernels/cuda/sim (LLMWB_CUDASIM),
// which runs the same kernels in CI where no GPU is present.
//
//   LLMWB_LAUNCH(grid, block, shared_bytes, stream, kernel<T, N>)(args...);
//   LLMWB_DYNAMIC_SHARED(float, smem);   // extern __shared__ float smem[]
#pragma once

#include <cuda_runtime.h>

#ifdef LLMWB_CUDASIM
#include "kernels/cuda/sim/device.h"
#define LLMWB_LAUNCH(grid, block, shared_bytes, stream, ...)                                       \
    ::cudasim::Launch(#__VA_ARGS__, grid, block, shared_bytes, stream, &__VA_ARGS__)
#define LLMWB_DYNAMIC_SHARED(type, name)                                                           \
    type* name = static_cast<type*>(::cudasim::dynamic_shared())
#else
#define LLMWB_LAUNCH(grid, block, shared_bytes, stream, ...)                                       \
    __VA_ARGS__<<<grid, block, shared_bytes, stream>>>
#define LLMWB_DYNAMIC_SHARED(type, name) extern __shared__ __align__(128) type name[]
#endif
