// The CPU emulator of the CUDA backend (kernels/cuda/sim) keeps the semantics the real device has
// where the backend's correctness depends on them: barriers and shuffles, deferred (asynchronous)
// execution, graph capture and replay, launch-configuration and copy errors; and it stops with a
// clear message on the bugs a GPU would fault or hang on (a barrier in divergent code, a shuffle
// with an exited lane, a host pointer passed to a kernel). Test kernels are written here with
// the same LLMWB_LAUNCH spelling as the backend's.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cuda/ops/launch.cuh"
#include "support/mini_test.h"

namespace {

__global__ void shuffle_kernel(int* out) {
    const int lane = threadIdx.x % 32;
    const int v = 100 * static_cast<int>(threadIdx.x / 32) + lane;
    int* o = out + threadIdx.x * 4;
    o[0] = __shfl_xor_sync(0xffffffffu, v, 5);
    o[1] = __shfl_down_sync(0xffffffffu, v, 3);
    o[2] = __shfl_up_sync(0xffffffffu, v, 2);
    o[3] = __shfl_sync(0xffffffffu, v, 7, 16); // lane 7 of each half-warp
}

__device__ float block_sum(float v) {
    __shared__ float partial[32];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w)
        total += partial[w];
    __syncthreads();
    return total;
}

// Per block: out[block] = sum of in[block * blockDim + t]; then every thread reverses its block's
// slice through dynamic shared memory.
__global__ void sum_and_reverse_kernel(float* sums, float* rev, const float* in) {
    LLMWB_DYNAMIC_SHARED(float, buf);
    const int n = static_cast<int>(blockDim.x);
    const float x = in[blockIdx.x * n + threadIdx.x];
    const float s = block_sum(x);
    if (threadIdx.x == 0)
        sums[blockIdx.x] = s;
    buf[threadIdx.x] = x;
    __syncthreads();
    rev[blockIdx.x * n + threadIdx.x] = buf[n - 1 - static_cast<int>(threadIdx.x)];
}

__global__ void add_kernel(int* p, int v) {
    p[threadIdx.x] += v;
}

__global__ void big_shared_kernel(int* p) {
    LLMWB_DYNAMIC_SHARED(int, buf);
    buf[threadIdx.x] = 1;
    p[threadIdx.x] = buf[threadIdx.x];
}

__global__ void divergent_barrier_kernel(int* p) {
    if (threadIdx.x < 32)
        __syncthreads(); // the other warps never arrive
    p[threadIdx.x] = 1;
}

__global__ void mixed_barrier_kernel(int* p) {
    // Half of each warp waits for the block, the other half for its warp: neither completes.
    if (threadIdx.x % 32 < 16)
        __syncthreads();
    else
        __syncwarp();
    p[threadIdx.x] = 1;
}

__global__ void exited_lane_shuffle_kernel(int* p) {
    if (threadIdx.x % 32 == 3)
        return;
    p[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1);
}

template <class T> T* device_alloc(size_t n) {
    void* p = nullptr;
    MT_REQUIRE(cudaMalloc(&p, n * sizeof(T)) == cudaSuccess);
    return static_cast<T*>(p);
}

std::vector<int> download(const int* d, size_t n) {
    std::vector<int> h(n);
    MT_REQUIRE(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    return h;
}

// Runs fn in a child process; true when it aborted with `needle` on stderr.
template <class F> bool aborts_with(const char* needle, F fn) {
    int pipe_fd[2];
    if (pipe(pipe_fd) != 0)
        return false;
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(pipe_fd[1], 2);
        close(pipe_fd[0]);
        fn();
        _exit(0);
    }
    close(pipe_fd[1]);
    std::string err;
    char buf[512];
    for (ssize_t n; (n = read(pipe_fd[0], buf, sizeof buf)) > 0;)
        err.append(buf, size_t(n));
    close(pipe_fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    const bool aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
    if (!aborted || err.find(needle) == std::string::npos)
        std::fprintf(stderr, "child stderr (aborted %d): %s\n", int(aborted), err.c_str());
    return aborted && err.find(needle) != std::string::npos;
}

} // namespace

