// Persistent worker threads. A job is published by bumping a generation counter; workers spin
// briefly on it (a decode step launches ~170 short jobs back to back) and then sleep in
// std::atomic::wait (a futex on Linux). The caller runs share 0 and waits for the others the
// same way.
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LLMWB_PAUSE() _mm_pause()
#else
#define LLMWB_PAUSE() ((void)0)
#endif

namespace llmwb::kernels {

namespace {
// Spin ~ tens of microseconds before sleeping; yield now and then so that an oversubscribed
// machine (more runnable threads than cores) still lets the thread we wait for run.
constexpr int kSpinIterations = 1 << 12;
constexpr int kYieldEvery = 64;

inline void spin_pause(int i) {
    if ((i & (kYieldEvery - 1)) == kYieldEvery - 1)
        std::this_thread::yield();
    else
        LLMWB_PAUSE();
}
thread_local const void* tls_current_pool = nullptr; // set while running a share of a job
} // namespace

struct ThreadPool::Impl {
    int size = 1;
    std::vector<std::thread> workers;
    std::mutex run_mutex; // one job at a time
    alignas(64) std::atomic<uint32_t> generation{0};
    alignas(64) std::atomic<int> remaining{0};
    const std::function<void(int, int)>* job = nullptr;
    bool stop = false; // written before a generation bump, read after it

    void worker_loop(int index) {
        uint32_t seen = 0;
        for (;;) {
            uint32_t g = generation.load(std::memory_order_acquire);
            for (int i = 0; g == seen && i < kSpinIterations; ++i) {
                spin_pause(i);
                g = generation.load(std::memory_order_acquire);
            }
            while (g == seen) {
                generation.wait(seen, std::memory_order_acquire);
                g = generation.load(std::memory_order_acquire);
            }
            seen = g;
            if (stop)
                return;
            tls_current_pool = this;
            (*job)(index, size);
            tls_current_pool = nullptr;
            if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1)
                remaining.notify_one();
        }
    }
};

ThreadPool::ThreadPool(int num_threads) : impl_(new Impl) {
    if (num_threads <= 0)
        num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    impl_->size = num_threads;
    impl_->workers.reserve(static_cast<size_t>(num_threads - 1));
    for (int i = 1; i < num_threads; ++i)
        impl_->workers.emplace_back([this, i] { impl_->worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    impl_->stop = true;
    impl_->generation.fetch_add(1, std::memory_order_release);
    impl_->generation.notify_all();
    for (auto& t : impl_->workers)
        t.join();
    delete impl_;
}

int ThreadPool::size() const {
    return impl_->size;
}

void ThreadPool::run(const std::function<void(int thread, int num_threads)>& fn) {
    const int n = impl_->size;
    if (n == 1) {
        fn(0, 1);
        return;
    }
    if (tls_current_pool == impl_) { // called from inside a job of this pool: run every share here
        for (int t = 0; t < n; ++t)
            fn(t, n);
        return;
    }
    std::lock_guard lock(impl_->run_mutex);
    impl_->job = &fn;
    impl_->remaining.store(n - 1, std::memory_order_relaxed);
    impl_->generation.fetch_add(1, std::memory_order_release);
    impl_->generation.notify_all();

    tls_current_pool = impl_;
    fn(0, n);
    tls_current_pool = nullptr;

    int left = impl_->remaining.load(std::memory_order_acquire);
    for (int i = 0; left != 0 && i < kSpinIterations; ++i) {
        spin_pause(i);
        left = impl_->remaining.load(std::memory_order_acquire);
    }
    while (left != 0) {
        impl_->remaining.wait(left, std::memory_order_acquire);
        left = impl_->remaining.load(std::memory_order_acquire);
    }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0)
        return;
    grain = std::max<int64_t>(1, grain);
    const int64_t units = (n + grain - 1) / grain;
    const int threads = static_cast<int>(std::min<int64_t>(units, impl_->size));
    if (threads <= 1) {
        fn(0, n);
        return;
    }
    run([&](int t, int) {
        if (t >= threads)
            return;
        const int64_t u0 = units * t / threads, u1 = units * (t + 1) / threads;
        const int64_t b = u0 * grain, e = std::min(n, u1 * grain);
        if (b < e)
            fn(b, e);
    });
}

} // namespace llmwb::kernels
