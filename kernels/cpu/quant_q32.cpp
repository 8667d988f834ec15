// Q4_1, Q5_0, Q5_1 and IQ4_NL (32-element blocks): dequantization (GGML layouts) and
// deterministic quantizers (round to nearest after a scale search, weighted by the optional
// per-element importance). Scales saturate at the largest finite fp16, so any finite input
// gives finite output.
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

// fp16 of v, saturated to the largest finite fp16 (values beyond it cannot be represented; a
// saturated scale keeps the output finite where an infinite one would give inf or NaN).
uint16_t half_finite(float v) {
    if (!(v == v))
        return 0;
    return fp32_to_fp16(std::clamp(v, -65504.0f, 65504.0f));
}

// Affine fit x ~ d * q + m, q in [0, kMax], for one block: candidates are GGML's min/max map and,
// for a few scales around it, the weighted least-squares (d, m) of the codes it gives; each is
// scored with its fp16-rounded d and m and the codes recomputed from them, so the result is never
// worse (in the weighted squared error) than the plain min/max reference.
template <int kMax>
void fit_affine_block(const float* x, const float* w, uint16_t* d_out, uint16_t* m_out,
                      int* q_out) {
    float lo = x[0], hi = x[0];
    for (int j = 1; j < 32; ++j) {
        lo = std::min(lo, x[j]);
        hi = std::max(hi, x[j]);
    }
    auto score = [&](uint16_t dh, uint16_t mh, int* q) {
        const float dq = fp16_to_fp32(dh), mq = fp16_to_fp32(mh);
        const float id = dq != 0.0f ? 1.0f / dq : 0.0f;
        double err = 0;
        for (int j = 0; j < 32; ++j) {
            q[j] = round_clamp((x[j] - mq) * id, 0, kMax);
            const double e = static_cast<double>(dq) * q[j] + mq - x[j];
            err += (w ? w[j] : 1.0) * e * e;
        }
        return err;
    };
    *d_out = half_finite((hi - lo) / static_cast<float>(kMax));
    *m_out = half_finite(lo);
    double best = score(*d_out, *m_out, q_out);
    if (!(hi > lo) || !std::isfinite(hi - lo))
        return;
    int q[32];
    for (int k = -4; k <= 4; ++k) {
        const float iscale = (static_cast<float>(kMax) + 0.15f * static_cast<float>(k)) / (hi - lo);
        double sw = 0, sq = 0, sx = 0, sqq = 0, sqx = 0;
        for (int j = 0; j < 32; ++j) {
            const double wj = w ? w[j] : 1.0;
            q[j] = round_clamp((x[j] - lo) * iscale, 0, kMax);
            sw += wj;
            sq += wj * q[j];
            sx += wj * x[j];
            sqq += wj * q[j] * q[j];
            sqx += wj * q[j] * x[j];
        }
        const double den = sw * sqq - sq * sq;
        if (!(den > 0) || !(sw > 0))
            continue;
        const double d = (sw * sqx - sq * sx) / den;
        if (!(d > 0))
            continue;
        const uint16_t dh = half_finite(static_cast<float>(d));
        const uint16_t mh = half_finite(static_cast<float>((sx - d * sq) / sw));
        const double err = score(dh, mh, q);
        if (err < best) {
            best = err;
            *d_out = dh;
            *m_out = mh;
            std::copy(q, q + 32, q_out);
        }
    }
}

template <int kMax, class Block>
void quantize_affine(const float* x, Block* b, int64_t n, const float* w, uint32_t* qh_out) {
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        int q[32];
        fit_affine_block<kMax>(x, sub(w, i * kQK), &b[i].d, &b[i].m, q);
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
        b[i].d = half_finite(s);
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
        b[i].d = half_finite(s);
        const float dq = fp16_to_fp32(b[i].d);
        const float id = dq != 0.0f ? 1.0f / dq : 0.0f;
        int q[32];
        for (int j = 0; j < 32; ++j)
            q[j] = detail::nearest_iq4(x[j] * id);
        pack_nibbles(q, b[i].qs);
    }
}

} // namespace llmwb::kernels
