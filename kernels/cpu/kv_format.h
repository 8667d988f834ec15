// KV-cache element types and the paged block layout, shared by the CPU backend, the CUDA backend
// (plain C++: nvcc includes it too) and the engine's memory plan.
//
// Types (vLLM's kv_cache_dtype names):
//   f32, f16, bf16                plain floats
//   fp8_e4m3 (OCP E4M3FN: max 448, no infinities) and fp8_e5m2 (max 57344): stored value =
//                                 fp8(x / s) with one scale s per layer for K and one for V
//                                 (1.0 unless calibrated); read back as fp8 * s. Encoding rounds
//                                 to nearest even and saturates to the largest finite value.
//   int8                          symmetric, one fp32 scale per token and KV head, stored beside
//                                 the block's values: q = rne(x * (127 / amax)) in [-127, 127],
//                                 scale = amax / 127 (0 when the row is all zeros); read back as
//                                 q * scale.
//
// Layout of one layer's K (and, separately, V) pool, block-major:
//   block b at byte b * block_bytes():
//     values [block_size][num_kv_heads][head_dim] elements
//     scales [block_size][num_kv_heads] fp32          (int8 only)
// For f32 this is exactly [num_blocks][block_size][num_kv_heads][head_dim] floats. A block's
// values and scales move together, so copying a block (copy-on-write, re-planning) is one
// memcpy of block_bytes() per layer, K and V.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace llmwb {

enum class KvDtype : uint8_t { F32, F16, BF16, Fp8E4M3, Fp8E5M2, Int8 };

inline constexpr KvDtype kAllKvDtypes[] = {KvDtype::F32,     KvDtype::F16,     KvDtype::BF16,
                                           KvDtype::Fp8E4M3, KvDtype::Fp8E5M2, KvDtype::Int8};

// "f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8".
const char* kv_dtype_name(KvDtype t);
// Accepts the names above and vLLM's aliases: "fp8" (= fp8_e4m3), "float32", "float16", "half",
// "bfloat16", "float". Not "auto" (the backend's default: the caller resolves it).
std::optional<KvDtype> parse_kv_dtype(std::string_view s);
// "auto, f32, f16, bf16, fp8, fp8_e4m3, fp8_e5m2, int8": for error messages and --help.
const char* kv_dtype_choices();

constexpr int32_t kv_dtype_elem_bytes(KvDtype t) {
    switch (t) {
    case KvDtype::F32:
        return 4;
    case KvDtype::F16:
    case KvDtype::BF16:
        return 2;
    case KvDtype::Fp8E4M3:
    case KvDtype::Fp8E5M2:
    case KvDtype::Int8:
        return 1;
    }
    return 4;
}
constexpr bool kv_dtype_has_row_scales(KvDtype t) {
    return t == KvDtype::Int8;
}
constexpr bool kv_dtype_is_fp8(KvDtype t) {
    return t == KvDtype::Fp8E4M3 || t == KvDtype::Fp8E5M2;
}
// Largest finite value of an fp8 type (0 for the others).
constexpr float kv_fp8_max(KvDtype t) {
    return t == KvDtype::Fp8E4M3 ? 448.0f : t == KvDtype::Fp8E5M2 ? 57344.0f : 0.0f;
}

// One layer's K (or V) pool geometry. All sizes in bytes.
struct KvLayout {
    KvDtype dtype = KvDtype::F32;
    int32_t block_size = 16;
    int32_t num_kv_heads = 1;
    int32_t head_dim = 1;

    constexpr int64_t elem_bytes() const { return kv_dtype_elem_bytes(dtype); }
    constexpr int64_t head_bytes() const { return head_dim * elem_bytes(); }
    constexpr int64_t slot_bytes() const { return num_kv_heads * head_bytes(); } // values only
    constexpr int64_t values_bytes() const { return block_size * slot_bytes(); }
    constexpr int64_t scales_bytes() const {
        return kv_dtype_has_row_scales(dtype) ? int64_t{4} * block_size * num_kv_heads : 0;
    }
    constexpr int64_t block_bytes() const { return values_bytes() + scales_bytes(); }
    // Offsets from the pool's base of the values of (block, offset in block, kv head) and of its
    // scale (int8).
    constexpr int64_t value_offset(int64_t block, int32_t o, int32_t h) const {
        return block * block_bytes() + o * slot_bytes() + h * head_bytes();
    }
    constexpr int64_t scale_offset(int64_t block, int32_t o, int32_t h) const {
        return block * block_bytes() + values_bytes() + int64_t{4} * (o * num_kv_heads + h);
    }
};

// ---- Element conversions (the reference every backend's kernels match) ----

// OCP FP8 E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa bits; 0x7F / 0xFF are NaN; no inf.
uint8_t fp32_to_fp8_e4m3(float x); // round to nearest even, saturating to +-448; NaN -> 0x7F
float fp8_e4m3_to_fp32(uint8_t b);
// FP8 E5M2: 1 sign, 5 exponent (bias 15), 2 mantissa bits (the top byte of an fp16).
uint8_t fp32_to_fp8_e5m2(float x); // round to nearest even, saturating to +-57344; NaN -> 0x7F
float fp8_e5m2_to_fp32(uint8_t b);

// int8 row quantization: scale = amax / 127; q[i] = rne(x[i] * (127 / amax)) (0 when amax == 0).
// Returns the scale.
float kv_quantize_int8(const float* x, int32_t n, int8_t* q);

// Writes one row of n floats x (one token's K or V of one KV head) as `dtype` at dst; for int8
// the row's scale goes to *scale_dst; fp8 stores x * inv_scale (inv_scale = 1 / the layer's
// scale). The scalar reference of kernels::kv_write.
void kv_store_row_ref(KvDtype dtype, const float* x, int32_t n, void* dst, float* scale_dst,
                      float inv_scale);
// Reads one stored row back as floats: plain types as stored, fp8 times `scale`, int8 times
// the row's scale (row_scale).
void kv_load_row_ref(KvDtype dtype, const void* src, int32_t n, float row_scale, float scale,
                     float* out);

} // namespace llmwb
