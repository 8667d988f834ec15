// cudasim, device side: what a kernel source sees when it is compiled as plain C++ for the CPU
// emulator of the CUDA backend (LLMWB_CUDASIM; see kernels/cuda/sim/README.md).
//
// The real CUDA host headers provide the types (dim3, float4, __half, cudaStream_t, ...); this
// header adds the device built-ins: threadIdx / blockIdx / blockDim / gridDim, __syncthreads,
// __syncwarp, the warp shuffles, the few intrinsics the kernels use, __shared__ memory, and
// Launch, which LLMWB_LAUNCH (kernels/cuda/ops/launch.cuh) expands to instead of <<<...>>>.
//
// Every emulated CUDA thread runs on its own fiber; a thread block's fibers run on one host
// thread and switch only at barriers (__syncthreads, __syncwarp, shuffles), which therefore
// have CUDA's semantics: a barrier reached by only part of its threads is reported, as is a
// shuffle with a lane that has exited.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace cudasim {

// The emulated thread that is running (valid only inside a kernel).
struct ThreadState {
    uint3 idx{};         // threadIdx
    unsigned linear = 0; // x + y * dim.x + z * dim.x * dim.y
    unsigned warp = 0, lane = 0;
};
struct BlockState {
    uint3 idx{}; // blockIdx
    dim3 dim;    // blockDim
    dim3 grid;   // gridDim
    void* dynamic_shared = nullptr;
};
// Device code runs only inside a synchronisation, under the runtime's lock: one host thread at a
// time runs kernels, so the running thread and block are plain globals (thread-locals would
// cost a __tls_get_addr call per threadIdx in the dlopen'ed emulator plugin).
extern ThreadState* g_thread;
extern BlockState* g_block;

void syncthreads();
void syncwarp(unsigned mask);
enum class Shfl { Xor, Idx, Down, Up };
uint64_t shuffle_bits(unsigned mask, uint64_t bits, int arg, int width, Shfl kind);

template <class T> T shuffle(unsigned mask, T v, int arg, int width, Shfl kind) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shuffles move <= 8 bytes");
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    b = shuffle_bits(mask, b, arg, width, kind);
    T r;
    std::memcpy(&r, &b, sizeof(T));
    return r;
}

inline void* dynamic_shared() {
    return g_block->dynamic_shared;
}

// True when every lane of the (full) warp passes the same v; a warp collective.
bool warp_uniform(uint64_t v);

// For work every lane of a warp would do identically right after a warp collective (WMMA): the
// first lane to run computes into a per-warp buffer of up to kWarpOnceBytes, the others copy it.
constexpr size_t kWarpOnceBytes = 4096;
struct WarpOnceSlot {
    uint64_t* tag;       // the generation the buffer holds
    unsigned char* data; // kWarpOnceBytes, 64-byte aligned
    uint64_t generation; // of the warp collective that just completed
};
WarpOnceSlot warp_once_slot();

template <class F> void warp_once(void* out, size_t bytes, F&& compute) {
    const WarpOnceSlot s = warp_once_slot();
    if (*s.tag != s.generation) {
        compute(s.data);
        *s.tag = s.generation;
    }
    std::memcpy(out, s.data, bytes);
}

// --- launches -----------------------------------------------------------------------------------
struct LaunchSpec {
    const char* name; // the kernel expression as written at the launch site
    const void* fn;   // identifies the kernel (cudaFuncSetAttribute)
    dim3 grid, block;
    size_t shared_bytes;
    cudaStream_t stream;
};
// Validates the configuration (as a real launch does; failures become cudaGetLastError()) and
// enqueues `body`, which runs one thread of the kernel, on the stream.
void launch_kernel(const LaunchSpec& spec, std::function<void()> body);
// A pointer argument of a kernel must be null or point into memory the device can reach
// (cudaMalloc, cudaMallocHost); anything else is reported and aborts, naming the argument.
void check_kernel_pointer(const char* kernel, int index, const void* p);

template <class... P> class Launch {
  public:
    Launch(const char* name, dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
           void (*fn)(P...))
        : spec_{name, reinterpret_cast<const void*>(fn), grid, block, shared_bytes, stream},
          fn_(fn) {}

    template <class... A> void operator()(A&&... a) const {
        static_assert(sizeof...(A) == sizeof...(P), "kernel argument count");
        // Arguments are copied at the launch, as CUDA copies kernel parameters.
        auto args = std::make_shared<std::tuple<std::decay_t<P>...>>(
            static_cast<std::decay_t<P>>(std::forward<A>(a))...);
        check_pointers(*args, std::index_sequence_for<P...>{});
        auto fn = fn_;
        launch_kernel(spec_, [fn, args] { std::apply(fn, *args); });
    }

  private:
    template <class Tuple, size_t... I>
    void check_pointers(const Tuple& t, std::index_sequence<I...>) const {
        (check_one(static_cast<int>(I), std::get<I>(t)), ...);
    }
    template <class T> void check_one(int index, const T& v) const {
        if constexpr (std::is_pointer_v<T>)
            check_kernel_pointer(spec_.name, index, static_cast<const void*>(v));
    }

    LaunchSpec spec_;
    void (*fn_)(P...);
};

} // namespace cudasim

// --- built-ins ----------------------------------------------------------------------------------
#define threadIdx (::cudasim::g_thread->idx)
#define blockIdx (::cudasim::g_block->idx)
#define blockDim (::cudasim::g_block->dim)
#define gridDim (::cudasim::g_block->grid)

// Shared memory: one instance, and blocks run one at a time.
#undef __shared__
#define __shared__ static
#undef __launch_bounds__
#define __launch_bounds__(...)

inline void __syncthreads() {
    ::cudasim::syncthreads();
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
    ::cudasim::syncwarp(mask);
}

template <class T> inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
    return ::cudasim::shuffle(mask, v, lane_mask, width, ::cudasim::Shfl::Xor);
}
template <class T> inline T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32) {
    return ::cudasim::shuffle(mask, v, src_lane, width, ::cudasim::Shfl::Idx);
}
template <class T> inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    return ::cudasim::shuffle(mask, v, static_cast<int>(delta), width, ::cudasim::Shfl::Down);
}
template <class T> inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    return ::cudasim::shuffle(mask, v, static_cast<int>(delta), width, ::cudasim::Shfl::Up);
}

// The typed overload nvcc's headers provide for kernels (the host headers only have const void*).
template <class... P>
inline cudaError_t cudaFuncSetAttribute(void (*kernel)(P...), cudaFuncAttribute attr, int value) {
    return ::cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), attr, value);
}

inline float __uint_as_float(unsigned v) {
    float f;
    std::memcpy(&f, &v, 4);
    return f;
}
inline unsigned __float_as_uint(float f) {
    unsigned v;
    std::memcpy(&v, &f, 4);
    return v;
}
inline float __int_as_float(int v) {
    return __uint_as_float(static_cast<unsigned>(v));
}
inline int __float_as_int(float f) {
    return static_cast<int>(__float_as_uint(f));
}
inline float rsqrtf(float x) {
    return 1.0f / std::sqrt(x);
}
inline float __expf(float x) {
    return std::exp(x);
}
inline float __fdividef(float a, float b) {
    return a / b;
}
template <class T> inline T __ldg(const T* p) {
    return *p;
}
