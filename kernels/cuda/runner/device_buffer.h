// DeviceBuffer / PinnedBuffer: owning cudaMalloc / cudaMallocHost allocations that grow on demand
// (never through managed memory). ensure() reports whether the address changed, so that callers
// can drop CUDA graphs that captured the old address.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

namespace llmwb::cuda {

namespace detail {

struct DeviceMemory {
    static constexpr const char* kAlloc = "cudaMalloc";
    static cudaError_t allocate(void** p, size_t bytes) { return cudaMalloc(p, bytes); }
    static void release(void* p) { cudaFree(p); }
};

struct PinnedMemory {
    static constexpr const char* kAlloc = "cudaMallocHost";
    static cudaError_t allocate(void** p, size_t bytes) { return cudaMallocHost(p, bytes); }
    static void release(void* p) { cudaFreeHost(p); }
};

// One owning allocation of memory kind M that grows on demand.
template <class M> class CudaBuffer {
  public:
    CudaBuffer() = default;
    ~CudaBuffer() { reset(); }
    CudaBuffer(const CudaBuffer&) = delete;
    CudaBuffer& operator=(const CudaBuffer&) = delete;

    // Makes room for `bytes` (contents are lost when it grows). False on allocation failure
    // (the old allocation is gone; err says why). *moved: the address changed.
    bool ensure(size_t bytes, bool* moved, std::string& err) {
        if (bytes <= bytes_ && ptr_)
            return true;
        reset();
        if (moved)
            *moved = true;
        if (bytes == 0)
            return true;
        cudaError_t e = M::allocate(&ptr_, bytes);
        if (e != cudaSuccess) {
            ptr_ = nullptr;
            // An allocation failure is not sticky, but it stays the runtime's last error: clear
            // it, or the next launch check (cudaGetLastError) reports it as that launch's.
            cudaGetLastError();
            err = std::string(M::kAlloc) + " of " + std::to_string(bytes >> 20) +
                  " MiB: " + cudaGetErrorString(e);
            return false;
        }
        bytes_ = bytes;
        return true;
    }
    bool ensure(size_t bytes, std::string& err) { return ensure(bytes, nullptr, err); }
    void reset() {
        if (ptr_)
            M::release(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }
    void* get() const { return ptr_; }
    template <class T> T* as() const { return static_cast<T*>(ptr_); }
    size_t bytes() const { return bytes_; }
    // Hands the allocation over (the swap of a KV pool resize).
    void swap(CudaBuffer& o) {
        std::swap(ptr_, o.ptr_);
        std::swap(bytes_, o.bytes_);
    }

  private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

} // namespace detail

using DeviceBuffer = detail::CudaBuffer<detail::DeviceMemory>;
using PinnedBuffer = detail::CudaBuffer<detail::PinnedMemory>;

} // namespace llmwb::cuda
