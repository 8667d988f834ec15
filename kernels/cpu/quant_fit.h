// Scale searches shared by the quantizers of kernels/cpu: each fits one group of values with a
// few candidate scales, refits the best by weighted least squares and returns the scale(s) with
// the smallest weighted squared error. Weights are per element importances (an importance
// matrix's column means of x^2, or 1 when none is given). Internal to kernels/cpu.
#pragma once

#include <cstdint>

namespace llmwb::kernels::detail {

// x ~ s * q - m, q in [0, nmax], s >= 0, m >= 0 (the K-quants' scale-and-min form).
void fit_scale_min(const float* x, const float* w, int n, int nmax, float* s, float* m);

// x ~ s * q + m, q in [0, nmax], m of any sign (Q4_1 / Q5_1).
void fit_scale_offset(const float* x, const float* w, int n, int nmax, float* s, float* m);

// x ~ s * q, q in [qmin, qmax] (qmin < 0 < qmax); s may be negative so that the element of
// largest magnitude can use the longer side of the range.
float fit_scale_sym(const float* x, const float* w, int n, int qmin, int qmax);

// x ~ s * kIQ4Values[code]; returns s (may be negative).
float fit_scale_iq4(const float* x, const float* w, int n);

// Index of the kIQ4Values entry nearest to v (in code-book units).
int nearest_iq4(float v);

int round_clamp(float v, int lo, int hi);

// The largest-magnitude value of v[0..n) with its sign.
float signed_absmax(const float* v, int n);

} // namespace llmwb::kernels::detail
