// Portable integer matmul kernels (the Scalar SIMD level) for Q2_K, Q3_K, Q5_K and IQ4_XS. They
// read the weights in place and the AK activation format (matmul_kernels.h): int8 codes, one
// float scale per 256, int16 sums per 16. The offsets of the weight codes (Q2_K/Q5_K mins, Q3_K's
// 4) are applied through those sums.
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_blocks.h"

namespace llmwb::kernels::detail {

namespace {

struct AK {
    const int8_t* q;
    const float* d;
    const int16_t* bsum;
    AK(const uint8_t* a, const AKLayout& L)
        : q(reinterpret_cast<const int8_t*>(a)), d(reinterpret_cast<const float*>(a + L.d_off)),
          bsum(reinterpret_cast<const int16_t*>(a + L.bsum_off)) {}
};

float dot_q2_k(const BlockQ2_K* w, const uint8_t* a, const AKLayout& L, int64_t nb) {
    const AK x(a, L);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const int8_t* qb = x.q + 256 * b;
        int sum_scaled = 0, sum_mins = 0;
        for (int h = 0; h < 2; ++h) {
            const uint8_t* qs = w[b].qs + 32 * h;
            for (int k = 0; k < 4; ++k) {
                for (int half = 0; half < 2; ++half) {
                    const int j = 8 * h + 2 * k + half;
                    const int8_t* xj = qb + 16 * j;
                    int acc = 0;
                    for (int l = 0; l < 16; ++l)
                        acc += ((qs[16 * half + l] >> (2 * k)) & 3) * xj[l];
                    sum_scaled += (w[b].scales[j] & 0xF) * acc;
                    sum_mins += (w[b].scales[j] >> 4) * x.bsum[16 * b + j];
                }
            }
        }
        s += x.d[b] * (fp16_to_fp32(w[b].d) * static_cast<float>(sum_scaled) -
                       fp16_to_fp32(w[b].dmin) * static_cast<float>(sum_mins));
    }
    return s;
}

float dot_q3_k(const BlockQ3_K* w, const uint8_t* a, const AKLayout& L, int64_t nb) {
    const AK x(a, L);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const int8_t* qb = x.q + 256 * b;
        int acc_all = 0;
        for (int h = 0; h < 2; ++h) {
            const uint8_t* qs = w[b].qs + 32 * h;
            for (int k = 0; k < 4; ++k) {
                const int bit = 4 * h + k;
                for (int half = 0; half < 2; ++half) {
                    const int j = 8 * h + 2 * k + half;
                    const int8_t* xj = qb + 16 * j;
                    int acc = 0;
                    for (int l = 0; l < 16; ++l) {
                        const int i = 16 * half + l;
                        const int u =
                            ((qs[i] >> (2 * k)) & 3) | (((w[b].hmask[i] >> bit) & 1) << 2);
                        acc += u * xj[l]; // code u - 4: the 4 through the sums
                    }
                    acc_all += (q3k_scale(w[b].scales, j) - 32) * (acc - 4 * x.bsum[16 * b + j]);
                }
            }
        }
        s += x.d[b] * fp16_to_fp32(w[b].d) * static_cast<float>(acc_all);
    }
    return s;
}

float dot_q5_k(const BlockQ5_K* w, const uint8_t* a, const AKLayout& L, int64_t nb) {
    const AK x(a, L);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const int8_t* qb = x.q + 256 * b;
        int sum_scaled = 0, sum_mins = 0;
        for (int j = 0; j < 8; ++j) {
            uint8_t sc, m;
            q4k_scale_min(w[b].scales, j, &sc, &m);
            const uint8_t* qs = w[b].qs + 32 * (j / 2);
            const int shift = (j & 1) * 4;
            int acc = 0;
            for (int l = 0; l < 32; ++l) {
                const int u = ((qs[l] >> shift) & 0xF) | (((w[b].qh[l] >> j) & 1) << 4);
                acc += u * qb[32 * j + l];
            }
            sum_scaled += sc * acc;
            sum_mins += m * (x.bsum[16 * b + 2 * j] + x.bsum[16 * b + 2 * j + 1]);
        }
        s += x.d[b] * (fp16_to_fp32(w[b].d) * static_cast<float>(sum_scaled) -
                       fp16_to_fp32(w[b].dmin) * static_cast<float>(sum_mins));
    }
    return s;
}

float dot_iq4_xs(const BlockIQ4_XS* w, const uint8_t* a, const AKLayout& L, int64_t nb) {
    const AK x(a, L);
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const int8_t* qb = x.q + 256 * b;
        int acc_all = 0;
        for (int j = 0; j < 8; ++j) {
            const uint8_t* qs = w[b].qs + 16 * j;
            const int8_t* xj = qb + 32 * j;
            int acc = 0;
            for (int l = 0; l < 16; ++l)
                acc += kIQ4Values[qs[l] & 0xF] * xj[l] + kIQ4Values[qs[l] >> 4] * xj[l + 16];
            acc_all += (iq4xs_scale(w[b], j) - 32) * acc;
        }
        s += x.d[b] * fp16_to_fp32(w[b].d) * static_cast<float>(acc_all);
    }
    return s;
}

template <class Block, float (*Dot)(const Block*, const uint8_t*, const AKLayout&, int64_t)>
void tile_kx(const TileArgs& p) {
    const AKLayout L(p.cols);
    const int64_t nb = p.cols / 256;
    for (int r = 0; r < p.nr; ++r) {
        const auto* w = reinterpret_cast<const Block*>(p.w + r * p.w_stride);
        for (int t = 0; t < p.nt; ++t)
            p.y[t * p.ldy + r] = Dot(w, p.a + t * p.a_stride, L, nb);
    }
}

const MatmulKernel kQ2_K{ak_bytes, prepare_act_ak, tile_kx<BlockQ2_K, dot_q2_k>};
const MatmulKernel kQ3_K{ak_bytes, prepare_act_ak, tile_kx<BlockQ3_K, dot_q3_k>};
const MatmulKernel kQ5_K{ak_bytes, prepare_act_ak, tile_kx<BlockQ5_K, dot_q5_k>};
const MatmulKernel kIQ4_XS{ak_bytes, prepare_act_ak, tile_kx<BlockIQ4_XS, dot_iq4_xs>};

} // namespace

const MatmulKernel* scalar_kx_matmul_kernel(DType t) {
    switch (t) {
    case DType::Q2_K:
        return &kQ2_K;
    case DType::Q3_K:
        return &kQ3_K;
    case DType::Q5_K:
        return &kQ5_K;
    case DType::IQ4_XS:
        return &kIQ4_XS;
    default:
        break;
    }
    return nullptr;
}

} // namespace llmwb::kernels::detail
