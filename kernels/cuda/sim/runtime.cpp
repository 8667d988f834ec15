// cudasim: the subset of the CUDA runtime API the backend uses, on host memory.
//
// - Device memory is host memory (256-byte aligned, filled with 0xFF bytes = NaN floats when
//   allocated, as a GPU gives no zeroed memory); a registry of allocations checks every copy,
//   memset and kernel pointer argument and backs cudaMemGetInfo (CUDASIM_MEMORY_MIB, 4096).
// - Work is deferred: launches, async copies and memsets queue up and run, in order, at the next
//   synchronisation (stream/device/event sync, a synchronous copy). A host read of a result
//   without synchronising therefore sees stale data, as it could on a GPU.
// - Stream capture records the work into a graph instead; a graph launch replays it (kernel
//   arguments as captured, memory read at replay). Synchronising or allocating on a thread that
//   captures in global/thread-local mode invalidates the capture, as the real runtime does.
#include "kernels/cuda/sim/runtime.h"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "kernels/cuda/sim/executor.h"

struct CUstream_st {
    unsigned flags = 0;
    bool capturing = false;
    bool capture_invalid = false;
    cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
    std::vector<std::function<void()>> captured;
};
struct CUgraph_st {
    std::vector<std::function<void()>> nodes;
};
struct CUgraphExec_st {
    std::vector<std::function<void()>> nodes;
};
struct CUevent_st {
    std::chrono::steady_clock::time_point when;
    bool recorded = false;
};

