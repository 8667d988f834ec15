// Device-side KV-cache element conversions and the paged pool geometry (internal to the ops).
// Every conversion matches kernels/cpu/kv_format.h's reference bit for bit: fp8 encoding works
// on the fp32 bit pattern (round to nearest even, saturating), bf16 rounds to nearest even,
// int8 rows are q = rne(x * (127 / amax)) with scale amax / 127.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cpu/kv_format.h"
#include "kernels/cuda/ops/common.cuh"

namespace llmwb::cuda::detail {

// One layer's K (or V) pool geometry in bytes, computed on the host from a KvLayout (device
// code reads plain fields, no constexpr host functions).
struct KvGeom {
    int64_t block_bytes = 0;  // values + scales of one block
    int32_t values_bytes = 0; // block_size * slot_bytes
    int32_t slot_bytes = 0;   // kv_heads * head_bytes
    int32_t head_bytes = 0;   // head_dim * element bytes
    int32_t block_size = 0, kv_heads = 0, head_dim = 0;
};

inline KvGeom kv_geom(const KvLayout& l) {
    KvGeom g;
    g.block_bytes = l.block_bytes();
    g.values_bytes = static_cast<int32_t>(l.values_bytes());
    g.slot_bytes = static_cast<int32_t>(l.slot_bytes());
    g.head_bytes = static_cast<int32_t>(l.head_bytes());
    g.block_size = l.block_size;
    g.kv_heads = l.num_kv_heads;
    g.head_dim = l.head_dim;
    return g;
}

// ---- Encoders (fp32 -> stored element) ---------------------------------------------------------

// |x| (bits of a finite non-negative float below the type's max) as an fp8 code with mant_bits
// mantissa bits and exponent bias `bias`; saturates at max_code.
__device__ __forceinline__ uint32_t fp8_magnitude(uint32_t x, int mant_bits, int bias,
                                                  uint32_t max_code) {
    if (x < 0x800000u)
        return 0; // fp32 zero or subnormal: far below every fp8 step
    const int exp = static_cast<int>(x >> 23) - 127;
    const int min_normal_exp = 1 - bias;
    const uint32_t mant = (x & 0x7FFFFFu) | 0x800000u;
    int shift = 23 - mant_bits;
    if (exp < min_normal_exp)
        shift += min_normal_exp - exp;
    if (shift > 25)
        return 0; // below half the smallest subnormal
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        ++q;
    const uint32_t code =
        exp < min_normal_exp ? q : (static_cast<uint32_t>(exp + bias - 1) << mant_bits) + q;
    return code < max_code ? code : max_code;
}

__device__ __forceinline__ uint8_t encode_fp8_e4m3(float x) {
    const uint32_t b = __float_as_uint(x);
    const uint32_t a = b & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return 0x7F; // NaN
    const uint32_t sign = (b >> 24) & 0x80u;
    if (__uint_as_float(a) >= 448.0f)
        return static_cast<uint8_t>(sign | 0x7Eu);
    return static_cast<uint8_t>(sign | fp8_magnitude(a, 3, 7, 0x7E));
}

__device__ __forceinline__ uint8_t encode_fp8_e5m2(float x) {
    const uint32_t b = __float_as_uint(x);
    const uint32_t a = b & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return 0x7F;
    const uint32_t sign = (b >> 24) & 0x80u;
    if (__uint_as_float(a) >= 57344.0f)
        return static_cast<uint8_t>(sign | 0x7Bu);
    return static_cast<uint8_t>(sign | fp8_magnitude(a, 2, 15, 0x7B));
}

__device__ __forceinline__ uint16_t encode_bf16(float x) {
    const uint32_t b = __float_as_uint(x);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u)
        return static_cast<uint16_t>((b >> 16) | 0x40u); // quiet NaN
    return static_cast<uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

__device__ __forceinline__ uint16_t encode_f16(float x) {
    const uint32_t b = __float_as_uint(x);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) // NaN: quiet, top payload bits kept (as the CPU does)
        return static_cast<uint16_t>(((b >> 16) & 0x8000u) | 0x7E00u | ((b >> 13) & 0x3FFu));
    const __half h = __float2half_rn(x);
    uint16_t r;
    memcpy(&r, &h, 2);
    return r;
}

// ---- Decoders (stored element -> fp32, before any scale) ---------------------------------------

__device__ __forceinline__ float decode_fp8_e4m3(uint32_t b) {
    const uint32_t e = (b >> 3) & 0xFu, m = b & 7u;
    float v;
    if ((b & 0x7Fu) == 0x7Fu)
        v = __uint_as_float(0x7FC00000u);
    else if (e == 0)
        v = static_cast<float>(m) * 0x1p-9f;
    else
        v = __uint_as_float(((e + 120u) << 23) | (m << 20)); // exponent e - 7 + 127
    return (b & 0x80u) ? -v : v;
}

