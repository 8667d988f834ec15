#include <cstdio>
#include <cstring>

#include "kernels/cuda/ops/common.cuh"

namespace llmwb::cuda {

namespace {
thread_local char g_last_error[512] = "";
}

const char* op_status_name(OpStatus s) {
    switch (s) {
    case OpStatus::Ok:
        return "ok";
    case OpStatus::InvalidArgument:
        return "invalid argument";
    case OpStatus::WorkspaceTooSmall:
        return "workspace too small";
    case OpStatus::CudaError:
        return "CUDA error";
    case OpStatus::BlasError:
        return "cuBLAS error";
    }
    return "?";
}

const char* last_error_message() {
    return g_last_error;
}

namespace detail {

void set_error(const char* op, const char* msg) {
    std::snprintf(g_last_error, sizeof(g_last_error), "%s: %s", op, msg);
}

OpStatus check_launch(const char* op) {
    const cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        return OpStatus::Ok;
    set_error(op, cudaGetErrorString(e));
    return OpStatus::CudaError;
}

} // namespace detail
} // namespace llmwb::cuda