MT_TEST(warp_shuffles_follow_cuda_semantics) {
    int* d = device_alloc<int>(64 * 4);
    LLMWB_LAUNCH(1, 64, 0, nullptr, shuffle_kernel)(d);
    MT_REQUIRE(cudaGetLastError() == cudaSuccess);
    const auto h = download(d, 64 * 4);
    for (int t = 0; t < 64; ++t) {
        const int lane = t % 32, base = 100 * (t / 32);
        MT_CHECK_MSG(h[t * 4 + 0] == base + (lane ^ 5), "xor t=%d got %d", t, h[t * 4]);
        MT_CHECK_MSG(h[t * 4 + 1] == base + (lane + 3 < 32 ? lane + 3 : lane), "down t=%d", t);
        MT_CHECK_MSG(h[t * 4 + 2] == base + (lane >= 2 ? lane - 2 : lane), "up t=%d", t);
        MT_CHECK_MSG(h[t * 4 + 3] == base + (lane & 16) + 7, "idx width 16 t=%d", t);
    }
    cudaFree(d);
}

MT_TEST(block_barriers_static_and_dynamic_shared_memory) {
    const int blocks = 3, threads = 128;
    std::vector<float> in(blocks * threads);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = static_cast<float>(i % 97);
    float* din = device_alloc<float>(in.size());
    float* dsum = device_alloc<float>(blocks);
    float* drev = device_alloc<float>(in.size());
    MT_REQUIRE(cudaMemcpy(din, in.data(), in.size() * 4, cudaMemcpyHostToDevice) == cudaSuccess);
    LLMWB_LAUNCH(blocks, threads, threads * sizeof(float), nullptr, sum_and_reverse_kernel)
    (dsum, drev, din);
    std::vector<float> sums(blocks), rev(in.size());
    MT_REQUIRE(cudaMemcpy(sums.data(), dsum, blocks * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
    MT_REQUIRE(cudaMemcpy(rev.data(), drev, rev.size() * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int b = 0; b < blocks; ++b) {
        float want = 0;
        for (int t = 0; t < threads; ++t)
            want += in[b * threads + t];
        MT_CHECK_MSG(sums[b] == want, "block %d sum %g want %g", b, sums[b], want);
        for (int t = 0; t < threads; ++t)
            MT_CHECK(rev[b * threads + t] == in[b * threads + threads - 1 - t]);
    }
    cudaFree(din);
    cudaFree(dsum);
    cudaFree(drev);
}

MT_TEST(work_is_deferred_until_a_synchronisation) {
    cudaStream_t s = nullptr;
    MT_REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    int* d = device_alloc<int>(32);
    int* pinned = nullptr;
    MT_REQUIRE(cudaMallocHost(reinterpret_cast<void**>(&pinned), 32 * sizeof(int)) == cudaSuccess);
    MT_REQUIRE(cudaMemsetAsync(d, 0, 32 * sizeof(int), s) == cudaSuccess);
    LLMWB_LAUNCH(1, 32, 0, s, add_kernel)(d, 7);
    MT_REQUIRE(cudaMemcpyAsync(pinned, d, 32 * sizeof(int), cudaMemcpyDeviceToHost, s) ==
               cudaSuccess);
    // Not synchronised yet: the pinned buffer still holds what cudaMallocHost left (0xFF bytes).
    MT_CHECK_MSG(pinned[0] == -1, "read before the sync saw %d", pinned[0]);
    MT_REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    MT_CHECK_MSG(pinned[0] == 7 && pinned[31] == 7, "after the sync %d %d", pinned[0], pinned[31]);
    // Fresh device memory is not zeroed either.
    int* fresh = device_alloc<int>(4);
    MT_CHECK(download(fresh, 4)[0] == -1);
    cudaFree(fresh);
    cudaFreeHost(pinned);
    cudaFree(d);
    cudaStreamDestroy(s);
}

MT_TEST(graph_capture_records_and_replays) {
    cudaStream_t s = nullptr;
    MT_REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    int* d = device_alloc<int>(32);
    MT_REQUIRE(cudaMemset(d, 0, 32 * sizeof(int)) == cudaSuccess);
    int v = 5;
    MT_REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    LLMWB_LAUNCH(1, 32, 0, s, add_kernel)(d, v);
    v = 1000; // kernel arguments are copied at the launch
    cudaGraph_t g = nullptr;
    MT_REQUIRE(cudaStreamEndCapture(s, &g) == cudaSuccess && g);
    MT_CHECK(download(d, 32)[0] == 0); // captured, not run
    cudaGraphExec_t exec = nullptr;
    MT_REQUIRE(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
    MT_REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
    MT_REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
    MT_REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    MT_CHECK_MSG(download(d, 32)[31] == 10, "two replays of +5: %d", download(d, 32)[31]);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);

    // Synchronising or allocating while capturing fails and invalidates the capture.
    MT_REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    void* p = nullptr;
    MT_CHECK(cudaMalloc(&p, 64) == cudaErrorStreamCaptureUnsupported);
    MT_CHECK(cudaStreamSynchronize(s) == cudaErrorStreamCaptureUnsupported);
    MT_CHECK(cudaStreamEndCapture(s, &g) == cudaErrorStreamCaptureInvalidated && !g);
    cudaGetLastError();
    cudaFree(d);
    cudaStreamDestroy(s);
}

MT_TEST(launch_configuration_and_copy_errors) {
    int* d = device_alloc<int>(64);
    LLMWB_LAUNCH(1, 2048, 0, nullptr, add_kernel)(d, 1);
    MT_CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    LLMWB_LAUNCH(dim3(1, 70000), 32, 0, nullptr, add_kernel)(d, 1);
    MT_CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    // Over 48 KiB of dynamic shared memory needs the opt-in attribute, up to 227 KiB.
    LLMWB_LAUNCH(1, 64, 64 * 1024, nullptr, big_shared_kernel)(d);
    MT_CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    MT_CHECK(cudaFuncSetAttribute(big_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  300 * 1024) == cudaErrorInvalidValue);
    cudaGetLastError();
    MT_REQUIRE(cudaFuncSetAttribute(big_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    64 * 1024) == cudaSuccess);
    LLMWB_LAUNCH(1, 64, 64 * 1024, nullptr, big_shared_kernel)(d);
    MT_CHECK(cudaGetLastError() == cudaSuccess);
    MT_CHECK(download(d, 64)[63] == 1);

    std::vector<int> host(65);
    MT_CHECK(cudaMemcpy(d, host.data(), 65 * sizeof(int), cudaMemcpyHostToDevice) ==
             cudaErrorInvalidValue); // one element past the allocation
    MT_CHECK(cudaMemcpy(host.data(), d, 64 * sizeof(int), cudaMemcpyHostToDevice) ==
             cudaErrorInvalidValue); // the direction is wrong
    MT_CHECK(cudaMemset(d + 1, 0, 64 * sizeof(int)) == cudaErrorInvalidValue);
    cudaGetLastError();

    size_t free_before = 0, total = 0, free_after = 0;
    MT_REQUIRE(cudaMemGetInfo(&free_before, &total) == cudaSuccess);
    void* big = nullptr;
    MT_REQUIRE(cudaMalloc(&big, size_t{64} << 20) == cudaSuccess);
    MT_REQUIRE(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
    MT_CHECK(free_before - free_after == size_t{64} << 20);
    MT_CHECK(cudaMalloc(&big, total * 2) == cudaErrorMemoryAllocation);
    cudaGetLastError();
    cudaFree(big);
    cudaFree(d);
}

MT_TEST(device_bugs_stop_with_a_message) {
    MT_CHECK(aborts_with("divergent code", [] {
        int* d = device_alloc<int>(128);
        LLMWB_LAUNCH(1, 128, 0, nullptr, divergent_barrier_kernel)(d);
        cudaDeviceSynchronize();
    }));
    MT_CHECK(aborts_with("deadlock", [] {
        int* d = device_alloc<int>(64);
        LLMWB_LAUNCH(1, 64, 0, nullptr, mixed_barrier_kernel)(d);
        cudaDeviceSynchronize();
    }));
    MT_CHECK(aborts_with("exited", [] {
        int* d = device_alloc<int>(32);
        LLMWB_LAUNCH(1, 32, 0, nullptr, exited_lane_shuffle_kernel)(d);
        cudaDeviceSynchronize();
    }));
    MT_CHECK(aborts_with("is not device memory", [] {
        int host[32] = {};
        LLMWB_LAUNCH(1, 32, 0, nullptr, add_kernel)(host, 1);
        cudaDeviceSynchronize();
    }));
}

MINI_TEST_MAIN()
