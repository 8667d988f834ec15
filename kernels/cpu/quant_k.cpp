// K-quants (Q2_K .. Q6_K) and IQ4_XS: dequantization (GGML layouts) and simple deterministic
// quantizers.
// The quantizers search a few candidate scales per sub-block, refit each by least squares and
// keep the one with the smallest squared error; the sub-block scales are then quantized against
// a super-block scale and the values requantized with the scales actually stored.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quant_fit.h"

namespace llmwb::kernels {

void dequantize_row_q4_k(const BlockQ4_K* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        const float dmin = fp16_to_fp32(b[i].dmin);
        const uint8_t* q = b[i].qs;
        for (int c = 0; c < 4; ++c, q += 32, y += 64) {
            uint8_t sc0, m0, sc1, m1;
            q4k_scale_min(b[i].scales, 2 * c, &sc0, &m0);
            q4k_scale_min(b[i].scales, 2 * c + 1, &sc1, &m1);
            const float d0 = d * sc0, o0 = dmin * m0, d1 = d * sc1, o1 = dmin * m1;
            for (int l = 0; l < 32; ++l) {
                y[l] = d0 * static_cast<float>(q[l] & 0xF) - o0;
                y[l + 32] = d1 * static_cast<float>(q[l] >> 4) - o1;
            }
        }
    }
}

void dequantize_row_q6_k(const BlockQ6_K* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int h = 0; h < 2; ++h, y += 128) {
            const uint8_t* ql = b[i].ql + 64 * h;
            const uint8_t* qh = b[i].qh + 32 * h;
            const int8_t* sc = b[i].scales + 8 * h;
            for (int l = 0; l < 32; ++l) {
                const int s = l / 16;
                const int q0 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q1 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q2 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q3 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = d * static_cast<float>(sc[s] * q0);
                y[l + 32] = d * static_cast<float>(sc[s + 2] * q1);
                y[l + 64] = d * static_cast<float>(sc[s + 4] * q2);
                y[l + 96] = d * static_cast<float>(sc[s + 6] * q3);
            }
        }
    }
}

namespace {

using detail::round_clamp; // quant_fit.h (NaN and huge values handled)

// Fits x ~ s * q - m with q in [0, 15], s >= 0, m >= 0 over one sub-block of 32.
void fit_scale_min(const float* x, float* s_out, float* m_out) {
    float lo = 0.0f, hi = x[0];
    for (int i = 0; i < 32; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
    }
    if (hi <= lo) {
        *s_out = 0.0f;
        *m_out = -lo;
        return;
    }
    float best_err = INFINITY, best_s = (hi - lo) / 15.0f, best_m = -lo;
    for (int k = -4; k <= 4; ++k) {
        const float iscale = (15.0f + 0.25f * static_cast<float>(k)) / (hi - lo);
        int q[32];
        double sq = 0, sx = 0, sqq = 0, sqx = 0;
        for (int i = 0; i < 32; ++i) {
            q[i] = round_clamp((x[i] - lo) * iscale, 0, 15);
            sq += q[i];
            sx += x[i];
            sqq += static_cast<double>(q[i]) * q[i];
            sqx += static_cast<double>(q[i]) * x[i];
        }
        const double den = 32.0 * sqq - sq * sq;
        if (den <= 0)
            continue;
        double s = (32.0 * sqx - sq * sx) / den;
        double b = (sx - s * sq) / 32.0; // x ~ s q + b, b = -m must be <= 0
        if (b > 0) {
            b = 0;
            s = sqx / sqq;
        }
        if (s <= 0)
            continue;
        double err = 0;
        for (int i = 0; i < 32; ++i) {
            const double e = s * q[i] + b - x[i];
            err += e * e;
        }
        if (err < best_err) {
            best_err = static_cast<float>(err);
            best_s = static_cast<float>(s);
            best_m = static_cast<float>(-b);
        }
    }
    *s_out = best_s;
    *m_out = best_m;
}

// Fits x ~ s * q with q in [-32, 31] over one sub-block of 16 (s may be negative).
float fit_scale_sym6(const float* x) {
    float amax = 0.0f, vmax = 0.0f;
    for (int i = 0; i < 16; ++i) {
        if (std::fabs(x[i]) > amax) {
            amax = std::fabs(x[i]);
            vmax = x[i];
        }
    }
    if (amax == 0.0f)
        return 0.0f;
    float best_err = INFINITY, best_s = vmax / -32.0f;
    for (int k = -6; k <= 6; ++k) {
        const float s0 = vmax / (-32.0f + 0.5f * static_cast<float>(k));
        double sqq = 0, sqx = 0;
        int q[16];
        for (int i = 0; i < 16; ++i) {
            q[i] = round_clamp(x[i] / s0, -32, 31);
            sqq += static_cast<double>(q[i]) * q[i];
            sqx += static_cast<double>(q[i]) * x[i];
        }
        if (sqq <= 0)
            continue;
        const double s = sqx / sqq;
        double err = 0;
        for (int i = 0; i < 16; ++i) {
            const double e = s * q[i] - x[i];
            err += e * e;
        }
        if (err < best_err) {
            best_err = static_cast<float>(err);
            best_s = static_cast<float>(s);
        }
    }
    return best_s;
}

} // namespace

