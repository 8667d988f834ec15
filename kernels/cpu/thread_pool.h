// A small fixed pool of worker threads for data-parallel loops. The calling thread takes part
// in the work, so ThreadPool(1) runs everything inline.
#pragma once

#include <cstdint>
#include <functional>

namespace llmwb::kernels {

class ThreadPool {
  public:
    explicit ThreadPool(int num_threads); // num_threads <= 0: hardware concurrency
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const;

    // Calls fn(thread_index, num_threads) once on every thread (including the caller) and
    // returns when all calls have returned. Not re-entrant.
    void run(const std::function<void(int thread, int num_threads)>& fn);

    // Splits [0, n) into contiguous chunks (multiples of `grain`) and calls fn(begin, end).
    void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  private:
    struct Impl;
    Impl* impl_;
};

} // namespace llmwb::kernels
