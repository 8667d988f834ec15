// Portable matmul kernels (the Scalar SIMD level) and the scalar activation quantizers.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_blocks.h"

namespace llmwb::kernels::detail {

namespace {

int8_t quant_i8(float v, float id) {
    return static_cast<int8_t>(std::clamp(static_cast<int>(std::nearbyint(v * id)), -127, 127));
}

} // namespace

void prepare_act_a32(const float* x, int64_t cols, uint8_t* dst, bool biased) {
    const A32Layout L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* ds = reinterpret_cast<float*>(dst + L.ds_off);
    for (int64_t b = 0; b < cols / 32; ++b) {
        const float* xb = x + 32 * b;
        float amax = 0.0f;
        for (int i = 0; i < 32; ++i)
            amax = std::max(amax, std::fabs(xb[i]));
        const float scale = amax / 127.0f;
        const float id = amax > 0 ? 127.0f / amax : 0.0f;
        int sum = 0;
        for (int i = 0; i < 32; ++i) {
            const int8_t q = quant_i8(xb[i], id);
            sum += q;
            dst[32 * b + i] = static_cast<uint8_t>(biased ? q + 128 : static_cast<uint8_t>(q));
        }
        d[b] = scale;
        ds[b] = scale * static_cast<float>(sum);
    }
}

void prepare_act_ak(const float* x, int64_t cols, uint8_t* dst) {
    const AKLayout L(cols);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* bsum = reinterpret_cast<int16_t*>(dst + L.bsum_off);
    auto* q = reinterpret_cast<int8_t*>(dst);
    for (int64_t b = 0; b < cols / 256; ++b) {
        const float* xb = x + 256 * b;
        float amax = 0.0f;
        for (int i = 0; i < 256; ++i)
            amax = std::max(amax, std::fabs(xb[i]));
        const float id = amax > 0 ? 127.0f / amax : 0.0f;
        d[b] = amax / 127.0f;
        for (int g = 0; g < 16; ++g) {
            int sum = 0;
            for (int i = 0; i < 16; ++i) {
                const int8_t v = quant_i8(xb[16 * g + i], id);
                q[256 * b + 16 * g + i] = v;
                sum += v;
            }
            bsum[16 * b + g] = static_cast<int16_t>(sum);
        }
    }
}

namespace {

// ---- float weights: fp32 activations -------------------------------------------------------

template <class Load> void tile_float(const TileArgs& p, Load load) {
    for (int r = 0; r < p.nr; ++r) {
        const uint8_t* w = p.w + r * p.w_stride;
        for (int t = 0; t < p.nt; ++t) {
            const auto* x = reinterpret_cast<const float*>(p.a + t * p.a_stride);
            float acc[8] = {};
            int64_t c = 0;
            for (; c + 8 <= p.cols; c += 8)
                for (int k = 0; k < 8; ++k)
                    acc[k] += load(w, c + k) * x[c + k];
            float s = 0.0f;
            for (; c < p.cols; ++c)
                s += load(w, c) * x[c];
            for (int k = 0; k < 8; ++k)
                s += acc[k];
            p.y[t * p.ldy + r] = s;
        }
    }
}

void tile_f32(const TileArgs& p) {
    tile_float(p, [](const uint8_t* w, int64_t i) { return reinterpret_cast<const float*>(w)[i]; });
}
void tile_f16(const TileArgs& p) {
    tile_float(p, [](const uint8_t* w, int64_t i) {
        return fp16_to_fp32(reinterpret_cast<const uint16_t*>(w)[i]);
    });
}
void tile_bf16(const TileArgs& p) {
    tile_float(p, [](const uint8_t* w, int64_t i) {
        return bf16_to_fp32(reinterpret_cast<const uint16_t*>(w)[i]);
    });
}

// ---- quantized weights: 8-bit activations ---------------------------------------------------

float dot_q8_0(const BlockQ8_0* w, const uint8_t* a, const A32Layout& L, int64_t nb) {
    const auto* q = reinterpret_cast<const int8_t*>(a);
    const auto* d = reinterpret_cast<const float*>(a + L.d_off);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int acc = 0;
        for (int i = 0; i < 32; ++i)
            acc += w[b].qs[i] * q[32 * b + i];
        s += fp16_to_fp32(w[b].d) * d[b] * static_cast<float>(acc);
    }
    return s;
}

float dot_q4_0(const BlockQ4_0* w, const uint8_t* a, const A32Layout& L, int64_t nb) {
    const auto* q = reinterpret_cast<const int8_t*>(a);
    const auto* d = reinterpret_cast<const float*>(a + L.d_off);
    const auto* ds = reinterpret_cast<const float*>(a + L.ds_off);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int acc = 0;
        const int8_t* qb = q + 32 * b;
        for (int i = 0; i < 16; ++i)
            acc += (w[b].qs[i] & 0xF) * qb[i] + (w[b].qs[i] >> 4) * qb[i + 16];
        s += fp16_to_fp32(w[b].d) * (d[b] * static_cast<float>(acc) - 8.0f * ds[b]);
    }
    return s;
}

