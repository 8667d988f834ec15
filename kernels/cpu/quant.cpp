// fp16/bf16 conversions and row (de)quantization of F32, F16, BF16, Q4_0 and Q8_0; K-quants
// are in quant_k.cpp.
#include "kernels/cpu/quant.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>

#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quant_fit.h"

namespace llmwb::kernels {

float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1F;
    const uint32_t mant = h & 0x3FF;
    if (exp == 0) {
        // Zero or subnormal: mant * 2^-24, exact in fp32.
        const float v = static_cast<float>(mant) * 0x1p-24f;
        return std::bit_cast<float>(std::bit_cast<uint32_t>(v) | sign);
    }
    if (exp == 31)
        return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));
    return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t fp32_to_fp16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
    const uint32_t a = x & 0x7FFFFFFFu;
    if (a >= 0x7F800000u) { // inf or NaN (NaN stays a quiet NaN, keeping the top payload bits)
        if (a == 0x7F800000u)
            return sign | 0x7C00;
        return static_cast<uint16_t>(sign | 0x7E00 | ((a >> 13) & 0x3FF));
    }
    if (a >= 0x477FF000u)
        return sign | 0x7C00; // >= 65520 rounds to infinity
    if (a < 0x38800000u) {    // below 2^-14: fp16 subnormal or zero
        const uint32_t exp = a >> 23;
        if (exp < 102)
            return sign; // < 2^-25: rounds to zero (2^-25 itself ties to even 0)
        const uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
        const uint32_t shift = 126 - exp; // 14..24
        uint32_t m = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1);
        const uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (m & 1)))
            ++m;
        return static_cast<uint16_t>(sign | m);
    }
    uint32_t h = (a - 0x38000000u) >> 13;
    const uint32_t rem = a & 0x1FFF;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        ++h;
    return static_cast<uint16_t>(sign | h);
}

float bf16_to_fp32(uint16_t b) {
    return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

uint16_t fp32_to_bf16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u)
        return static_cast<uint16_t>((x >> 16) | 0x40); // quiet NaN
    return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1)) >> 16);
}

