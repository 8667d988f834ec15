// DeviceBuffer / PinnedBuffer: owning cudaMalloc / cudaMallocHost allocations that grow on demand
// (never through managed memory). ensure() reports whether the address changed, so that callers
// can drop CUDA graphs that captured the old address.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

namespace llmwb::cuda {

class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    ~DeviceBuffer() { reset(); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

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
        cudaError_t e = cudaMalloc(&ptr_, bytes);
        if (e != cudaSuccess) {
            ptr_ = nullptr;
            err = "cudaMalloc of " + std::to_string(bytes >> 20) + " MiB: " +
                  cudaGetErrorString(e);
            return false;
        }
        bytes_ = bytes;
        return true;
    }
    void reset() {
        if (ptr_)
            cudaFree(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }
    void* get() const { return ptr_; }
    template <class T>
    T* as() const {
        return static_cast<T*>(ptr_);
    }
    size_t bytes() const { return bytes_; }
    // Hands the allocation over (the swap of a KV pool resize).
    void swap(DeviceBuffer& o) {
        std::swap(ptr_, o.ptr_);
        std::swap(bytes_, o.bytes_);
    }

  private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

class PinnedBuffer {
  public:
    PinnedBuffer() = default;
    ~PinnedBuffer() { reset(); }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;

    bool ensure(size_t bytes, std::string& err) {
        if (bytes <= bytes_ && ptr_)
            return true;
        reset();
        if (bytes == 0)
            return true;
        cudaError_t e = cudaMallocHost(&ptr_, bytes);
        if (e != cudaSuccess) {
            ptr_ = nullptr;
            err = "cudaMallocHost of " + std::to_string(bytes >> 20) + " MiB: " +
                  cudaGetErrorString(e);
            return false;
        }
        bytes_ = bytes;
        return true;
    }
    void reset() {
        if (ptr_)
            cudaFreeHost(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }
    void* get() const { return ptr_; }
    template <class T>
    T* as() const {
        return static_cast<T*>(ptr_);
    }

  private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

} // namespace llmwb::cuda