void quantize_row_q4_k(const float* x, BlockQ4_K* b, int64_t n, const float* w) {
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        float s[8], m[8], smax = 0.0f, mmax = 0.0f;
        for (int j = 0; j < 8; ++j) {
            if (w) // importance-weighted fit; without importance, the unweighted one (unchanged)
                detail::fit_scale_min(x + 32 * j, w + i * kQKK + 32 * j, 32, 15, &s[j], &m[j]);
            else
                fit_scale_min(x + 32 * j, &s[j], &m[j]);
            smax = std::max(smax, s[j]);
            mmax = std::max(mmax, m[j]);
        }
        BlockQ4_K& blk = b[i];
        blk.d = fp32_to_fp16(smax / 63.0f);
        blk.dmin = fp32_to_fp16(mmax / 63.0f);
        const float d = fp16_to_fp32(blk.d), dmin = fp16_to_fp32(blk.dmin);
        uint8_t sc[8], mn[8];
        for (int j = 0; j < 8; ++j) {
            sc[j] = static_cast<uint8_t>(d > 0 ? round_clamp(s[j] / d, 0, 63) : 0);
            mn[j] = static_cast<uint8_t>(dmin > 0 ? round_clamp(m[j] / dmin, 0, 63) : 0);
        }
        for (int j = 0; j < 4; ++j) {
            blk.scales[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
            blk.scales[j + 4] = static_cast<uint8_t>((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
            blk.scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4));
        }
        uint8_t q[kQKK];
        for (int j = 0; j < 8; ++j) {
            const float ds = d * sc[j], dm = dmin * mn[j];
            for (int l = 0; l < 32; ++l) {
                const float v = x[32 * j + l];
                q[32 * j + l] =
                    static_cast<uint8_t>(ds > 0 ? round_clamp((v + dm) / ds, 0, 15) : 0);
            }
        }
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 32; ++l)
                blk.qs[32 * c + l] =
                    static_cast<uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
    }
}