namespace cudasim::detail {

namespace {

constexpr size_t kDefaultSharedBytes = 48 * 1024;
constexpr size_t kMaxSharedOptin = 232448; // sm_90: 227 KiB
constexpr int kSmCount = 132;

struct Allocation {
    size_t bytes;
    MemoryKind kind;
};

struct State {
    std::map<uintptr_t, Allocation> allocations; // base -> allocation
    size_t device_bytes = 0;
    size_t total_bytes = 0;
    std::deque<std::function<void()>> queue;
    std::set<CUstream_st*> streams;
    std::map<const void*, int> max_dynamic_shared; // kernel -> cudaFuncSetAttribute value
    int global_captures = 0; // captures in cudaStreamCaptureModeGlobal, any thread
};

State& state() {
    static State* s = [] {
        auto* st = new State();
        size_t mib = 4096;
        if (const char* e = std::getenv("CUDASIM_MEMORY_MIB"); e && *e)
            mib = std::strtoull(e, nullptr, 10);
        st->total_bytes = mib << 20;
        return st;
    }();
    return *s;
}

thread_local cudaError_t t_last_error = cudaSuccess;
thread_local std::vector<CUstream_st*> t_captures; // non-relaxed captures begun on this thread

cudaError_t record(cudaError_t e) {
    if (e != cudaSuccess)
        t_last_error = e;
    return e;
}

// The allocation holding p (or the end of it), if any.
const std::pair<const uintptr_t, Allocation>* find(const void* p) {
    auto& a = state().allocations;
    const auto addr = reinterpret_cast<uintptr_t>(p);
    auto it = a.upper_bound(addr);
    if (it == a.begin())
        return nullptr;
    --it;
    if (addr > it->first + it->second.bytes)
        return nullptr;
    return &*it;
}

bool is_device(const void* p) {
    const auto* a = find(p);
    return a && a->second.kind == MemoryKind::Device;
}

void flush() {
    auto& q = state().queue;
    while (!q.empty()) {
        auto work = std::move(q.front());
        q.pop_front();
        work();
    }
}

// A synchronising or allocating call while this thread (or any, in global mode) captures in a
// strict mode: the real runtime fails it and invalidates the capture.
bool unsafe_during_capture() {
    bool unsafe = state().global_captures > 0;
    for (CUstream_st* s : t_captures)
        if (s->mode != cudaStreamCaptureModeRelaxed)
            unsafe = true;
    if (!unsafe)
        return false;
    for (CUstream_st* s : t_captures)
        s->capture_invalid = true;
    for (CUstream_st* s : state().streams)
        if (s->capturing && s->mode == cudaStreamCaptureModeGlobal)
            s->capture_invalid = true;
    return true;
}

bool valid_stream(cudaStream_t s) {
    return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread ||
           state().streams.count(s) > 0;
}

CUstream_st* real_stream(cudaStream_t s) {
    return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread ? nullptr : s;
}

const char* kind_name(cudaMemcpyKind k) {
    switch (k) {
    case cudaMemcpyHostToHost:
        return "HostToHost";
    case cudaMemcpyHostToDevice:
        return "HostToDevice";
    case cudaMemcpyDeviceToHost:
        return "DeviceToHost";
    case cudaMemcpyDeviceToDevice:
        return "DeviceToDevice";
    case cudaMemcpyDefault:
        return "Default";
    }
    return "?";
}

// Checks a copy like the runtime would, plus the ranges: the error (with a line on stderr) or
// cudaSuccess.
cudaError_t check_copy(void* dst, const void* src, size_t n, cudaMemcpyKind kind, const char* api) {
    if (n == 0)
        return cudaSuccess;
    if (!dst || !src) {
        std::fprintf(stderr, "cudasim: %s: null pointer\n", api);
        return cudaErrorInvalidValue;
    }
    const bool dst_dev = is_device(dst), src_dev = is_device(src);
    const bool want_dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    const bool want_src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind != cudaMemcpyDefault && kind != cudaMemcpyHostToHost &&
        (dst_dev != want_dst_dev || src_dev != want_src_dev)) {
        std::fprintf(
            stderr, "cudasim: %s(%s): the destination is %s memory and the source %s memory\n", api,
            kind_name(kind), dst_dev ? "device" : "host", src_dev ? "device" : "host");
        return cudaErrorInvalidValue;
    }
    if (dst_dev && !in_allocation(dst, n, MemoryKind::Device)) {
        std::fprintf(stderr, "cudasim: %s: %zu bytes to %p run past the end of its allocation\n",
                     api, n, dst);
        return cudaErrorInvalidValue;
    }
    if (src_dev && !in_allocation(src, n, MemoryKind::Device)) {
        std::fprintf(stderr, "cudasim: %s: %zu bytes from %p run past the end of its allocation\n",
                     api, n, src);
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

void* allocate(size_t bytes, size_t align) {
    void* p = nullptr;
    if (posix_memalign(&p, align, bytes) != 0)
        return nullptr;
    std::memset(p, 0xFF, bytes);
    return p;
}

} // namespace

std::recursive_mutex& api_mutex() {
    static std::recursive_mutex m;
    return m;
}

bool in_allocation(const void* p, size_t bytes, MemoryKind kind) {
    const auto* a = find(p);
    if (!a || a->second.kind != kind)
        return false;
    const auto addr = reinterpret_cast<uintptr_t>(p);
    return addr - a->first <= a->second.bytes && bytes <= a->second.bytes - (addr - a->first);
}

void fatal(const char* fmt, ...) {
    std::fprintf(stderr, "cudasim: ");
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "\n");
    std::abort();
}

cudaError_t enqueue(cudaStream_t stream, std::function<void()> work) {
    if (!valid_stream(stream))
        return cudaErrorInvalidResourceHandle;
    CUstream_st* s = real_stream(stream);
    if (s && s->capturing) {
        if (s->capture_invalid)
            return cudaErrorStreamCaptureInvalidated;
        s->captured.push_back(std::move(work));
        return cudaSuccess;
    }
    state().queue.push_back(std::move(work));
    return cudaSuccess;
}

} // namespace cudasim::detail

