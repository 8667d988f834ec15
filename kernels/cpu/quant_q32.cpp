// Q4_1, Q5_0, Q5_1 and IQ4_NL (32-element blocks): dequantization (GGML layouts) and
// deterministic quantizers (round to nearest after a scale search, weighted by the optional
// per-element importance).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quant_fit.h"

namespace llmwb::kernels {

using detail::round_clamp;

namespace {

uint32_t load_qh(const uint8_t* qh) {
    uint32_t v;
    std::memcpy(&v, qh, 4);
    return v;
}

void store_qh(uint8_t* qh, uint32_t v) {
    std::memcpy(qh, &v, 4);
}

// 5-bit code of element j (0..31) of a Q5_0 / Q5_1 block.
int q5_code(const uint8_t* qs, uint32_t qh, int j) {
    const int lo = j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4;
    return lo | static_cast<int>(((qh >> j) & 1) << 4);
}

void pack_nibbles(const int* q, uint8_t* qs) {
    for (int j = 0; j < 16; ++j)
        qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
}

uint32_t pack_q5(const int* q, uint8_t* qs) {
    pack_nibbles(q, qs);
    uint32_t qh = 0;
    for (int j = 0; j < 32; ++j)
        qh |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
    return qh;
}

const float* sub(const float* w, int64_t off) {
    return w ? w + off : nullptr;
}

} // namespace

void dequantize_row_q4_1(const BlockQ4_1* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
        for (int j = 0; j < 16; ++j) {
            y[j] = static_cast<float>(b[i].qs[j] & 0xF) * d + m;
            y[j + 16] = static_cast<float>(b[i].qs[j] >> 4) * d + m;
        }
    }
}

void dequantize_row_q5_0(const BlockQ5_0* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_fp32(b[i].d);
        const uint32_t qh = load_qh(b[i].qh);
        for (int j = 0; j < 32; ++j)
            y[j] = static_cast<float>(q5_code(b[i].qs, qh, j) - 16) * d;
    }
}

void dequantize_row_q5_1(const BlockQ5_1* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
        const uint32_t qh = load_qh(b[i].qh);
        for (int j = 0; j < 32; ++j)
            y[j] = static_cast<float>(q5_code(b[i].qs, qh, j)) * d + m;
    }
}

void dequantize_row_iq4_nl(const BlockIQ4_NL* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < 16; ++j) {
            y[j] = d * static_cast<float>(kIQ4Values[b[i].qs[j] & 0xF]);
            y[j + 16] = d * static_cast<float>(kIQ4Values[b[i].qs[j] >> 4]);
        }
    }
}

// Scale and offset fitted, rounded to fp16, and the codes computed with the stored values.
template <int kMax, class Block>
void quantize_affine(const float* x, Block* b, int64_t n, const float* w, uint32_t* qh_out) {
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float s, m;
        detail::fit_scale_offset(x, sub(w, i * kQK), kQK, kMax, &s, &m);
        b[i].d = fp32_to_fp16(s);
        b[i].m = fp32_to_fp16(m);
        const float dq = fp16_to_fp32(b[i].d), mq = fp16_to_fp32(b[i].m);
        const float id = dq != 0.0f ? 1.0f / dq : 0.0f;
        int q[32];
        for (int j = 0; j < 32; ++j)
            q[j] = round_clamp((x[j] - mq) * id, 0, kMax);
        if constexpr (kMax == 31)
            qh_out[i] = pack_q5(q, b[i].qs);
        else
            pack_nibbles(q, b[i].qs);
    }
}

void quantize_row_q4_1(const float* x, BlockQ4_1* b, int64_t n, const float* w) {
    quantize_affine<15>(x, b, n, w, nullptr);
}

void quantize_row_q5_1(const float* x, BlockQ5_1* b, int64_t n, const float* w) {
    for (int64_t i = 0; i < n / kQK; ++i) {
        uint32_t qh = 0;
        quantize_affine<31>(x + i * kQK, b + i, kQK, sub(w, i * kQK), &qh);
        store_qh(b[i].qh, qh);
    }
}

void quantize_row_q5_0(const float* x, BlockQ5_0* b, int64_t n, const float* w) {
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        const float s = detail::fit_scale_sym(x, sub(w, i * kQK), kQK, -16, 15);
        b[i].d = fp32_to_fp16(s);
        const float dq = fp16_to_fp32(b[i].d);
        const float id = dq != 0.0f ? 1.0f / dq : 0.0f;
        int q[32];
        for (int j = 0; j < 32; ++j)
            q[j] = round_clamp(x[j] * id, -16, 15) + 16;
        store_qh(b[i].qh, pack_q5(q, b[i].qs));
    }
}

void quantize_row_iq4_nl(const float* x, BlockIQ4_NL* b, int64_t n, const float* w) {
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        const float s = detail::fit_scale_iq4(x, sub(w, i * kQK), kQK);
        b[i].d = fp32_to_fp16(s);
        const float dq = fp16_to_fp32(b[i].d);
        const float id = dq != 0.0f ? 1.0f / dq : 0.0f;
        int q[32];
        for (int j = 0; j < 32; ++j)
            q[j] = detail::nearest_iq4(x[j] * id);
        pack_nibbles(q, b[i].qs);
    }
}

} // namespace llmwb::kernels
