#include "engine/runtime/host_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace llmwb {

int64_t physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0)
        return 0;
    return static_cast<int64_t>(pages) * page;
}

int64_t available_memory_bytes() {
    // MemAvailable counts reclaimable page cache (e.g. a mapped model file read once), which
    // _SC_AVPHYS_PAGES (MemFree) does not.
    if (FILE* f = std::fopen("/proc/meminfo", "r")) {
        char line[256];
        long long kib = -1;
        while (std::fgets(line, sizeof line, f))
            if (std::strncmp(line, "MemAvailable:", 13) == 0) {
                kib = std::strtoll(line + 13, nullptr, 10);
                break;
            }
        std::fclose(f);
        if (kib >= 0)
            return static_cast<int64_t>(kib) * 1024;
    }
    const long avail = sysconf(_SC_AVPHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    if (avail <= 0 || page <= 0)
        return 0;
    return static_cast<int64_t>(avail) * page;
}

int64_t resident_memory_bytes() {
    long long size = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%lld %lld", &size, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    const long page = sysconf(_SC_PAGE_SIZE);
    return resident > 0 && page > 0 ? static_cast<int64_t>(resident) * page : 0;
}

LazyHostBuffer::LazyHostBuffer(size_t bytes) {
    if (bytes == 0)
        return;
    // MAP_NORESERVE: no swap is reserved up front either; pages come zero-filled on first touch.
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;
    data_ = p;
    bytes_ = bytes;
}

LazyHostBuffer::~LazyHostBuffer() {
    release();
}

LazyHostBuffer::LazyHostBuffer(LazyHostBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

LazyHostBuffer& LazyHostBuffer::operator=(LazyHostBuffer&& o) noexcept {
    if (this != &o) {
        release();
        data_ = std::exchange(o.data_, nullptr);
        bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
}

void LazyHostBuffer::release() {
    if (data_)
        munmap(data_, bytes_);
    data_ = nullptr;
    bytes_ = 0;
}

} // namespace llmwb