namespace cudasim {

void launch_kernel(const LaunchSpec& spec, std::function<void()> body) {
    using namespace detail;
    std::lock_guard lock(api_mutex());
    const dim3 g = spec.grid, b = spec.block;
    const unsigned long long threads = 1ull * b.x * b.y * b.z;
    if (g.x == 0 || g.y == 0 || g.z == 0 || threads == 0 || threads > 1024 || b.x > 1024 ||
        b.y > 1024 || b.z > 64 || g.y > 65535 || g.z > 65535 || g.x > 0x7fffffffu) {
        std::fprintf(stderr,
                     "cudasim: launch of %s: invalid configuration grid (%u,%u,%u) block "
                     "(%u,%u,%u)\n",
                     spec.name, g.x, g.y, g.z, b.x, b.y, b.z);
        record(cudaErrorInvalidConfiguration);
        return;
    }
    size_t limit = kDefaultSharedBytes;
    if (auto it = state().max_dynamic_shared.find(spec.fn); it != state().max_dynamic_shared.end())
        limit = static_cast<size_t>(it->second);
    if (spec.shared_bytes > limit) {
        std::fprintf(stderr,
                     "cudasim: launch of %s: %zu bytes of dynamic shared memory, more than "
                     "the %zu the kernel may use (cudaFuncSetAttribute)\n",
                     spec.name, spec.shared_bytes, limit);
        record(cudaErrorInvalidValue);
        return;
    }
    auto run = std::make_shared<KernelRun>(KernelRun{spec, std::move(body)});
    record(enqueue(spec.stream, [run] { execute(*run); }));
}

void check_kernel_pointer(const char* kernel, int index, const void* p) {
    using namespace detail;
    std::lock_guard lock(api_mutex());
    if (!p || find(p))
        return; // device or pinned memory (pinned is device-accessible)
    fatal("kernel %s, argument %d: %p is not device memory (cudaMalloc) nor pinned host memory",
          kernel, index, p);
}

} // namespace cudasim

using namespace cudasim::detail;
using Lock = std::lock_guard<std::recursive_mutex>;

// --- devices and errors -------------------------------------------------------------------------

cudaError_t cudaGetDeviceCount(int* count) {
    if (!count)
        return record(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
    if (!device)
        return record(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
    return device == 0 ? cudaSuccess : record(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
    if (!p)
        return record(cudaErrorInvalidValue);
    if (device != 0)
        return record(cudaErrorInvalidDevice);
    Lock lock(api_mutex());
    std::memset(p, 0, sizeof(*p));
    std::snprintf(p->name, sizeof(p->name), "cudasim (CPU emulation of an sm_90 device)");
    p->totalGlobalMem = state().total_bytes;
    p->sharedMemPerBlock = kDefaultSharedBytes;
    p->sharedMemPerBlockOptin = kMaxSharedOptin;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = kSmCount;
    p->memoryBusWidth = 5120;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
    if (!value)
        return record(cudaErrorInvalidValue);
    if (device != 0)
        return record(cudaErrorInvalidDevice);
    switch (attr) {
    case cudaDevAttrMultiProcessorCount:
        *value = kSmCount;
        return cudaSuccess;
    case cudaDevAttrMemoryClockRate:
        *value = 2619000;
        return cudaSuccess; // kHz
    case cudaDevAttrGlobalMemoryBusWidth:
        *value = 5120;
        return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
        *value = kMaxSharedOptin;
        return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlock:
        *value = kDefaultSharedBytes;
        return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor:
        *value = 9;
        return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
        *value = 0;
        return cudaSuccess;
    case cudaDevAttrWarpSize:
        *value = 32;
        return cudaSuccess;
    case cudaDevAttrMaxThreadsPerBlock:
        *value = 1024;
        return cudaSuccess;
    default:
        return record(cudaErrorInvalidValue);
    }
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
    if (!free || !total)
        return record(cudaErrorInvalidValue);
    Lock lock(api_mutex());
    *total = state().total_bytes;
    *free = state().total_bytes - std::min(state().total_bytes, state().device_bytes);
    return cudaSuccess;
}

cudaError_t cudaGetLastError() {
    const cudaError_t e = t_last_error;
    t_last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError() {
    return t_last_error;
}

const char* cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess:
        return "cudaSuccess";
    case cudaErrorInvalidValue:
        return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
        return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration:
        return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice:
        return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle:
        return "cudaErrorInvalidResourceHandle";
    case cudaErrorStreamCaptureUnsupported:
        return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated:
        return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorIllegalState:
        return "cudaErrorIllegalState";
    default:
        return "cudaErrorUnknown";
    }
}

const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess:
        return "no error";
    case cudaErrorInvalidValue:
        return "invalid argument";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorInvalidConfiguration:
        return "invalid configuration argument";
    case cudaErrorInvalidDevice:
        return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle:
        return "invalid resource handle";
    case cudaErrorStreamCaptureUnsupported:
        return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated:
        return "operation failed due to a previous error during capture";
    case cudaErrorIllegalState:
        return "the operation cannot be performed in the present state";
    default:
        return "unknown error (cudasim)";
    }
}

