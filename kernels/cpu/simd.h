// Run-time SIMD dispatch. The best level the CPU supports is chosen at start-up; tests and
// benchmarks can force a lower one (LLMWB_SIMD=scalar|avx2|avx512 in the environment does too).
#pragma once

namespace llmwb::kernels {

enum class SimdLevel { Scalar = 0, Avx2 = 1, Avx512 = 2 };

SimdLevel cpu_simd_level();           // what the CPU supports (AVX-512 means F, BW, VL, VNNI)
SimdLevel active_simd_level();        // what kernels use now
void set_simd_level(SimdLevel level); // clamped to cpu_simd_level()
const char* simd_level_name(SimdLevel level);

} // namespace llmwb::kernels