float dot_q4_k(const BlockQ4_K* w, const uint8_t* a, const AKLayout& L, int64_t nb) {
    const auto* q = reinterpret_cast<const int8_t*>(a);
    const auto* d = reinterpret_cast<const float*>(a + L.d_off);
    const auto* bsum = reinterpret_cast<const int16_t*>(a + L.bsum_off);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const int8_t* qb = q + 256 * b;
        int sum_scaled = 0, sum_mins = 0;
        for (int j = 0; j < 8; ++j) {
            uint8_t sc, m;
            q4k_scale_min(w[b].scales, j, &sc, &m);
            const uint8_t* qs = w[b].qs + 32 * (j / 2);
            const int shift = (j & 1) * 4;
            int acc = 0;
            for (int l = 0; l < 32; ++l)
                acc += ((qs[l] >> shift) & 0xF) * qb[32 * j + l];
            sum_scaled += sc * acc;
            sum_mins += m * (bsum[16 * b + 2 * j] + bsum[16 * b + 2 * j + 1]);
        }
        s += d[b] * (fp16_to_fp32(w[b].d) * static_cast<float>(sum_scaled) -
                     fp16_to_fp32(w[b].dmin) * static_cast<float>(sum_mins));
    }
    return s;
}

float dot_q6_k(const BlockQ6_K* w, const uint8_t* a, const AKLayout& L, int64_t nb) {
    const auto* q = reinterpret_cast<const int8_t*>(a);
    const auto* d = reinterpret_cast<const float*>(a + L.d_off);
    const auto* bsum = reinterpret_cast<const int16_t*>(a + L.bsum_off);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const int8_t* qb = q + 256 * b;
        int group[16] = {};
        for (int h = 0; h < 2; ++h) {
            const uint8_t* ql = w[b].ql + 64 * h;
            const uint8_t* qh = w[b].qh + 32 * h;
            const int8_t* x = qb + 128 * h;
            for (int l = 0; l < 32; ++l) {
                const int q0 = (ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4);
                const int q1 = (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4);
                const int q2 = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
                const int q3 = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
                group[8 * h + l / 16] += q0 * x[l];
                group[8 * h + 2 + l / 16] += q1 * x[l + 32];
                group[8 * h + 4 + l / 16] += q2 * x[l + 64];
                group[8 * h + 6 + l / 16] += q3 * x[l + 96];
            }
        }
        int acc = 0;
        for (int g = 0; g < 16; ++g)
            acc += w[b].scales[g] * (group[g] - 32 * bsum[16 * b + g]);
        s += d[b] * fp16_to_fp32(w[b].d) * static_cast<float>(acc);
    }
    return s;
}

template <class Block, class Layout, int kElems,
          float (*Dot)(const Block*, const uint8_t*, const Layout&, int64_t)>
void tile_quant(const TileArgs& p) {
    const Layout L(p.cols);
    const int64_t nb = p.cols / kElems;
    for (int r = 0; r < p.nr; ++r) {
        const auto* w = reinterpret_cast<const Block*>(p.w + r * p.w_stride);
        for (int t = 0; t < p.nt; ++t)
            p.y[t * p.ldy + r] = Dot(w, p.a + t * p.a_stride, L, nb);
    }
}

const MatmulKernel kF32{nullptr, nullptr, tile_f32};
const MatmulKernel kF16{nullptr, nullptr, tile_f16};
const MatmulKernel kBF16{nullptr, nullptr, tile_bf16};
const MatmulKernel kQ8_0{a32_bytes, prep_a32, tile_quant<BlockQ8_0, A32Layout, 32, dot_q8_0>};
const MatmulKernel kQ4_0{a32_bytes, prep_a32, tile_quant<BlockQ4_0, A32Layout, 32, dot_q4_0>};
const MatmulKernel kQ4_K{ak_bytes, prepare_act_ak, tile_quant<BlockQ4_K, AKLayout, 256, dot_q4_k>};
const MatmulKernel kQ6_K{ak_bytes, prepare_act_ak, tile_quant<BlockQ6_K, AKLayout, 256, dot_q6_k>};

} // namespace

const MatmulKernel* scalar_matmul_kernel(DType t) {
    switch (t) {
    case DType::F32:
        return &kF32;
    case DType::F16:
        return &kF16;
    case DType::BF16:
        return &kBF16;
    case DType::Q8_0:
        return &kQ8_0;
    case DType::Q4_0:
        return &kQ4_0;
    case DType::Q4_K:
        return &kQ4_K;
    case DType::Q6_K:
        return &kQ6_K;
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL:
        return scalar_q32x_matmul_kernel(t);
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q5_K:
    case DType::IQ4_XS:
        return scalar_kx_matmul_kernel(t);
    }
    return nullptr;
}

} // namespace llmwb::kernels::detail