void quantize_row_q6_k(const float* x, BlockQ6_K* b, int64_t n, const float* w) {
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        float s[16], amax = 0.0f;
        for (int j = 0; j < 16; ++j) {
            s[j] = w ? detail::fit_scale_sym(x + 16 * j, w + i * kQKK + 16 * j, 16, -32, 31)
                     : fit_scale_sym6(x + 16 * j);
            amax = std::max(amax, std::fabs(s[j]));
        }
        BlockQ6_K& blk = b[i];
        blk.d = fp32_to_fp16(amax / 127.0f);
        const float d = fp16_to_fp32(blk.d);
        for (int j = 0; j < 16; ++j)
            blk.scales[j] = static_cast<int8_t>(d > 0 ? round_clamp(s[j] / d, -127, 127) : 0);
        uint8_t q[kQKK];
        for (int e = 0; e < kQKK; ++e) {
            const float ds = d * blk.scales[e / 16];
            q[e] = static_cast<uint8_t>(ds != 0 ? round_clamp(x[e] / ds, -32, 31) + 32 : 32);
        }
        std::memset(blk.ql, 0, sizeof blk.ql);
        std::memset(blk.qh, 0, sizeof blk.qh);
        for (int h = 0; h < 2; ++h) {
            uint8_t* ql = blk.ql + 64 * h;
            uint8_t* qh = blk.qh + 32 * h;
            const uint8_t* qq = q + 128 * h;
            for (int l = 0; l < 32; ++l) {
                ql[l] = static_cast<uint8_t>((qq[l] & 0xF) | ((qq[l + 64] & 0xF) << 4));
                ql[l + 32] = static_cast<uint8_t>((qq[l + 32] & 0xF) | ((qq[l + 96] & 0xF) << 4));
                qh[l] = static_cast<uint8_t>((qq[l] >> 4) | ((qq[l + 32] >> 4) << 2) |
                                             ((qq[l + 64] >> 4) << 4) | ((qq[l + 96] >> 4) << 6));
            }
        }
    }
}

} // namespace llmwb::kernels

// ---- Q2_K, Q3_K, Q5_K, IQ4_XS ----------------------------------------------------------------

namespace llmwb::kernels {

namespace {

// Packs 8 scales and 8 mins (6 bits each) as Q4_K / Q5_K store them.
void pack_k4_scales(const uint8_t* sc, const uint8_t* mn, uint8_t* s) {
    for (int j = 0; j < 4; ++j) {
        s[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        s[j + 4] = static_cast<uint8_t>((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
        s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4));
    }
}

} // namespace

void dequantize_row_q2_k(const BlockQ2_K* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_fp32(b[i].d), dmin = fp16_to_fp32(b[i].dmin);
        for (int h = 0; h < 2; ++h) {
            const uint8_t* q = b[i].qs + 32 * h;
            for (int k = 0; k < 4; ++k) {
                for (int l = 0; l < 32; ++l) {
                    const uint8_t sc = b[i].scales[8 * h + 2 * k + l / 16];
                    *y++ = d * static_cast<float>(sc & 0xF) *
                               static_cast<float>((q[l] >> (2 * k)) & 3) -
                           dmin * static_cast<float>(sc >> 4);
                }
            }
        }
    }
}

void dequantize_row_q3_k(const BlockQ3_K* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int h = 0; h < 2; ++h) {
            const uint8_t* q = b[i].qs + 32 * h;
            for (int k = 0; k < 4; ++k) {
                const int bit = 4 * h + k;
                for (int l = 0; l < 32; ++l) {
                    const int sc = q3k_scale(b[i].scales, 8 * h + 2 * k + l / 16) - 32;
                    const int code =
                        ((q[l] >> (2 * k)) & 3) - (((b[i].hmask[l] >> bit) & 1) ? 0 : 4);
                    *y++ = d * static_cast<float>(sc * code);
                }
            }
        }
    }
}

void dequantize_row_q5_k(const BlockQ5_K* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_fp32(b[i].d), dmin = fp16_to_fp32(b[i].dmin);
        for (int c = 0; c < 4; ++c, y += 64) {
            uint8_t sc0, m0, sc1, m1;
            q4k_scale_min(b[i].scales, 2 * c, &sc0, &m0);
            q4k_scale_min(b[i].scales, 2 * c + 1, &sc1, &m1);
            const uint8_t* q = b[i].qs + 32 * c;
            for (int l = 0; l < 32; ++l) {
                const int lo = (q[l] & 0xF) | (((b[i].qh[l] >> (2 * c)) & 1) << 4);
                const int hi = (q[l] >> 4) | (((b[i].qh[l] >> (2 * c + 1)) & 1) << 4);
                y[l] = d * sc0 * static_cast<float>(lo) - dmin * m0;
                y[l + 32] = d * sc1 * static_cast<float>(hi) - dmin * m1;
            }
        }
    }
}

