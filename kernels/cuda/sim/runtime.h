// cudasim runtime internals shared by the CUDA runtime API (runtime.cpp) and the cuBLAS subset
// (cublas.cpp). Not part of any public interface.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <mutex>

namespace cudasim::detail {

// Every API entry point holds this lock; work runs under it too.
std::recursive_mutex& api_mutex();

enum class MemoryKind { Device, Pinned };

// True when [p, p + bytes) lies inside one live allocation of `kind`.
bool in_allocation(const void* p, size_t bytes, MemoryKind kind);

// Enqueues work on `stream` (0: the legacy stream). Work runs in enqueue order at the next
// synchronisation, or is recorded into the graph when the stream is capturing. Returns the error
// a real runtime would (e.g. the stream was destroyed, or the capture was invalidated).
cudaError_t enqueue(cudaStream_t stream, std::function<void()> work);

// Reports a misuse the real device would fault on (out-of-range copy, host pointer in a kernel)
// and aborts: in an emulated run such a bug must stop the test with its location.
[[noreturn]] void fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace cudasim::detail
