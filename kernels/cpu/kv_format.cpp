#include "kernels/cpu/kv_format.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "kernels/cpu/quant.h"

namespace llmwb {

const char* kv_dtype_name(KvDtype t) {
    switch (t) {
    case KvDtype::F32:
        return "f32";
    case KvDtype::F16:
        return "f16";
    case KvDtype::BF16:
        return "bf16";
    case KvDtype::Fp8E4M3:
        return "fp8_e4m3";
    case KvDtype::Fp8E5M2:
        return "fp8_e5m2";
    case KvDtype::Int8:
        return "int8";
    }
    return "?";
}

std::optional<KvDtype> parse_kv_dtype(std::string_view s) {
    for (KvDtype t : kAllKvDtypes)
        if (s == kv_dtype_name(t))
            return t;
    if (s == "fp8")
        return KvDtype::Fp8E4M3;
    if (s == "float32" || s == "float")
        return KvDtype::F32;
    if (s == "float16" || s == "half")
        return KvDtype::F16;
    if (s == "bfloat16")
        return KvDtype::BF16;
    return std::nullopt;
}

const char* kv_dtype_choices() {
    return "auto, f32, f16, bf16, fp8, fp8_e4m3, fp8_e5m2, int8";
}

namespace {

// Round-to-nearest-even encoding of |x| (finite, >= 0) into an fp8 with `mant_bits` mantissa
// bits and exponent bias `bias`, as the integer (exponent << mant_bits) | mantissa; saturates at
// `max_code`. Works on the fp32 bit pattern, so it is exact (no double rounding).
uint8_t encode_fp8_magnitude(float a, int mant_bits, int bias, uint32_t max_code) {
    const uint32_t x = std::bit_cast<uint32_t>(a);
    const int exp = static_cast<int>(x >> 23) - 127; // unbiased exponent (-127: zero/subnormal)
    const int min_normal_exp = 1 - bias;             // fp8's smallest normal exponent
    uint32_t mant = (x & 0x7FFFFFu) | (x >= 0x800000u ? 0x800000u : 0); // 24-bit significand
    // Shift so that one unit of the result is fp8's unit in the last place at this magnitude.
    int shift = 23 - mant_bits; // normal fp8
    if (exp < min_normal_exp)
        shift += min_normal_exp - exp; // fp8 subnormal: coarser steps
    if (x < 0x800000u)
        return 0; // fp32 zero or subnormal (< 2^-126): far below every fp8 step
    if (shift > 25)
        return 0; // below half the smallest fp8 subnormal
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        ++q;
    // q is the significand in fp8 ulps; rebuild (exponent, mantissa) as one integer: for normal
    // numbers the implicit bit lands in the exponent field, so adding the biased exponent works
    // even when rounding carried into the next binade.
    uint32_t code;
    if (exp < min_normal_exp)
        code = q; // subnormal (q == 1 << mant_bits is the smallest normal, encoded the same way)
    else
        code = (static_cast<uint32_t>(exp + bias - 1) << mant_bits) + q;
    return static_cast<uint8_t>(std::min(code, max_code));
}

} // namespace

uint8_t fp32_to_fp8_e4m3(float x) {
    if (std::isnan(x))
        return 0x7F;
    const uint8_t sign = std::signbit(x) ? 0x80 : 0;
    const float a = std::fabs(x);
    if (a >= 448.0f)
        return sign | 0x7E;
    return sign | encode_fp8_magnitude(a, 3, 7, 0x7E);
}

float fp8_e4m3_to_fp32(uint8_t b) {
    const uint32_t e = (b >> 3) & 0xF, m = b & 7;
    float v;
    if ((b & 0x7F) == 0x7F)
        v = std::numeric_limits<float>::quiet_NaN();
    else if (e == 0)
        v = static_cast<float>(m) * 0x1p-9f;
    else
        v = std::ldexp(1.0f + static_cast<float>(m) / 8.0f, static_cast<int>(e) - 7);
    return (b & 0x80) ? -v : v;
}

uint8_t fp32_to_fp8_e5m2(float x) {
    if (std::isnan(x))
        return 0x7F;
    const uint8_t sign = std::signbit(x) ? 0x80 : 0;
    const float a = std::fabs(x);
    if (a >= 57344.0f)
        return sign | 0x7B;
    return sign | encode_fp8_magnitude(a, 2, 15, 0x7B);
}

float fp8_e5m2_to_fp32(uint8_t b) {
    return kernels::fp16_to_fp32(static_cast<uint16_t>(b << 8));
}

float kv_quantize_int8(const float* x, int32_t n, int8_t* q) {
    float amax = 0;
    for (int32_t i = 0; i < n; ++i)
        amax = std::max(amax, std::fabs(x[i]));
    const float inv = 127.0f / amax;
    if (!(amax > 0) || !std::isfinite(amax) || !std::isfinite(inv)) {
        // All zeros (or a non-finite row, which a finite model never writes, or one so small,
        // below 127 / FLT_MAX ~ 4e-37, that 127 / amax overflows and x * inf would give NaN):
        // store zeros.
        std::memset(q, 0, static_cast<size_t>(n));
        return 0.0f;
    }
    for (int32_t i = 0; i < n; ++i) {
        const float r = std::nearbyint(x[i] * inv);
        q[i] = static_cast<int8_t>(std::clamp(r, -127.0f, 127.0f));
    }
    return amax / 127.0f;
}

void kv_store_row_ref(KvDtype dtype, const float* x, int32_t n, void* dst, float* scale_dst,
                      float inv_scale) {
    switch (dtype) {
    case KvDtype::F32:
        std::memcpy(dst, x, sizeof(float) * static_cast<size_t>(n));
        return;
    case KvDtype::F16: {
        auto* d = static_cast<uint16_t*>(dst);
        for (int32_t i = 0; i < n; ++i)
            d[i] = kernels::fp32_to_fp16(x[i]);
        return;
    }
    case KvDtype::BF16: {
        auto* d = static_cast<uint16_t*>(dst);
        for (int32_t i = 0; i < n; ++i)
            d[i] = kernels::fp32_to_bf16(x[i]);
        return;
    }
    case KvDtype::Fp8E4M3: {
        auto* d = static_cast<uint8_t*>(dst);
        for (int32_t i = 0; i < n; ++i)
            d[i] = fp32_to_fp8_e4m3(x[i] * inv_scale);
        return;
    }
    case KvDtype::Fp8E5M2: {
        auto* d = static_cast<uint8_t*>(dst);
        for (int32_t i = 0; i < n; ++i)
            d[i] = fp32_to_fp8_e5m2(x[i] * inv_scale);
        return;
    }
    case KvDtype::Int8:
        *scale_dst = kv_quantize_int8(x, n, static_cast<int8_t*>(dst));
        return;
    }
}

void kv_load_row_ref(KvDtype dtype, const void* src, int32_t n, float row_scale, float scale,
                     float* out) {
    switch (dtype) {
    case KvDtype::F32:
        std::memcpy(out, src, sizeof(float) * static_cast<size_t>(n));
        return;
    case KvDtype::F16: {
        const auto* s = static_cast<const uint16_t*>(src);
        for (int32_t i = 0; i < n; ++i)
            out[i] = kernels::fp16_to_fp32(s[i]);
        return;
    }
    case KvDtype::BF16: {
        const auto* s = static_cast<const uint16_t*>(src);
        for (int32_t i = 0; i < n; ++i)
            out[i] = kernels::bf16_to_fp32(s[i]);
        return;
    }
    case KvDtype::Fp8E4M3: {
        const auto* s = static_cast<const uint8_t*>(src);
        for (int32_t i = 0; i < n; ++i)
            out[i] = fp8_e4m3_to_fp32(s[i]) * scale;
        return;
    }
    case KvDtype::Fp8E5M2: {
        const auto* s = static_cast<const uint8_t*>(src);
        for (int32_t i = 0; i < n; ++i)
            out[i] = fp8_e5m2_to_fp32(s[i]) * scale;
        return;
    }
    case KvDtype::Int8: {
        const auto* s = static_cast<const int8_t*>(src);
        for (int32_t i = 0; i < n; ++i)
            out[i] = static_cast<float>(s[i]) * row_scale;
        return;
    }
    }
}

} // namespace llmwb
