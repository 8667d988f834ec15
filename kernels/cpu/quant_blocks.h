// GGML block layouts of the quantized types (byte-exact with GGUF files), shared by the
// (de)quantizers and the dot-product kernels. Internal to kernels/cpu.
#pragma once

#include <cstdint>

#include "kernels/cpu/dtype.h"

namespace llmwb::kernels {

constexpr int kQK = 32;   // elements per Q4_0 / Q8_0 block
constexpr int kQKK = 256; // elements per K-quant super-block

// value[j] = (nibble - 8) * d; qs[j] low nibble = element j, high nibble = element j + 16.
struct BlockQ4_0 {
    uint16_t d; // fp16
    uint8_t qs[kQK / 2];
};

// value[j] = nibble * d + m; nibbles as Q4_0.
struct BlockQ4_1 {
    uint16_t d; // fp16
    uint16_t m; // fp16
    uint8_t qs[kQK / 2];
};

// value[j] = (q - 16) * d with q 5-bit: the low 4 bits as Q4_0's nibbles, bit 4 of element j is
// bit j of the little-endian uint32 in qh.
struct BlockQ5_0 {
    uint16_t d; // fp16
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};

// value[j] = q * d + m with q 5-bit as Q5_0.
struct BlockQ5_1 {
    uint16_t d; // fp16
    uint16_t m; // fp16
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};

// value[j] = qs[j] * d
struct BlockQ8_0 {
    uint16_t d; // fp16
    int8_t qs[kQK];
};

// 8 sub-blocks of 32: value = d * sc[j] * q - dmin * m[j], sc/m 6-bit packed in `scales`.
// qs[32 * c + l]: low nibble = element 64c + l, high nibble = element 64c + 32 + l.
struct BlockQ4_K {
    uint16_t d;    // fp16 scale of the sub-block scales
    uint16_t dmin; // fp16 scale of the sub-block mins
    uint8_t scales[12];
    uint8_t qs[kQKK / 2];
};

// 16 sub-blocks of 16: value = d * (scales[j] & 15) * q - dmin * (scales[j] >> 4), q 2-bit.
// For each half h (128 elements, q' = qs + 32h), shift s (0, 2, 4, 6) and l < 32:
//   element 128h + 32(s/2) + l = (q'[l] >> s) & 3, sub-block 8h + 2(s/2) + l/16.
struct BlockQ2_K {
    uint8_t scales[kQKK / 16];
    uint8_t qs[kQKK / 4];
    uint16_t d;    // fp16
    uint16_t dmin; // fp16
};

// 16 sub-blocks of 16: value = d * (sc[j] - 32) * (q - 4 * !hbit), q 2-bit as Q2_K's, hbit of
// element 128h + 32k + l is bit (4h + k) of hmask[l]; sc 6-bit packed (q3k_scale).
struct BlockQ3_K {
    uint8_t hmask[kQKK / 8];
    uint8_t qs[kQKK / 4];
    uint8_t scales[12];
    uint16_t d; // fp16
};

// As Q4_K with a fifth bit: element 64c + l has bit 2c of qh[l], element 64c + 32 + l bit 2c+1.
struct BlockQ5_K {
    uint16_t d;    // fp16
    uint16_t dmin; // fp16
    uint8_t scales[12];
    uint8_t qh[kQKK / 8];
    uint8_t qs[kQKK / 2];
};

// 16 sub-blocks of 16: value = d * scales[j] * (q - 32), q 6-bit = 4 low bits in ql + 2 in qh.
// For each half h (128 elements) and l < 32, with ql' = ql + 64h, qh' = qh + 32h:
//   element 128h + l      : ql'[l] & 15,       (qh'[l] >> 0) & 3
//   element 128h + l + 32 : ql'[l + 32] & 15,  (qh'[l] >> 2) & 3
//   element 128h + l + 64 : ql'[l] >> 4,       (qh'[l] >> 4) & 3
//   element 128h + l + 96 : ql'[l + 32] >> 4,  (qh'[l] >> 6) & 3
struct BlockQ6_K {
    uint8_t ql[kQKK / 2];
    uint8_t qh[kQKK / 4];
    int8_t scales[kQKK / 16];
    uint16_t d; // fp16
};

// The non-linear 4-bit code book of IQ4_NL and IQ4_XS (value = d * kIQ4Values[code]).
inline constexpr int8_t kIQ4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};

// 32 elements: value[j] = d * kIQ4Values[code], codes packed as Q4_0's nibbles.
struct BlockIQ4_NL {
    uint16_t d; // fp16
    uint8_t qs[kQK / 2];
};

// 8 sub-blocks of 32: value = d * (ls - 32) * kIQ4Values[code], ls 6-bit: low 4 bits in
// scales_l[j / 2] >> 4(j % 2), high 2 bits in scales_h >> 2j; codes of sub-block j in
// qs[16j .. 16j + 16) packed as Q4_0's nibbles.
struct BlockIQ4_XS {
    uint16_t d; // fp16
    uint16_t scales_h;
    uint8_t scales_l[kQKK / 64];
    uint8_t qs[kQKK / 2];
};