__device__ __forceinline__ float decode_fp8_e5m2(uint32_t b) {
    const uint32_t e = (b >> 2) & 0x1Fu, m = b & 3u;
    float v;
    if (e == 0x1F)
        v = __uint_as_float(m ? 0x7FC00000u : 0x7F800000u);
    else if (e == 0)
        v = static_cast<float>(m) * 0x1p-16f;
    else
        v = __uint_as_float(((e + 112u) << 23) | (m << 21)); // exponent e - 15 + 127
    return (b & 0x80u) ? -v : v;
}

__device__ __forceinline__ float decode_bf16(uint32_t h) {
    return __uint_as_float(h << 16);
}

// Four consecutive elements of type T at p (p aligned to 4 elements), dequantized: fp8 and int8
// values times `scale` (the layer's fp8 scale or the row's int8 scale), the others as stored.
template <KvDtype T>
__device__ __forceinline__ float4 load_kv4(const unsigned char* p, float scale);

template <>
__device__ __forceinline__ float4 load_kv4<KvDtype::F32>(const unsigned char* p, float) {
    return *reinterpret_cast<const float4*>(p);
}
template <>
__device__ __forceinline__ float4 load_kv4<KvDtype::F16>(const unsigned char* p, float) {
    const __half2* h = reinterpret_cast<const __half2*>(p);
    const float2 a = __half22float2(h[0]), b = __half22float2(h[1]);
    return make_float4(a.x, a.y, b.x, b.y);
}
template <>
__device__ __forceinline__ float4 load_kv4<KvDtype::BF16>(const unsigned char* p, float) {
    const uint2 w = *reinterpret_cast<const uint2*>(p);
    return make_float4(__uint_as_float(w.x << 16), __uint_as_float(w.x & 0xFFFF0000u),
                       __uint_as_float(w.y << 16), __uint_as_float(w.y & 0xFFFF0000u));
}
template <>
__device__ __forceinline__ float4 load_kv4<KvDtype::Fp8E4M3>(const unsigned char* p, float s) {
    const uint32_t w = *reinterpret_cast<const uint32_t*>(p);
    return make_float4(decode_fp8_e4m3(w & 0xFFu) * s, decode_fp8_e4m3((w >> 8) & 0xFFu) * s,
                       decode_fp8_e4m3((w >> 16) & 0xFFu) * s, decode_fp8_e4m3(w >> 24) * s);
}
template <>
__device__ __forceinline__ float4 load_kv4<KvDtype::Fp8E5M2>(const unsigned char* p, float s) {
    const uint32_t w = *reinterpret_cast<const uint32_t*>(p);
    return make_float4(decode_fp8_e5m2(w & 0xFFu) * s, decode_fp8_e5m2((w >> 8) & 0xFFu) * s,
                       decode_fp8_e5m2((w >> 16) & 0xFFu) * s, decode_fp8_e5m2(w >> 24) * s);
}
template <>
__device__ __forceinline__ float4 load_kv4<KvDtype::Int8>(const unsigned char* p, float s) {
    const uint32_t w = *reinterpret_cast<const uint32_t*>(p);
    const auto b = [](uint32_t v) { return static_cast<float>(static_cast<int8_t>(v & 0xFFu)); };
    return make_float4(b(w) * s, b(w >> 8) * s, b(w >> 16) * s, b(w >> 24) * s);
}

// The scale a row of (block, offset o, kv head h) is read with: int8's stored row scale, the
// layer's scale for fp8, 1 for the plain types.
template <KvDtype T>
__device__ __forceinline__ float kv_row_scale(const unsigned char* pool, const KvGeom& g,
                                              int64_t block, int32_t o, int32_t h,
                                              float layer_scale) {
    if constexpr (T == KvDtype::Int8)
        return *reinterpret_cast<const float*>(pool + block * g.block_bytes + g.values_bytes +
                                               4 * (static_cast<int64_t>(o) * g.kv_heads + h));
    else
        return layer_scale;
}

// Address of the values of (block, offset o, kv head h).
__device__ __forceinline__ const unsigned char* kv_row(const unsigned char* pool, const KvGeom& g,
                                                       int64_t block, int32_t o, int32_t h) {
    return pool + block * g.block_bytes + static_cast<int64_t>(o) * g.slot_bytes +
           static_cast<int64_t>(h) * g.head_bytes;
}

} // namespace llmwb::cuda::detail
