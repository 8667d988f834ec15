// The SIMD levels of the KV write op (kv_write.h), for kv_write.cpp's dispatch. Each stores one
// row of n floats exactly as kv_store_row_ref does (byte-identical, every type).
#pragma once

#include <cstdint>

#include "kernels/cpu/kv_format.h"

namespace llmwb::kernels {

void kv_store_row_avx2(KvDtype dtype, const float* x, int32_t n, void* dst, float* scale_dst,
                       float inv_scale);
void kv_store_row_avx512(KvDtype dtype, const float* x, int32_t n, void* dst, float* scale_dst,
                         float inv_scale);

// Bit-level fp8 encoding shared by the vector kernels (as constants): RNE of the fp32 bit
// pattern to `mant` mantissa bits for magnitudes in fp8's normal range, the add-a-magic-number
// trick (one RNE float addition whose ulp is fp8's subnormal step) below it, saturation at the
// largest finite code, NaN -> 0x7F (no sign), as fp32_to_fp8_e4m3 / _e5m2.
struct Fp8Params {
    int mant;            // mantissa bits (3 or 2)
    uint32_t rebias;     // (127 - bias) << mant: fp32 exponent -> fp8 exponent
    uint32_t min_normal; // fp32 bits of fp8's smallest normal 2^(1 - bias)
    uint32_t magic;      // fp32 bits of 2^(1 - bias - mant + 23): its ulp is the subnormal step
    uint32_t max_code;   // largest finite code (0x7E, 0x7B)
};
constexpr Fp8Params fp8_params(KvDtype t) {
    return t == KvDtype::Fp8E4M3 ? Fp8Params{3, (127u - 7u) << 3, (127u - 6u) << 23,
                                             (127u - 6u - 3u + 23u) << 23, 0x7E}
                                 : Fp8Params{2, (127u - 15u) << 2, (127u - 14u) << 23,
                                             (127u - 14u - 2u + 23u) << 23, 0x7B};
}

} // namespace llmwb::kernels