namespace {

void dequantize_q4_0(const BlockQ4_0* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = static_cast<float>((b[i].qs[j] & 0xF) - 8) * d;
            y[j + 16] = static_cast<float>((b[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantize_q8_0(const BlockQ8_0* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < kQK; ++j)
            y[j] = static_cast<float>(b[i].qs[j]) * d;
    }
}

// Q4_0: the element of largest magnitude maps to -8 (like GGML), so its sign is kept exactly.
// With importance weights, the scale is the weighted least-squares search of quant_fit.
void quantize_q4_0(const float* x, BlockQ4_0* b, int64_t n, const float* w) {
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0.0f, vmax = 0.0f;
        for (int j = 0; j < kQK; ++j) {
            if (std::fabs(x[j]) > amax) {
                amax = std::fabs(x[j]);
                vmax = x[j];
            }
        }
        const float d = w ? detail::fit_scale_sym(x, w + i * kQK, kQK, -8, 7) : vmax / -8.0f;
        const uint16_t dh = fp32_to_fp16(d);
        const float dq = fp16_to_fp32(dh);
        const float id = dq != 0.0f ? 1.0f / dq : 0.0f;
        b[i].d = dh;
        for (int j = 0; j < kQK / 2; ++j) {
            const int q0 = std::clamp(static_cast<int>(std::lround(x[j] * id)) + 8, 0, 15);
            const int q1 = std::clamp(static_cast<int>(std::lround(x[j + 16] * id)) + 8, 0, 15);
            b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

void quantize_q8_0(const float* x, BlockQ8_0* b, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j)
            amax = std::max(amax, std::fabs(x[j]));
        const uint16_t dh = fp32_to_fp16(amax / 127.0f);
        const float dq = fp16_to_fp32(dh);
        const float id = dq != 0.0f ? 1.0f / dq : 0.0f;
        b[i].d = dh;
        for (int j = 0; j < kQK; ++j)
            b[i].qs[j] = static_cast<int8_t>(
                std::clamp(static_cast<int>(std::lround(x[j] * id)), -127, 127));
    }
}

} // namespace

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
    assert(n % dtype_block_elems(t) == 0);
    switch (t) {
    case DType::F32:
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
        return;
    case DType::F16: {
        const auto* s = static_cast<const uint16_t*>(src);
        for (int64_t i = 0; i < n; ++i)
            dst[i] = fp16_to_fp32(s[i]);
        return;
    }
    case DType::BF16: {
        const auto* s = static_cast<const uint16_t*>(src);
        for (int64_t i = 0; i < n; ++i)
            dst[i] = bf16_to_fp32(s[i]);
        return;
    }
    case DType::Q4_0:
        dequantize_q4_0(static_cast<const BlockQ4_0*>(src), dst, n);
        return;
    case DType::Q8_0:
        dequantize_q8_0(static_cast<const BlockQ8_0*>(src), dst, n);
        return;
    case DType::Q4_K:
        dequantize_row_q4_k(static_cast<const BlockQ4_K*>(src), dst, n);
        return;
    case DType::Q6_K:
        dequantize_row_q6_k(static_cast<const BlockQ6_K*>(src), dst, n);
        return;
    case DType::Q4_1:
        dequantize_row_q4_1(static_cast<const BlockQ4_1*>(src), dst, n);
        return;
    case DType::Q5_0:
        dequantize_row_q5_0(static_cast<const BlockQ5_0*>(src), dst, n);
        return;
    case DType::Q5_1:
        dequantize_row_q5_1(static_cast<const BlockQ5_1*>(src), dst, n);
        return;
    case DType::IQ4_NL:
        dequantize_row_iq4_nl(static_cast<const BlockIQ4_NL*>(src), dst, n);
        return;
    case DType::Q2_K:
        dequantize_row_q2_k(static_cast<const BlockQ2_K*>(src), dst, n);
        return;
    case DType::Q3_K:
        dequantize_row_q3_k(static_cast<const BlockQ3_K*>(src), dst, n);
        return;
    case DType::Q5_K:
        dequantize_row_q5_k(static_cast<const BlockQ5_K*>(src), dst, n);
        return;
    case DType::IQ4_XS:
        dequantize_row_iq4_xs(static_cast<const BlockIQ4_XS*>(src), dst, n);
        return;
    }
}

void quantize_row(DType t, const float* src, void* dst, int64_t n, const float* w) {
    assert(n % dtype_block_elems(t) == 0);
    switch (t) {
    case DType::F32:
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
        return;
    case DType::F16: {
        auto* d = static_cast<uint16_t*>(dst);
        for (int64_t i = 0; i < n; ++i)
            d[i] = fp32_to_fp16(src[i]);
        return;
    }
    case DType::BF16: {
        auto* d = static_cast<uint16_t*>(dst);
        for (int64_t i = 0; i < n; ++i)
            d[i] = fp32_to_bf16(src[i]);
        return;
    }
    case DType::Q4_0:
        quantize_q4_0(src, static_cast<BlockQ4_0*>(dst), n, w);
        return;
    case DType::Q8_0:
        quantize_q8_0(src, static_cast<BlockQ8_0*>(dst), n);
        return;
    case DType::Q4_K:
        quantize_row_q4_k(src, static_cast<BlockQ4_K*>(dst), n, w);
        return;
    case DType::Q6_K:
        quantize_row_q6_k(src, static_cast<BlockQ6_K*>(dst), n, w);
        return;
    case DType::Q4_1:
        quantize_row_q4_1(src, static_cast<BlockQ4_1*>(dst), n, w);
        return;
    case DType::Q5_0:
        quantize_row_q5_0(src, static_cast<BlockQ5_0*>(dst), n, w);
        return;
    case DType::Q5_1:
        quantize_row_q5_1(src, static_cast<BlockQ5_1*>(dst), n, w);
        return;
    case DType::IQ4_NL:
        quantize_row_iq4_nl(src, static_cast<BlockIQ4_NL*>(dst), n, w);
        return;
    case DType::Q2_K:
        quantize_row_q2_k(src, static_cast<BlockQ2_K*>(dst), n, w);
        return;
    case DType::Q3_K:
        quantize_row_q3_k(src, static_cast<BlockQ3_K*>(dst), n, w);
        return;
    case DType::Q5_K:
        quantize_row_q5_k(src, static_cast<BlockQ5_K*>(dst), n, w);
        return;
    case DType::IQ4_XS:
        quantize_row_iq4_xs(src, static_cast<BlockIQ4_XS*>(dst), n, w);
        return;
    }
}

} // namespace llmwb::kernels