void dequantize_row_iq4_xs(const BlockIQ4_XS* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < 8; ++j, y += 32) {
            const float dl = d * static_cast<float>(iq4xs_scale(b[i], j) - 32);
            const uint8_t* q = b[i].qs + 16 * j;
            for (int l = 0; l < 16; ++l) {
                y[l] = dl * static_cast<float>(kIQ4Values[q[l] & 0xF]);
                y[l + 16] = dl * static_cast<float>(kIQ4Values[q[l] >> 4]);
            }
        }
    }
}

namespace {

// The importance of a super-block: w + off, or ones when there is none.
const float* block_w(const float* w, int64_t off, float* ones) {
    if (w)
        return w + off;
    std::fill(ones, ones + kQKK, 1.0f);
    return ones;
}

// A block scale as fp16, its magnitude clamped to fp16's largest finite value, so that huge
// inputs give a saturated block scale rather than an infinite one (inf * 0 = NaN on decode).
uint16_t half_sat(double v) {
    if (!(v == v))
        return 0;
    return fp32_to_fp16(static_cast<float>(std::clamp(v, -65504.0, 65504.0)));
}

// Round to nearest of v clamped to [0, hi] (NaN gives 0): v + 0.5 >= 0, so truncation rounds.
// Inline and branch-light; the quantizers below call it a few hundred times per weight.
inline int round_u(float v, int hi) {
    const float h = static_cast<float>(hi);
    v = v > 0.0f ? (v < h ? v : h) : 0.0f;
    return static_cast<int>(v + 0.5f);
}

// Nearest kIQ4Values index to v (code-book units), by the midpoints between entries.
inline int nearest_iq4_fast(float v) {
    static constexpr float kMid[15] = {-115.5f, -93.5f, -74.0f, -57.0f, -42.0f,
                                       -28.5f,  -16.0f, -4.5f,  7.0f,   19.0f,
                                       31.5f,   45.5f,  61.0f,  79.0f,  101.0f};
    int lo = 0, hi = 15;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (v > kMid[mid])
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// Sub-block fits (the starting points of the super-block searches below). These follow
// detail::fit_scale_min / fit_scale_sym / fit_scale_iq4 (quant_fit.cpp) with the fast rounding
// above and a wider candidate range for the scale-and-min fit.

// x ~ s * q - m, q in [0, nmax], s >= 0, m >= 0.
void fit_min(const float* x, const float* w, int n, int nmax, float* s_out, float* m_out) {
    float lo = 0.0f, hi = x[0];
    for (int i = 0; i < n; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
    }
    *s_out = 0.0f;
    *m_out = -lo;
    if (!(hi > lo) || !std::isfinite(hi - lo))
        return;
    double best_err = INFINITY;
    *s_out = (hi - lo) / static_cast<float>(nmax);
    int q[32];
    for (int k = -3; k <= 6; ++k) {
        const float iscale = (static_cast<float>(nmax) + 0.15f * static_cast<float>(k)) / (hi - lo);
        float sw = 0, sq = 0, sx = 0, sqq = 0, sqx = 0;
        for (int i = 0; i < n; ++i) {
            const float wi = w[i];
            q[i] = round_u((x[i] - lo) * iscale, nmax);
            const float qf = static_cast<float>(q[i]);
            sw += wi;
            sq += wi * qf;
            sx += wi * x[i];
            sqq += wi * qf * qf;
            sqx += wi * qf * x[i];
        }
        const double den = static_cast<double>(sw) * sqq - static_cast<double>(sq) * sq;
        if (den <= 0 || sqq <= 0)
            continue;
        double sc = (static_cast<double>(sw) * sqx - static_cast<double>(sq) * sx) / den;
        double b = (sx - sc * sq) / sw; // x ~ s q + b with b = -m <= 0
        if (b > 0) {
            b = 0;
            sc = sqx / sqq;
        }
        if (sc <= 0)
            continue;
        const float scf = static_cast<float>(sc), bf = static_cast<float>(b);
        float err = 0;
        for (int i = 0; i < n; ++i) {
            const float e = scf * static_cast<float>(q[i]) + bf - x[i];
            err += w[i] * e * e;
        }
        if (err < best_err) {
            best_err = err;
            *s_out = static_cast<float>(sc);
            *m_out = static_cast<float>(-b);
        }
    }
}

// x ~ s * v(q) with v(q) = q - 4 (Q3_K, kIQ4 = false) or kIQ4Values[q]; s may be negative.
template <bool kIQ4> float fit_sym(const float* x, const float* w, int n) {
    const float vmax = detail::signed_absmax(x, n);
    if (vmax == 0.0f || !std::isfinite(vmax))
        return vmax == 0.0f ? 0.0f : (vmax > 0 ? -65504.0f : 65504.0f);
    const float end = kIQ4 ? -127.0f : -4.0f; // vmax maps near the long end of the levels
    const float step = kIQ4 ? 3.0f : 0.1f;
    float best_s = vmax / end;
    double best_err = INFINITY;
    int q[32];
    for (int k = -4; k <= 4; ++k) {
        const float is0 = (end + step * static_cast<float>(k)) / vmax;
        float sqq = 0, sqx = 0;
        for (int i = 0; i < n; ++i) {
            q[i] = kIQ4 ? nearest_iq4_fast(x[i] * is0) : round_u(x[i] * is0 + 4.0f, 7);
            const float v = kIQ4 ? kIQ4Values[q[i]] : static_cast<float>(q[i] - 4);
            sqq += w[i] * v * v;
            sqx += w[i] * v * x[i];
        }
        if (sqq <= 0)
            continue;
        const float sc = sqx / sqq;
        const float isc = 1.0f / sc;
        float err = 0;
        for (int i = 0; i < n; ++i) {
            const int c = kIQ4 ? nearest_iq4_fast(x[i] * isc) : round_u(x[i] * isc + 4.0f, 7);
            const float e = sc * (kIQ4 ? kIQ4Values[c] : static_cast<float>(c - 4)) - x[i];
            err += w[i] * e * e;
        }
        if (err < best_err) {
            best_err = err;
            best_s = static_cast<float>(sc);
        }
    }
    return best_s;
}

// ---- scale-and-min super-blocks (Q2_K, Q5_K) -------------------------------------------------
//
// value = d * sc_j * q - dmin * mn_j, sc/mn integers in [0, smax], q in [0, qmax], sub-blocks of
// len elements. The sub-block fits (s_j, m_j) give starting integers; a search over the integers
// next to them picks, per sub-block, the pair with the smallest weighted error (codes rounded to
// nearest); then d and dmin are refit jointly by least squares over the super-block and the
// integers searched again while the error drops.
struct ScaleMinFit {
    int n_sub, len, qmax, smax;
    const float* x;
    const float* w;
    const float* s;
    const float* m;
    uint8_t sc[16], mn[16], q[kQKK];

    double sub_error(int j, float d, float dmin, int scj, int mnj, uint8_t* qj) const {
        const float ds = d * static_cast<float>(scj), dm = dmin * static_cast<float>(mnj);
        const float id = ds > 0 ? 1.0f / ds : 0.0f;
        const float* xj = x + j * len;
        const float* wj = w + j * len;
        float err = 0;
        for (int l = 0; l < len; ++l) {
            const int qi = round_u((xj[l] + dm) * id, qmax); // id = 0: code 0
            qj[l] = static_cast<uint8_t>(qi);
            const float e = ds * static_cast<float>(qi) - dm - xj[l];
            err += wj[l] * e * e;
        }
        return err;
    }

    // Best (sc, mn) per sub-block within +-win of the fits; fills sc, mn, q; returns the error.
    double assign(float d, float dmin, int win) {
        double total = 0;
        uint8_t qt[32];
        for (int j = 0; j < n_sub; ++j) {
            const int s0 = d > 0 ? detail::round_clamp(s[j] / d, 0, smax) : 0;
            const int m0 = dmin > 0 ? detail::round_clamp(m[j] / dmin, 0, smax) : 0;
            double best = INFINITY;
            for (int a = std::max(0, s0 - win); a <= std::min(smax, s0 + win); ++a)
                for (int b = std::max(0, m0 - win); b <= std::min(smax, m0 + win); ++b) {
                    const double e = sub_error(j, d, dmin, a, b, qt);
                    if (e < best || best == INFINITY) { // the first candidate even if e = inf
                        best = e;
                        sc[j] = static_cast<uint8_t>(a);
                        mn[j] = static_cast<uint8_t>(b);
                        std::memcpy(q + j * len, qt, static_cast<size_t>(len));
                    }
                }
            total += best;
        }
        return total;
    }

    // Least-squares d, dmin for the current integers and codes (x ~ d * A - dmin * B).
    bool refit(double* d, double* dmin) const {
        double saa = 0, sab = 0, sbb = 0, sax = 0, sbx = 0;
        for (int i = 0; i < n_sub * len; ++i) {
            const double wi = w[i];
            const double a = static_cast<double>(sc[i / len]) * q[i], b = mn[i / len];
            saa += wi * a * a;
            sab += wi * a * b;
            sbb += wi * b * b;
            sax += wi * a * x[i];
            sbx += wi * b * x[i];
        }
        const double det = saa * sbb - sab * sab;
        if (saa <= 0)
            return false;
        if (sbb <= 0 || det <= 1e-12 * saa * sbb) {
            *d = sax / saa;
            return *d > 0;
        }
        *d = (sax * sbb - sbx * sab) / det;
        *dmin = (sax * sab - sbx * saa) / det; // x ~ d A - dmin B
        return *d > 0;
    }

    // Runs the search; returns the stored fp16 d and dmin (sc, mn, q hold the result).
    void run(int win, uint16_t* d_out, uint16_t* dmin_out) {
        float smx = 0.0f, mmx = 0.0f;
        for (int j = 0; j < n_sub; ++j) {
            smx = std::max(smx, s[j]);
            mmx = std::max(mmx, m[j]);
        }
        uint16_t dh = half_sat(smx / smax), mh = half_sat(mmx / smax);
        double best = assign(fp16_to_fp32(dh), fp16_to_fp32(mh), win);
        uint8_t bsc[16], bmn[16], bq[kQKK];
        auto save = [&] {
            std::memcpy(bsc, sc, sizeof sc);
            std::memcpy(bmn, mn, sizeof mn);
            std::memcpy(bq, q, sizeof q);
        };
        save();
        for (int it = 0; it < 3; ++it) {
            double d = fp16_to_fp32(dh), dm = fp16_to_fp32(mh);
            if (!refit(&d, &dm))
                break;
            const uint16_t dh2 = half_sat(d), mh2 = half_sat(std::max(dm, 0.0));
            if (dh2 == dh && mh2 == mh)
                break;
            const double e = assign(fp16_to_fp32(dh2), fp16_to_fp32(mh2), win);
            if (!(e < best))
                break;
            best = e;
            dh = dh2;
            mh = mh2;
            save();
        }
        std::memcpy(sc, bsc, sizeof sc);
        std::memcpy(mn, bmn, sizeof mn);
        std::memcpy(q, bq, sizeof q);
        *d_out = dh;
        *dmin_out = mh;
    }
};

// ---- signed-scale super-blocks (Q3_K, IQ4_XS) ------------------------------------------------
//
// value = d * ls_j * v(code), ls integers in [-32, 31]; v: the Q3_K levels q - 4 (q in 0..7) or
// the IQ4 code book. Same search: integers next to the fits per sub-block, then d refit by least
// squares while the error drops.
template <bool kIQ4> struct SymFit {
    int n_sub, len;
    const float* x;
    const float* w;
    const float* s;
    int8_t ls[16];
    uint8_t q[kQKK]; // Q3_K: q in 0..7 (value q - 4); IQ4: code 0..15

    static float level(int code) { return kIQ4 ? kIQ4Values[code] : static_cast<float>(code - 4); }

    // Nearest code to v (in level units).
    static int nearest(float v) {
        if constexpr (kIQ4) {
            return nearest_iq4_fast(v);
        } else {
            return round_u(v + 4.0f, 7);
        }
    }

    double sub_error(int j, float d, int l, uint8_t* qj) const {
        const float dl = d * static_cast<float>(l);
        const float id = dl != 0 ? 1.0f / dl : 0.0f;
        const float* xj = x + j * len;
        const float* wj = w + j * len;
        float err = 0;
        for (int k = 0; k < len; ++k) {
            const int c = nearest(xj[k] * id); // id = 0: the code nearest 0
            qj[k] = static_cast<uint8_t>(c);
            const float e = dl * level(c) - xj[k];
            err += wj[k] * e * e;
        }
        return err;
    }

    double assign(float d, int win) {
        double total = 0;
        uint8_t qt[32];
        for (int j = 0; j < n_sub; ++j) {
            const int l0 = d != 0 ? detail::round_clamp(s[j] / d, -32, 31) : 0;
            double best = INFINITY;
            for (int l = std::max(-32, l0 - win); l <= std::min(31, l0 + win); ++l) {
                const double e = sub_error(j, d, l, qt);
                if (e < best || best == INFINITY) { // the first candidate even if e = inf
                    best = e;
                    ls[j] = static_cast<int8_t>(l);
                    std::memcpy(q + j * len, qt, static_cast<size_t>(len));
                }
            }
            total += best;
        }
        return total;
    }

    bool refit(double* d) const {
        double saa = 0, sax = 0;
        for (int i = 0; i < n_sub * len; ++i) {
            const double a = static_cast<double>(ls[i / len]) * level(q[i]);
            saa += w[i] * a * a;
            sax += w[i] * a * x[i];
        }
        if (saa <= 0)
            return false;
        *d = sax / saa;
        return true;
    }

    uint16_t run(int win) {
        const float smx = detail::signed_absmax(s, n_sub);
        uint16_t dh = half_sat(smx / -32.0f);
        double best = assign(fp16_to_fp32(dh), win);
        int8_t bls[16];
        uint8_t bq[kQKK];
        auto save = [&] {
            std::memcpy(bls, ls, sizeof ls);
            std::memcpy(bq, q, sizeof q);
        };
        save();
        // The super-block scale: a few candidates around the largest fit, then refits.
        for (float f : {0.9f, 1.1f}) {
            const uint16_t dh2 = half_sat(smx / -32.0f * f);
            const double e = assign(fp16_to_fp32(dh2), win);
            if (e < best) {
                best = e;
                dh = dh2;
                save();
            }
        }
        std::memcpy(ls, bls, sizeof ls);
        std::memcpy(q, bq, sizeof q);
        for (int it = 0; it < 3; ++it) {
            double d = fp16_to_fp32(dh);
            if (!refit(&d))
                break;
            const uint16_t dh2 = half_sat(d);
            if (dh2 == dh)
                break;
            const double e = assign(fp16_to_fp32(dh2), win);
            if (!(e < best))
                break;
            best = e;
            dh = dh2;
            save();
        }
        std::memcpy(ls, bls, sizeof ls);
        std::memcpy(q, bq, sizeof q);
        return dh;
    }
};

} // namespace

void quantize_row_q2_k(const float* x, BlockQ2_K* b, int64_t n, const float* w) {
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        float ones[kQKK];
        const float* wb = block_w(w, i * kQKK, ones);
        float s[16], m[16];
        for (int j = 0; j < 16; ++j)
            fit_min(x + 16 * j, (wb + 16 * j), 16, 3, &s[j], &m[j]);
        ScaleMinFit f{16, 16, 3, 15, x, wb, s, m, {}, {}, {}};
        BlockQ2_K& blk = b[i];
        f.run(1, &blk.d, &blk.dmin);
        for (int j = 0; j < 16; ++j)
            blk.scales[j] = static_cast<uint8_t>(f.sc[j] | (f.mn[j] << 4));
        std::memset(blk.qs, 0, sizeof blk.qs);
        for (int e = 0; e < kQKK; ++e) {
            const int h = e / 128, k = (e % 128) / 32, l = e % 32;
            blk.qs[32 * h + l] |= static_cast<uint8_t>(f.q[e] << (2 * k));
        }
    }
}

