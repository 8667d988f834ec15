// This machine's memory, for memory plans on the CPU backend, and lazily committed host buffers
// for the CPU KV pool.
#pragma once

#include <cstddef>
#include <cstdint>

namespace llmwb {

// Physical memory of this machine in bytes (0 if unknown).
int64_t physical_memory_bytes();
// Memory available to a new allocation now (Linux MemAvailable; 0 if unknown).
int64_t available_memory_bytes();
// Resident set size of this process in bytes (Linux /proc/self/statm; 0 if unknown).
int64_t resident_memory_bytes();

// A zero-filled buffer reserved with an anonymous private mapping: the OS commits a page only
// when it is first written, so reserving a large KV pool costs address space, not RAM or time
// (a pool of 8,192 blocks holding one short chat uses the RAM of that chat's blocks). Reading an
// unwritten page yields zeros. Move-only.
class LazyHostBuffer {
  public:
    LazyHostBuffer() = default;
    // nullptr data() when bytes == 0 or the mapping failed (check ok()).
    explicit LazyHostBuffer(size_t bytes);
    ~LazyHostBuffer();
    LazyHostBuffer(LazyHostBuffer&& o) noexcept;
    LazyHostBuffer& operator=(LazyHostBuffer&& o) noexcept;
    LazyHostBuffer(const LazyHostBuffer&) = delete;
    LazyHostBuffer& operator=(const LazyHostBuffer&) = delete;

    bool ok() const { return data_ != nullptr; }
    void* data() const { return data_; }
    size_t size() const { return bytes_; }

  private:
    void release();
    void* data_ = nullptr;
    size_t bytes_ = 0;
};

} // namespace llmwb
