#include "engine/runtime/host_memory.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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

} // namespace llmwb