void quantize_row_q3_k(const float* x, BlockQ3_K* b, int64_t n, const float* w) {
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        float ones[kQKK];
        const float* wb = block_w(w, i * kQKK, ones);
        float s[16];
        for (int j = 0; j < 16; ++j)
            s[j] = fit_sym<false>(x + 16 * j, (wb + 16 * j), 16);
        SymFit<false> f{16, 16, x, wb, s, {}, {}};
        BlockQ3_K& blk = b[i];
        blk.d = f.run(2);
        std::memset(blk.scales, 0, sizeof blk.scales);
        for (int j = 0; j < 16; ++j) {
            const int l = f.ls[j] + 32;
            if (j < 8)
                blk.scales[j] = static_cast<uint8_t>(l & 0xF);
            else
                blk.scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
            blk.scales[8 + j % 4] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
        }
        std::memset(blk.qs, 0, sizeof blk.qs);
        std::memset(blk.hmask, 0, sizeof blk.hmask);
        for (int e = 0; e < kQKK; ++e) {
            const int q = f.q[e];
            const int h = e / 128, k = (e % 128) / 32, l = e % 32;
            blk.qs[32 * h + l] |= static_cast<uint8_t>((q & 3) << (2 * k));
            if (q > 3)
                blk.hmask[l] |= static_cast<uint8_t>(1 << (4 * h + k));
        }
    }
}

