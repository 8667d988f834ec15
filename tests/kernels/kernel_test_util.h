// Helpers shared by the kernel tests: deterministic data and the SIMD levels to run.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/simd.h"

namespace llmwb::kernels::test {

// Normal-ish data with a few outliers and a per-call scale, deterministic for a seed.
inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, scale);
    std::uniform_int_distribution<int> outlier(0, 99);
    std::vector<float> v(n);
    for (auto& x : v)
        x = nd(rng) * (outlier(rng) == 0 ? 6.0f : 1.0f);
    return v;
}

// Every level up to what the CPU supports.
inline std::vector<SimdLevel> available_levels() {
    std::vector<SimdLevel> out;
    for (int l = 0; l <= static_cast<int>(cpu_simd_level()); ++l)
        out.push_back(static_cast<SimdLevel>(l));
    return out;
}

// Restores the active level when a test leaves.
struct SimdLevelGuard {
    SimdLevel saved = active_simd_level();
    ~SimdLevelGuard() { set_simd_level(saved); }
};

} // namespace llmwb::kernels::test
