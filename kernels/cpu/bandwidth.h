// Memory read bandwidth probe: every thread of the pool streams its own slice of a buffer much
// larger than the caches. Used by the benchmarks to express kernel throughput as a fraction of
// what the machine can read.
#pragma once

#include <cstddef>
#include <cstdint>

namespace llmwb::kernels {

class ThreadPool;

// Best of `repeats` passes, in GB/s (1e9 bytes/s). wide: vector loads of the active SIMD level
// (AVX-512 or AVX2, several independent accumulators); !wide: scalar 8-byte loads.
double measure_read_bandwidth_gbs(ThreadPool& pool, size_t bytes = size_t{512} << 20,
                                  bool wide = true, int repeats = 5);

// Reads [p, p + n) with the wide loads of the active SIMD level, split over the pool's threads in
// contiguous parts (as the matrix-vector products split a matrix); returns the bytes read (the
// range shrunk to whole 64-byte lines in 256-byte steps per thread, so a few bytes at the ends
// may be left out). For benchmarks: what reading a given set of bytes costs right now.
double read_sum_split(ThreadPool& pool, const uint8_t* p, size_t n);

// The per-thread read loops behind the probe (checksums keep the loads alive); n is a multiple
// of 256 bytes, p 64-byte aligned.
uint64_t read_sum_scalar(const uint8_t* p, size_t n);
uint64_t read_sum_avx2(const uint8_t* p, size_t n);
uint64_t read_sum_avx512(const uint8_t* p, size_t n);

} // namespace llmwb::kernels