cudaError_t cudaDeviceSynchronize() {
    Lock lock(api_mutex());
    if (unsafe_during_capture())
        return record(cudaErrorStreamCaptureUnsupported);
    flush();
    return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
    Lock lock(api_mutex());
    if (!func)
        return record(cudaErrorInvalidDeviceFunction);
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || static_cast<size_t>(value) > kMaxSharedOptin)
            return record(cudaErrorInvalidValue);
        state().max_dynamic_shared[func] = value;
        return cudaSuccess;
    }
    return cudaSuccess; // other attributes are hints
}

// --- memory -------------------------------------------------------------------------------------

static cudaError_t allocate_kind(void** p, size_t bytes, MemoryKind kind) {
    if (!p)
        return record(cudaErrorInvalidValue);
    Lock lock(api_mutex());
    *p = nullptr;
    if (unsafe_during_capture())
        return record(cudaErrorStreamCaptureUnsupported);
    if (bytes == 0)
        return cudaSuccess;
    State& st = state();
    if (kind == MemoryKind::Device &&
        bytes > st.total_bytes - std::min(st.total_bytes, st.device_bytes))
        return record(cudaErrorMemoryAllocation);
    void* mem = allocate(bytes, kind == MemoryKind::Device ? 256 : 4096);
    if (!mem)
        return record(cudaErrorMemoryAllocation);
    st.allocations[reinterpret_cast<uintptr_t>(mem)] = Allocation{bytes, kind};
    if (kind == MemoryKind::Device)
        st.device_bytes += bytes;
    *p = mem;
    return cudaSuccess;
}

static cudaError_t free_kind(void* p, MemoryKind kind) {
    if (!p)
        return cudaSuccess;
    Lock lock(api_mutex());
    if (unsafe_during_capture())
        return record(cudaErrorStreamCaptureUnsupported);
    flush(); // cudaFree synchronises
    State& st = state();
    auto it = st.allocations.find(reinterpret_cast<uintptr_t>(p));
    if (it == st.allocations.end() || it->second.kind != kind) {
        std::fprintf(stderr, "cudasim: %s of %p, which is not the start of a live allocation\n",
                     kind == MemoryKind::Device ? "cudaFree" : "cudaFreeHost", p);
        return record(cudaErrorInvalidValue);
    }
    if (kind == MemoryKind::Device)
        st.device_bytes -= it->second.bytes;
    st.allocations.erase(it);
    std::free(p);
    return cudaSuccess;
}

cudaError_t cudaMalloc(void** p, size_t bytes) {
    return allocate_kind(p, bytes, MemoryKind::Device);
}
cudaError_t cudaFree(void* p) {
    return free_kind(p, MemoryKind::Device);
}
cudaError_t cudaMallocHost(void** p, size_t bytes) {
    return allocate_kind(p, bytes, MemoryKind::Pinned);
}
cudaError_t cudaFreeHost(void* p) {
    return free_kind(p, MemoryKind::Pinned);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
    Lock lock(api_mutex());
    if (const cudaError_t e = check_copy(dst, src, n, kind, "cudaMemcpy"); e != cudaSuccess)
        return record(e);
    if (unsafe_during_capture())
        return record(cudaErrorStreamCaptureUnsupported);
    flush();
    if (n)
        std::memmove(dst, src, n);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                            cudaStream_t stream) {
    Lock lock(api_mutex());
    if (const cudaError_t e = check_copy(dst, src, n, kind, "cudaMemcpyAsync"); e != cudaSuccess)
        return record(e);
    if (n == 0)
        return cudaSuccess;
    const bool src_pageable = !find(src);
    const bool dst_pageable = !find(dst);
    CUstream_st* s = real_stream(stream);
    const bool capturing = s && s->capturing;
    if (src_pageable && !capturing) {
        // From pageable memory the copy is staged when called: the caller may reuse the buffer.
        auto staged = std::make_shared<std::vector<unsigned char>>(
            static_cast<const unsigned char*>(src), static_cast<const unsigned char*>(src) + n);
        return record(
            enqueue(stream, [dst, staged] { std::memcpy(dst, staged->data(), staged->size()); }));
    }
    if (dst_pageable && !capturing) {
        // To pageable memory the call returns when the copy is done.
        flush();
        std::memmove(dst, src, n);
        return cudaSuccess;
    }
    return record(enqueue(stream, [dst, src, n] { std::memmove(dst, src, n); }));
}

