// Compute-peak probes of the kernel benchmark: each runs `iters` iterations of independent
// vector FMAs (fp32) or int8 dot products on one thread and returns the operation count
// (2 per multiply-add) so the caller can divide by the elapsed time.
#pragma once

#include <cstdint>

namespace llmwb::bench {

double peak_fma_avx2(int64_t iters);
double peak_int8_avx2(int64_t iters); // vpmaddubsw + vpmaddwd
double peak_fma_avx512(int64_t iters);
double peak_int8_avx512(int64_t iters); // vpdpbusd

} // namespace llmwb::bench
