// CPU feature detection (cpuid + xgetbv) and the active SIMD level.
#include "kernels/cpu/simd.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define LLMWB_X86 1
#endif

namespace llmwb::kernels {

namespace {

#ifdef LLMWB_X86
uint64_t read_xcr0() {
    uint32_t eax = 0, edx = 0;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (static_cast<uint64_t>(edx) << 32) | eax;
}
#endif

SimdLevel detect() {
#ifdef LLMWB_X86
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return SimdLevel::Scalar;
    const bool osxsave = c & (1u << 27);
    const bool fma = c & (1u << 12);
    const bool f16c = c & (1u << 29);
    const bool avx = c & (1u << 28);
    if (!osxsave || !avx)
        return SimdLevel::Scalar;
    const uint64_t xcr0 = read_xcr0();
    const bool os_ymm = (xcr0 & 0x6) == 0x6;   // SSE + AVX state
    const bool os_zmm = (xcr0 & 0xE6) == 0xE6; // + opmask, ZMM_Hi256, Hi16_ZMM
    if (!os_ymm)
        return SimdLevel::Scalar;
    if (__get_cpuid_max(0, nullptr) < 7)
        return SimdLevel::Scalar;
    __cpuid_count(7, 0, a, b, c, d);
    const bool avx2 = b & (1u << 5);
    const bool avx512f = b & (1u << 16);
    const bool avx512dq = b & (1u << 17);
    const bool avx512bw = b & (1u << 30);
    const bool avx512vl = b & (1u << 31);
    const bool avx512vnni = c & (1u << 11);
    if (!(avx2 && fma && f16c))
        return SimdLevel::Scalar;
    if (os_zmm && avx512f && avx512dq && avx512bw && avx512vl && avx512vnni)
        return SimdLevel::Avx512;
    return SimdLevel::Avx2;
#else
    return SimdLevel::Scalar;
#endif
}

bool detect_avx512_bf16() {
#ifdef LLMWB_X86
    if (cpu_simd_level() != SimdLevel::Avx512 || __get_cpuid_max(0, nullptr) < 7)
        return false;
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid_count(7, 1, a, b, c, d);
    return a & (1u << 5); // CPUID.(EAX=7, ECX=1):EAX[5] AVX512_BF16
#else
    return false;
#endif
}

bool bf16_dot_from_environment() {
    const char* v = std::getenv("LLMWB_BF16_DOT");
    return !(v && (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0));
}

std::atomic<bool>& bf16_dot_switch() {
    static std::atomic<bool> on{bf16_dot_from_environment()};
    return on;
}

SimdLevel clamp_level(SimdLevel want) {
    const SimdLevel cpu = cpu_simd_level();
    return static_cast<int>(want) > static_cast<int>(cpu) ? cpu : want;
}

SimdLevel initial_level() {
    const char* env = std::getenv("LLMWB_SIMD");
    if (env) {
        if (std::strcmp(env, "scalar") == 0)
            return SimdLevel::Scalar;
        if (std::strcmp(env, "avx2") == 0)
            return clamp_level(SimdLevel::Avx2);
        if (std::strcmp(env, "avx512") == 0)
            return clamp_level(SimdLevel::Avx512);
    }
    return cpu_simd_level();
}

std::atomic<int>& active() {
    static std::atomic<int> level{static_cast<int>(initial_level())};
    return level;
}

} // namespace

SimdLevel cpu_simd_level() {
    static const SimdLevel level = detect();
    return level;
}

SimdLevel active_simd_level() {
    return static_cast<SimdLevel>(active().load(std::memory_order_relaxed));
}

void set_simd_level(SimdLevel level) {
    active().store(static_cast<int>(clamp_level(level)), std::memory_order_relaxed);
}

bool cpu_has_avx512_bf16() {
    static const bool has = detect_avx512_bf16();
    return has;
}

bool bf16_dot_available() {
    return cpu_has_avx512_bf16() && active_simd_level() == SimdLevel::Avx512;
}

bool bf16_dot_enabled() {
    return bf16_dot_switch().load(std::memory_order_relaxed);
}

void set_bf16_dot_enabled(bool on) {
    bf16_dot_switch().store(on, std::memory_order_relaxed);
}

bool bf16_dot_active() {
    return bf16_dot_enabled() && bf16_dot_available();
}

const char* simd_level_name(SimdLevel level) {
    switch (level) {
    case SimdLevel::Scalar:
        return "scalar";
    case SimdLevel::Avx2:
        return "avx2";
    case SimdLevel::Avx512:
        return "avx512";
    }
    return "?";
}

// CPUID leaf 7 sub-leaf 1, EAX bit 4 (the AVX state itself is checked by the AVX2 level's
// dispatch).
bool cpu_has_avx_vnni() {
    static const bool has = [] {
        const char* v = std::getenv("LLMWB_AVX_VNNI");
        if (v && std::strcmp(v, "0") == 0)
            return false;
#ifdef LLMWB_X86
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (__get_cpuid_max(0, nullptr) < 7)
            return false;
        __cpuid_count(7, 1, a, b, c, d);
        return (a & (1u << 4)) != 0;
#else
        return false;
#endif
    }();
    return has;
}

} // namespace llmwb::kernels