static cudaError_t memset_impl(void* p, int value, size_t n, cudaStream_t stream, const char* api) {
    Lock lock(api_mutex());
    if (n == 0)
        return cudaSuccess;
    if (!in_allocation(p, n, MemoryKind::Device)) {
        std::fprintf(stderr, "cudasim: %s of %zu bytes at %p: not inside one device allocation\n",
                     api, n, p);
        return record(cudaErrorInvalidValue);
    }
    return record(enqueue(stream, [p, value, n] { std::memset(p, value, n); }));
}

cudaError_t cudaMemset(void* p, int value, size_t n) {
    return memset_impl(p, value, n, nullptr, "cudaMemset");
}
cudaError_t cudaMemsetAsync(void* p, int value, size_t n, cudaStream_t stream) {
    return memset_impl(p, value, n, stream, "cudaMemsetAsync");
}

// --- streams, events, graphs --------------------------------------------------------------------

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags) {
    if (!s)
        return record(cudaErrorInvalidValue);
    Lock lock(api_mutex());
    auto* st = new CUstream_st();
    st->flags = flags;
    state().streams.insert(st);
    *s = st;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* s) {
    return cudaStreamCreateWithFlags(s, 0);
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
    Lock lock(api_mutex());
    if (!s || !state().streams.count(s))
        return record(cudaErrorInvalidResourceHandle);
    if (s->capturing)
        return record(cudaErrorIllegalState);
    flush();
    state().streams.erase(s);
    delete s;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    Lock lock(api_mutex());
    if (!valid_stream(stream))
        return record(cudaErrorInvalidResourceHandle);
    CUstream_st* s = real_stream(stream);
    if ((s && s->capturing) || unsafe_during_capture()) {
        if (s)
            s->capture_invalid = true;
        return record(cudaErrorStreamCaptureUnsupported);
    }
    flush();
    return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
    Lock lock(api_mutex());
    CUstream_st* s = real_stream(stream);
    if (!s || !state().streams.count(s))
        return record(cudaErrorStreamCaptureUnsupported);
    if (s->capturing)
        return record(cudaErrorIllegalState);
    s->capturing = true;
    s->capture_invalid = false;
    s->mode = mode;
    s->captured.clear();
    if (mode == cudaStreamCaptureModeGlobal)
        ++state().global_captures;
    t_captures.push_back(s);
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
    Lock lock(api_mutex());
    if (!graph)
        return record(cudaErrorInvalidValue);
    *graph = nullptr;
    CUstream_st* s = real_stream(stream);
    if (!s || !s->capturing)
        return record(cudaErrorIllegalState);
    s->capturing = false;
    if (s->mode == cudaStreamCaptureModeGlobal)
        --state().global_captures;
    std::erase(t_captures, s);
    auto nodes = std::move(s->captured);
    s->captured.clear();
    if (s->capture_invalid)
        return record(cudaErrorStreamCaptureInvalidated);
    auto* g = new CUgraph_st();
    g->nodes = std::move(nodes);
    *graph = g;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
    if (!exec || !graph)
        return record(cudaErrorInvalidValue);
    Lock lock(api_mutex());
    auto* e = new CUgraphExec_st();
    e->nodes = graph->nodes;
    *exec = e;
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
    if (!exec)
        return record(cudaErrorInvalidValue);
    Lock lock(api_mutex());
    for (const auto& node : exec->nodes)
        if (const cudaError_t e = enqueue(stream, node); e != cudaSuccess)
            return record(e);
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    delete graph;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    delete exec;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* e) {
    if (!e)
        return record(cudaErrorInvalidValue);
    *e = new CUevent_st();
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
    delete e;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t stream) {
    if (!e)
        return record(cudaErrorInvalidResourceHandle);
    Lock lock(api_mutex());
    return record(enqueue(stream, [e] {
        e->when = std::chrono::steady_clock::now();
        e->recorded = true;
    }));
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    if (!e)
        return record(cudaErrorInvalidResourceHandle);
    Lock lock(api_mutex());
    if (unsafe_during_capture())
        return record(cudaErrorStreamCaptureUnsupported);
    flush();
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (!ms || !start || !end)
        return record(cudaErrorInvalidValue);
    if (!start->recorded || !end->recorded)
        return record(cudaErrorInvalidResourceHandle);
    *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
    return cudaSuccess;
}
