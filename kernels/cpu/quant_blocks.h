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

static_assert(sizeof(BlockQ4_0) == dtype_block_bytes(DType::Q4_0));
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

// K-quant row (de)quantizers (quant_k.cpp); n is a multiple of 256.
void dequantize_row_q4_k(const BlockQ4_K* src, float* dst, int64_t n);
void dequantize_row_q6_k(const BlockQ6_K* src, float* dst, int64_t n);
void quantize_row_q4_k(const float* src, BlockQ4_K* dst, int64_t n);
void quantize_row_q6_k(const float* src, BlockQ6_K* dst, int64_t n);

} // namespace llmwb::kernels
