// What the runner's .cu files share: the CUDA error check of a ModelRunner member (LLMWB_CU: on
// an error, `err` names the call and the function returns false). Included by .cu files only.
#pragma once

#include <string>

#include "kernels/cuda/ops/launch.cuh"

namespace llmwb::cuda {
namespace {

inline std::string cuda_text(const char* what, cudaError_t e) {
    return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

} // namespace
} // namespace llmwb::cuda

#define LLMWB_CU(call, what)                                                                       \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            err = cuda_text(what, e_);                                                             \
            return false;                                                                          \
        }                                                                                          \
    } while (0)
