#include "kernels/cpu/quant_fit.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/quant_blocks.h"

namespace llmwb::kernels::detail {

namespace {

constexpr int kMaxGroup = 256;

float weight(const float* w, int i) {
    return w ? w[i] : 1.0f;
}

} // namespace

int round_clamp(float v, int lo, int hi) {
    if (!(v == v)) // NaN
        return 0 >= lo && 0 <= hi ? 0 : lo;
    return std::clamp(static_cast<int>(std::lround(std::clamp(v, -1e9f, 1e9f))), lo, hi);
}

float signed_absmax(const float* v, int n) {
    float amax = 0.0f, vmax = 0.0f;
    for (int i = 0; i < n; ++i) {
        if (std::fabs(v[i]) > amax) {
            amax = std::fabs(v[i]);
            vmax = v[i];
        }
    }
    return vmax;
}

void fit_scale_min(const float* x, const float* w, int n, int nmax, float* s_out, float* m_out) {
    float lo = 0.0f, hi = x[0];
    for (int i = 0; i < n; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
    }
    if (hi <= lo) {
        *s_out = 0.0f;
        *m_out = -lo;
        return;
    }
    float best_err = INFINITY, best_s = (hi - lo) / static_cast<float>(nmax), best_m = -lo;
    int q[kMaxGroup];
    for (int k = -6; k <= 6; ++k) {
        const float iscale = (static_cast<float>(nmax) + 0.1f * static_cast<float>(k)) / (hi - lo);
        double sw = 0, sq = 0, sx = 0, sqq = 0, sqx = 0;
        for (int i = 0; i < n; ++i) {
            const double wi = weight(w, i);
            q[i] = round_clamp((x[i] - lo) * iscale, 0, nmax);
            sw += wi;
            sq += wi * q[i];
            sx += wi * x[i];
            sqq += wi * q[i] * q[i];
            sqx += wi * q[i] * x[i];
        }
        const double den = sw * sqq - sq * sq;
        if (den <= 0 || sqq <= 0)
            continue;
        double s = (sw * sqx - sq * sx) / den;
        double b = (sx - s * sq) / sw; // x ~ s q + b with b = -m <= 0
        if (b > 0) {
            b = 0;
            s = sqx / sqq;
        }
        if (s <= 0)
            continue;
        double err = 0;
        for (int i = 0; i < n; ++i) {
            const double e = s * q[i] + b - x[i];
            err += weight(w, i) * e * e;
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

void fit_scale_offset(const float* x, const float* w, int n, int nmax, float* s_out, float* m_out) {
    float lo = x[0], hi = x[0];
    for (int i = 0; i < n; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
    }
    *s_out = (hi - lo) / static_cast<float>(nmax);
    *m_out = lo;
    if (hi <= lo || !w)
        return;
    // Weighted refit around the min/max grid.
    int q[kMaxGroup];
    double sw = 0, sq = 0, sx = 0, sqq = 0, sqx = 0;
    const float iscale = static_cast<float>(nmax) / (hi - lo);
    for (int i = 0; i < n; ++i) {
        const double wi = w[i];
        q[i] = round_clamp((x[i] - lo) * iscale, 0, nmax);
        sw += wi;
        sq += wi * q[i];
        sx += wi * x[i];
        sqq += wi * q[i] * q[i];
        sqx += wi * q[i] * x[i];
    }
    const double den = sw * sqq - sq * sq;
    if (den > 0) {
        const double s = (sw * sqx - sq * sx) / den;
        if (s > 0) {
            *s_out = static_cast<float>(s);
            *m_out = static_cast<float>((sx - s * sq) / sw);
        }
    }
}

float fit_scale_sym(const float* x, const float* w, int n, int qmin, int qmax) {
    const float vmax = signed_absmax(x, n);
    if (vmax == 0.0f)
        return 0.0f;
    // vmax maps to qmin (the longer side, e.g. -32 of [-32, 31]).
    float best_err = INFINITY, best_s = vmax / static_cast<float>(qmin);
    int q[kMaxGroup];
    for (int k = -8; k <= 8; ++k) {
        const float s0 = vmax / (static_cast<float>(qmin) +
                                 0.1f * static_cast<float>(k) * static_cast<float>(-qmin) / 8.0f);
        double sqq = 0, sqx = 0;
        for (int i = 0; i < n; ++i) {
            const double wi = weight(w, i);
            q[i] = round_clamp(x[i] / s0, qmin, qmax);
            sqq += wi * q[i] * q[i];
            sqx += wi * q[i] * x[i];
        }
        if (sqq <= 0)
            continue;
        const double s = sqx / sqq;
        double err = 0;
        for (int i = 0; i < n; ++i) {
            const double e = s * q[i] - x[i];
            err += weight(w, i) * e * e;
        }
        if (err < best_err) {
            best_err = static_cast<float>(err);
            best_s = static_cast<float>(s);
        }
    }
    return best_s;
}

int nearest_iq4(float v) {
    int best = 0;
    float bd = std::fabs(v - kIQ4Values[0]);
    for (int i = 1; i < 16; ++i) {
        const float dd = std::fabs(v - kIQ4Values[i]);
        if (dd < bd) {
            bd = dd;
            best = i;
        }
    }
    return best;
}

float fit_scale_iq4(const float* x, const float* w, int n) {
    const float vmax = signed_absmax(x, n);
    if (vmax == 0.0f)
        return 0.0f;
    float best_err = INFINITY, best_s = vmax / -127.0f;
    int q[kMaxGroup];
    for (int k = -9; k <= 9; ++k) {
        // vmax at the code book's end (-127 for positive or negative scale), perturbed.
        const float s0 = vmax / (-127.0f + 1.5f * static_cast<float>(k));
        double sqq = 0, sqx = 0;
        for (int i = 0; i < n; ++i) {
            const double wi = weight(w, i);
            q[i] = kIQ4Values[nearest_iq4(x[i] / s0)];
            sqq += wi * q[i] * q[i];
            sqx += wi * q[i] * x[i];
        }
        if (sqq <= 0)
            continue;
        const double s = sqx / sqq;
        double err = 0;
        for (int i = 0; i < n; ++i) {
            const double e = s * kIQ4Values[nearest_iq4(static_cast<float>(x[i] / s))] - x[i];
            err += weight(w, i) * e * e;
        }
        if (err < best_err) {
            best_err = static_cast<float>(err);
            best_s = static_cast<float>(s);
        }
    }
    return best_s;
}

} // namespace llmwb::kernels::detail
