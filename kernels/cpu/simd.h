// Run-time SIMD dispatch. The best level the CPU supports is chosen at start-up; tests and
// benchmarks can force a lower one (LLMWB_SIMD=scalar|avx2|avx512 in the environment does too).
#pragma once

namespace llmwb::kernels {

enum class SimdLevel { Scalar = 0, Avx2 = 1, Avx512 = 2 };

SimdLevel cpu_simd_level();           // what the CPU supports (AVX-512 means F, BW, VL, VNNI)
SimdLevel active_simd_level();        // what kernels use now
void set_simd_level(SimdLevel level); // clamped to cpu_simd_level()
const char* simd_level_name(SimdLevel level);

// bf16 dot products (AVX512_BF16's vdpbf16ps) for BF16 weights: activations rounded to bf16
// (round to nearest even) and products accumulated in fp32, at every token count, instead of fp32
// FMA on the widened weights. Available when the CPU has AVX512_BF16 and the AVX-512 level is
// active; used when also enabled (the default; LLMWB_BF16_DOT=off in the environment or
// set_bf16_dot_enabled(false) turn it off, e.g. to measure its rounding against fp32).
bool cpu_has_avx512_bf16();
bool bf16_dot_available();
bool bf16_dot_enabled();
void set_bf16_dot_enabled(bool on);
bool bf16_dot_active(); // available and enabled

// AVX-VNNI (vpdpbusd on ymm, without AVX-512): the AVX2 level's integer panel kernels use it
// where the CPU has it (an AVX2 CPU need not). LLMWB_AVX_VNNI=0 in the environment hides it (to
// measure the plain AVX2 kernels on a CPU that has it).
bool cpu_has_avx_vnni();

} // namespace llmwb::kernels