void quantize_row_q5_k(const float* x, BlockQ5_K* b, int64_t n, const float* w) {
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        float ones[kQKK];
        const float* wb = block_w(w, i * kQKK, ones);
        float s[8], m[8];
        for (int j = 0; j < 8; ++j)
            fit_min(x + 32 * j, (wb + 32 * j), 32, 31, &s[j], &m[j]);
        ScaleMinFit f{8, 32, 31, 63, x, wb, s, m, {}, {}, {}};
        BlockQ5_K& blk = b[i];
        f.run(1, &blk.d, &blk.dmin);
        pack_k4_scales(f.sc, f.mn, blk.scales);
        std::memset(blk.qh, 0, sizeof blk.qh);
        for (int j = 0; j < 8; ++j) {
            const int c = j / 2;
            for (int l = 0; l < 32; ++l) {
                const int q = f.q[32 * j + l];
                if (j % 2 == 0)
                    blk.qs[32 * c + l] = static_cast<uint8_t>(q & 0xF);
                else
                    blk.qs[32 * c + l] |= static_cast<uint8_t>((q & 0xF) << 4);
                blk.qh[l] |= static_cast<uint8_t>((q >> 4) << j);
            }
        }
    }
}

void quantize_row_iq4_xs(const float* x, BlockIQ4_XS* b, int64_t n, const float* w) {
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        float ones[kQKK];
        const float* wb = block_w(w, i * kQKK, ones);
        float s[8];
        for (int j = 0; j < 8; ++j)
            s[j] = fit_sym<true>(x + 32 * j, (wb + 32 * j), 32);
        SymFit<true> f{8, 32, x, wb, s, {}, {}};
        BlockIQ4_XS& blk = b[i];
        blk.d = f.run(1);
        blk.scales_h = 0;
        std::memset(blk.scales_l, 0, sizeof blk.scales_l);
        for (int j = 0; j < 8; ++j) {
            const int ls = f.ls[j] + 32;
            blk.scales_l[j / 2] |= static_cast<uint8_t>((ls & 0xF) << (4 * (j % 2)));
            blk.scales_h = static_cast<uint16_t>(blk.scales_h | ((ls >> 4) << (2 * j)));
            uint8_t* q = blk.qs + 16 * j;
            for (int l = 0; l < 16; ++l)
                q[l] = static_cast<uint8_t>(f.q[32 * j + l] | (f.q[32 * j + l + 16] << 4));
        }
    }
}

} // namespace llmwb::kernels
