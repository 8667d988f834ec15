// Portable integer kernels (the Scalar SIMD level) for Q4_1, Q5_0, Q5_1 and IQ4_NL weights, used
// in place, with the activations in the A32 format (matmul_kernels.h: per 32-block int8 codes q,
// scale d and ds = d * sum(q)). Per block b of a row and a token, with S = sum(code * q):
//   Q4_1, Q5_1: d_w * d_x * S + m * ds        (value = d_w * code + m)
//   Q5_0:       d_w * (d_x * S - 16 * ds)     (value = d_w * (code - 16))
//   IQ4_NL:     d_w * d_x * S, code -> kIQ4Values[code]
// The SIMD levels compute the same integer sums; only their float summation order differs.
#include <cstring>

#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_blocks.h"

namespace llmwb::kernels::detail {

namespace {

// The 32 codes of a block with 4-bit nibbles qs and, when qh is given, a fifth bit from it.
// Byte k of kHighBits[b] is 16 when bit k of b is set: 8 elements' fifth bits at once.
struct HighBits {
    uint64_t v[256];
};
constexpr HighBits kHighBits = [] {
    HighBits t{};
    for (int b = 0; b < 256; ++b)
        for (int k = 0; k < 8; ++k)
            if ((b >> k) & 1)
                t.v[b] |= uint64_t{16} << (8 * k);
    return t;
}();

// (int8 codes and int16 products: loops the compiler vectorizes with SSE2.)
inline void unpack_codes(const uint8_t* qs, const uint8_t* qh, int8_t* code) {
    uint8_t hi[32] = {};
    if (qh)
        for (int k = 0; k < 4; ++k)
            std::memcpy(hi + 8 * k, &kHighBits.v[qh[k]], 8);
    for (int j = 0; j < 16; ++j) {
        code[j] = static_cast<int8_t>((qs[j] & 0xF) | hi[j]);
        code[j + 16] = static_cast<int8_t>((qs[j] >> 4) | hi[j + 16]);
    }
}

inline int dot32(const int8_t* code, const int8_t* q) {
    int acc = 0;
    for (int j = 0; j < 32; ++j)
        acc += static_cast<int16_t>(code[j] * q[j]);
    return acc;
}

struct ActRow {
    const int8_t* q;
    const float* d;
    const float* ds;
    ActRow(const uint8_t* a, const A32Layout& L)
        : q(reinterpret_cast<const int8_t*>(a)), d(reinterpret_cast<const float*>(a + L.d_off)),
          ds(reinterpret_cast<const float*>(a + L.ds_off)) {}
};

float dot_q4_1(const uint8_t* row, const ActRow& x, int64_t nb) {
    const auto* w = reinterpret_cast<const BlockQ4_1*>(row);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int8_t code[32];
        unpack_codes(w[b].qs, nullptr, code);
        const float S = static_cast<float>(dot32(code, x.q + 32 * b));
        s += fp16_to_fp32(w[b].d) * x.d[b] * S + fp16_to_fp32(w[b].m) * x.ds[b];
    }
    return s;
}

float dot_q5_1(const uint8_t* row, const ActRow& x, int64_t nb) {
    const auto* w = reinterpret_cast<const BlockQ5_1*>(row);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int8_t code[32];
        unpack_codes(w[b].qs, w[b].qh, code);
        const float S = static_cast<float>(dot32(code, x.q + 32 * b));
        s += fp16_to_fp32(w[b].d) * x.d[b] * S + fp16_to_fp32(w[b].m) * x.ds[b];
    }
    return s;
}

float dot_q5_0(const uint8_t* row, const ActRow& x, int64_t nb) {
    const auto* w = reinterpret_cast<const BlockQ5_0*>(row);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int8_t code[32];
        unpack_codes(w[b].qs, w[b].qh, code);
        const float S = static_cast<float>(dot32(code, x.q + 32 * b));
        s += fp16_to_fp32(w[b].d) * (x.d[b] * S - 16.0f * x.ds[b]);
    }
    return s;
}

float dot_iq4_nl(const uint8_t* row, const ActRow& x, int64_t nb) {
    const auto* w = reinterpret_cast<const BlockIQ4_NL*>(row);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int8_t code[32];
        unpack_codes(w[b].qs, nullptr, code);
        for (int8_t& c : code)
            c = kIQ4Values[c];
        const float S = static_cast<float>(dot32(code, x.q + 32 * b));
        s += fp16_to_fp32(w[b].d) * x.d[b] * S;
    }
    return s;
}

template <float (*Dot)(const uint8_t*, const ActRow&, int64_t)> void tile_q32x(const TileArgs& p) {
    const A32Layout L(p.cols);
    const int64_t nb = p.cols / 32;
    for (int r = 0; r < p.nr; ++r) {
        const uint8_t* w = p.w + static_cast<size_t>(r) * p.w_stride;
        for (int t = 0; t < p.nt; ++t)
            p.y[t * p.ldy + r] = Dot(w, ActRow(p.a + static_cast<size_t>(t) * p.a_stride, L), nb);
    }
}

const MatmulKernel kQ4_1{a32_bytes, prep_a32, tile_q32x<dot_q4_1>};
const MatmulKernel kQ5_0{a32_bytes, prep_a32, tile_q32x<dot_q5_0>};
const MatmulKernel kQ5_1{a32_bytes, prep_a32, tile_q32x<dot_q5_1>};
const MatmulKernel kIQ4_NL{a32_bytes, prep_a32, tile_q32x<dot_iq4_nl>};

} // namespace

const MatmulKernel* scalar_q32x_matmul_kernel(DType t) {
    switch (t) {
    case DType::Q4_1:
        return &kQ4_1;
    case DType::Q5_0:
        return &kQ5_0;
    case DType::Q5_1:
        return &kQ5_1;
    case DType::IQ4_NL:
        return &kIQ4_NL;
    default:
        return nullptr;
    }
}

} // namespace llmwb::kernels::detail