static_assert(sizeof(BlockQ4_0) == dtype_block_bytes(DType::Q4_0));
static_assert(sizeof(BlockQ4_1) == dtype_block_bytes(DType::Q4_1));
static_assert(sizeof(BlockQ5_0) == dtype_block_bytes(DType::Q5_0));
static_assert(sizeof(BlockQ5_1) == dtype_block_bytes(DType::Q5_1));
static_assert(sizeof(BlockQ2_K) == dtype_block_bytes(DType::Q2_K));
static_assert(sizeof(BlockQ3_K) == dtype_block_bytes(DType::Q3_K));
static_assert(sizeof(BlockQ5_K) == dtype_block_bytes(DType::Q5_K));
static_assert(sizeof(BlockIQ4_NL) == dtype_block_bytes(DType::IQ4_NL));
static_assert(sizeof(BlockIQ4_XS) == dtype_block_bytes(DType::IQ4_XS));
static_assert(sizeof(BlockQ8_0) == dtype_block_bytes(DType::Q8_0));
static_assert(sizeof(BlockQ4_K) == dtype_block_bytes(DType::Q4_K));
static_assert(sizeof(BlockQ6_K) == dtype_block_bytes(DType::Q6_K));

// Unpacks the 6-bit scale and min of sub-block j (0..7) of a Q4_K block.
inline void q4k_scale_min(const uint8_t* s, int j, uint8_t* sc, uint8_t* m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = static_cast<uint8_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
        *m = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
    }
}

// The 6-bit scale (0..63, stored biased by 32) of sub-block j (0..15) of a Q3_K block.
inline int q3k_scale(const uint8_t* s, int j) {
    if (j < 4)
        return (s[j] & 0xF) | ((s[j + 8] & 3) << 4);
    if (j < 8)
        return (s[j] & 0xF) | (((s[j + 4] >> 2) & 3) << 4);
    if (j < 12)
        return (s[j - 8] >> 4) | (((s[j] >> 4) & 3) << 4);
    return (s[j - 8] >> 4) | (((s[j - 4] >> 6) & 3) << 4);
}

// The 6-bit scale (0..63, stored biased by 32) of sub-block j (0..7) of an IQ4_XS block.
inline int iq4xs_scale(const BlockIQ4_XS& b, int j) {
    return ((b.scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((b.scales_h >> (2 * j)) & 3) << 4);
}

// Row (de)quantizers; n is a multiple of the block size. w: per-element importance (n values)
// or nullptr.
// 32-element blocks (quant_q32.cpp):
void dequantize_row_q4_1(const BlockQ4_1* src, float* dst, int64_t n);
void dequantize_row_q5_0(const BlockQ5_0* src, float* dst, int64_t n);
void dequantize_row_q5_1(const BlockQ5_1* src, float* dst, int64_t n);
void dequantize_row_iq4_nl(const BlockIQ4_NL* src, float* dst, int64_t n);
void quantize_row_q4_1(const float* src, BlockQ4_1* dst, int64_t n, const float* w);
void quantize_row_q5_0(const float* src, BlockQ5_0* dst, int64_t n, const float* w);
void quantize_row_q5_1(const float* src, BlockQ5_1* dst, int64_t n, const float* w);
void quantize_row_iq4_nl(const float* src, BlockIQ4_NL* dst, int64_t n, const float* w);
// 256-element super-blocks (quant_k.cpp):
void dequantize_row_q2_k(const BlockQ2_K* src, float* dst, int64_t n);
void dequantize_row_q3_k(const BlockQ3_K* src, float* dst, int64_t n);
void dequantize_row_q4_k(const BlockQ4_K* src, float* dst, int64_t n);
void dequantize_row_q5_k(const BlockQ5_K* src, float* dst, int64_t n);
void dequantize_row_q6_k(const BlockQ6_K* src, float* dst, int64_t n);
void dequantize_row_iq4_xs(const BlockIQ4_XS* src, float* dst, int64_t n);
void quantize_row_q2_k(const float* src, BlockQ2_K* dst, int64_t n, const float* w);
void quantize_row_q3_k(const float* src, BlockQ3_K* dst, int64_t n, const float* w);
void quantize_row_q4_k(const float* src, BlockQ4_K* dst, int64_t n, const float* w);
void quantize_row_q5_k(const float* src, BlockQ5_K* dst, int64_t n, const float* w);
void quantize_row_q6_k(const float* src, BlockQ6_K* dst, int64_t n, const float* w);
void quantize_row_iq4_xs(const float* src, BlockIQ4_XS* dst, int64_t n, const float* w);

} // namespace llmwb::kernels
