// Q4_1, Q5_0, Q5_1 and IQ4_NL (32-element blocks): hand-built GGML blocks decode to the values the
// format defines, quantize/dequantize round trips stay within per-type bounds and are no worse
// than GGML's plain round-to-nearest reference (re-implemented here from its definition),
// importance weights lower the weighted error, and zero / constant / huge / tiny blocks behave.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_blocks.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

constexpr DType kTypes[] = {DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL};

std::vector<float> decode(DType t, const std::vector<uint8_t>& q, int64_t n) {
    std::vector<float> y(static_cast<size_t>(n), NAN);
    dequantize_row(t, q.data(), y.data(), n);
    return y;
}

std::vector<uint8_t> encode(DType t, const std::vector<float>& x, const float* importance) {
    std::vector<uint8_t> q(static_cast<size_t>(dtype_row_bytes(t, static_cast<int64_t>(x.size()))));
    quantize_row(t, x.data(), q.data(), static_cast<int64_t>(x.size()), importance);
    return q;
}

// sum w (x - y)^2 (w = 1 when null).
double weighted_sq_error(const std::vector<float>& x, const std::vector<float>& y, const float* w) {
    double s = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const double e = static_cast<double>(x[i]) - y[i];
        s += (w ? w[i] : 1.0) * e * e;
    }
    return s;
}

double rms(const std::vector<float>& v) {
    double s = 0;
    for (float f : v)
        s += static_cast<double>(f) * f;
    return std::sqrt(s / static_cast<double>(v.size()));
}

// GGML's reference quantizers, from their definition: Q4_1/Q5_1 map [min, max] onto the codes
// (d = (max - min) / (2^b - 1), m = min, round to nearest); Q5_0 maps the element of largest
// magnitude to -16 (d = that value / -16); IQ4_NL (no search) d = that value / -127 and the
// nearest table entry. Returns the dequantized row.
std::vector<float> reference_rtn(DType t, const std::vector<float>& x) {
    std::vector<float> y(x.size());
    for (size_t b = 0; b < x.size(); b += 32) {
        const float* xb = x.data() + b;
        float lo = xb[0], hi = xb[0], vmax = 0;
        for (int j = 0; j < 32; ++j) {
            lo = std::min(lo, xb[j]);
            hi = std::max(hi, xb[j]);
            if (std::fabs(xb[j]) > std::fabs(vmax))
                vmax = xb[j];
        }
        for (int j = 0; j < 32; ++j) {
            float v = 0;
            if (t == DType::Q4_1 || t == DType::Q5_1) {
                const int nmax = t == DType::Q4_1 ? 15 : 31;
                const float d = fp16_to_fp32(fp32_to_fp16((hi - lo) / static_cast<float>(nmax)));
                const float m = fp16_to_fp32(fp32_to_fp16(lo));
                const int q =
                    d > 0 ? std::clamp(static_cast<int>((xb[j] - m) / d + 0.5f), 0, nmax) : 0;
                v = static_cast<float>(q) * d + m;
            } else if (t == DType::Q5_0) {
                const float d = fp16_to_fp32(fp32_to_fp16(vmax / -16.0f));
                const int q = d != 0 ? std::clamp(static_cast<int>(xb[j] / d + 16.5f), 0, 31) : 16;
                v = static_cast<float>(q - 16) * d;
            } else {
                const float d = fp16_to_fp32(fp32_to_fp16(vmax / -127.0f));
                int best = 0;
                for (int k = 1; k < 16; ++k)
                    if (d != 0 && std::fabs(xb[j] / d - static_cast<float>(kIQ4Values[k])) <
                                      std::fabs(xb[j] / d - static_cast<float>(kIQ4Values[best])))
                        best = k;
                v = d * static_cast<float>(kIQ4Values[best]);
            }
            y[b + static_cast<size_t>(j)] = v;
        }
    }
    return y;
}

struct TypeRow {
    std::string name;
    DType type;
};

std::vector<TypeRow> type_rows() {
    std::vector<TypeRow> rows;
    for (DType t : kTypes)
        rows.push_back({dtype_name(t), t});
    return rows;
}

} // namespace

// ---- layouts: values computed by hand from GGML's block definitions -------------------------

MT_TEST(q4_1Layout) {
    BlockQ4_1 b{};
    b.d = fp32_to_fp16(0.5f);
    b.m = fp32_to_fp16(-1.25f);
    for (int j = 0; j < 16; ++j)
        b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    float y[32];
    dequantize_row(DType::Q4_1, &b, y, 32);
    MT_COMPARE(y[0], -1.25f);  // code 0: m
    MT_COMPARE(y[3], 0.25f);   // 3 * 0.5 - 1.25
    MT_COMPARE(y[15], 6.25f);  // 15 * 0.5 - 1.25
    MT_COMPARE(y[16], 6.25f);  // high nibble of qs[0] = 15
    MT_COMPARE(y[31], -1.25f); // high nibble of qs[15] = 0
    for (int j = 0; j < 16; ++j) {
        MT_COMPARE(y[j], 0.5f * static_cast<float>(j) - 1.25f);
        MT_COMPARE(y[j + 16], 0.5f * static_cast<float>(15 - j) - 1.25f);
    }
}

MT_TEST(q5_0Layout) {
    BlockQ5_0 b{};
    b.d = fp32_to_fp16(0.25f);
    // qh is a little-endian uint32: bit j is bit 4 of element j. Bits 0, 9, 16 and 31 set.
    const uint32_t qh = (1u << 0) | (1u << 9) | (1u << 16) | (1u << 31);
    b.qh[0] = 0x01;
    b.qh[1] = 0x02;
    b.qh[2] = 0x01;
    b.qh[3] = 0x80;
    uint32_t check;
    std::memcpy(&check, b.qh, 4);
    MT_COMPARE(check, qh);
    for (int j = 0; j < 16; ++j)
        b.qs[j] = static_cast<uint8_t>(((j * 5) & 15) | (((j + 3) & 15) << 4));
    float y[32];
    dequantize_row(DType::Q5_0, &b, y, 32);
    MT_COMPARE(y[0], 0.0f);   // low nibble 0 | 16 -> 16 - 16 = 0
    MT_COMPARE(y[1], -2.75f); // low nibble 5, no bit: (5 - 16) * 0.25
    MT_COMPARE(y[9], 3.25f);  // low nibble 45 & 15 = 13, bit 9: (29 - 16) * 0.25
    MT_COMPARE(y[16], 0.75f); // high nibble of qs[0] = 3, bit 16: (19 - 16) * 0.25
    MT_COMPARE(y[17], -3.0f); // high nibble 4, no bit: (4 - 16) * 0.25
    MT_COMPARE(y[31], 0.5f);  // high nibble of qs[15] = 18 & 15 = 2, bit 31: (18 - 16) * 0.25
    for (int j = 0; j < 32; ++j) {
        const int lo = j < 16 ? (j * 5) & 15 : (j - 16 + 3) & 15;
        const int code = lo | static_cast<int>(((qh >> j) & 1) << 4);
        MT_COMPARE(y[j], 0.25f * static_cast<float>(code - 16));
    }
}

MT_TEST(q5_1Layout) {
    BlockQ5_1 b{};
    b.d = fp32_to_fp16(0.125f);
    b.m = fp32_to_fp16(-2.0f);
    b.qh[0] = 0xFF; // elements 0..7 and 24..31 get bit 4
    b.qh[3] = 0xFF;
    for (int j = 0; j < 16; ++j)
        b.qs[j] = static_cast<uint8_t>(15 | (j << 4));
    float y[32];
    dequantize_row(DType::Q5_1, &b, y, 32);
    MT_COMPARE(y[0], 1.875f);  // 31 * 0.125 - 2
    MT_COMPARE(y[8], -0.125f); // 15 * 0.125 - 2
    MT_COMPARE(y[16], -2.0f);  // high nibble 0, no bit
    MT_COMPARE(y[24], 1.0f);   // high nibble 8 | 16 = 24: 24 * 0.125 - 2
    MT_COMPARE(y[31], 1.875f); // 15 | 16 = 31
    for (int j = 0; j < 32; ++j) {
        const int code = (j < 16 ? 15 : j - 16) | ((j < 8 || j >= 24) ? 16 : 0);
        MT_COMPARE(y[j], 0.125f * static_cast<float>(code) - 2.0f);
    }
}

MT_TEST(iq4_nlLayout) {
    // GGML's kvalues_iq4nl, typed in from the format's definition.
    const int table[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                           1,    13,   25,  38,  53,  69,  89,  113};
    for (int i = 0; i < 16; ++i)
        MT_COMPARE(static_cast<int>(kIQ4Values[i]), table[i]);
    BlockIQ4_NL b{};
    b.d = fp32_to_fp16(0.5f);
    for (int j = 0; j < 16; ++j)
        b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    float y[32];
    dequantize_row(DType::IQ4_NL, &b, y, 32);
    MT_COMPARE(y[0], -63.5f);  // -127 * 0.5
    MT_COMPARE(y[8], 0.5f);    // 1 * 0.5
    MT_COMPARE(y[16], 56.5f);  // high nibble 15: 113 * 0.5
    MT_COMPARE(y[31], -63.5f); // high nibble 0
    for (int j = 0; j < 16; ++j) {
        MT_COMPARE(y[j], 0.5f * static_cast<float>(table[j]));
        MT_COMPARE(y[j + 16], 0.5f * static_cast<float>(table[15 - j]));
    }
}

// ---- round trips ----------------------------------------------------------------------------

// Relative rms error on normal data with outliers: within a per-type bound, no worse than GGML's
// plain reference, deterministic, and the codes re-quantize to themselves (a dequantized row is
// a fixed point up to fp16 rounding of the scales).
MT_TEST_TABLE(roundTrip, TypeRow, type_rows()) {
    const DType t = row.type;
    double bound = 0;
    switch (t) {
    case DType::Q4_1:
        bound = 0.11;
        break;
    case DType::Q5_0:
    case DType::Q5_1:
        bound = 0.07;
        break;
    default:
        bound = 0.10;
        break;
    }
    for (int n : {32, 96, 4096}) {
        MT_SCOPE("n %d", n);
        const auto x =
            test::random_floats(static_cast<size_t>(n), 77u + static_cast<uint32_t>(n), 0.02f);
        const auto q = encode(t, x, nullptr);
        MT_CHECK(q == encode(t, x, nullptr));
        const auto y = decode(t, q, n);
        std::vector<float> err(y.size());
        for (size_t i = 0; i < y.size(); ++i) {
            MT_CHECK(std::isfinite(y[i]));
            err[i] = y[i] - x[i];
        }
        const double rel = rms(err) / rms(x);
        const auto ref = reference_rtn(t, x);
        const double ref_err = std::sqrt(weighted_sq_error(x, ref, nullptr) / n) / rms(x);
        std::printf("  %s n=%d: relative rms error %.4f (GGML reference RTN %.4f)\n", dtype_name(t),
                    n, rel, ref_err);
        MT_CHECK_MSG(rel <= bound, "relative rms error %g > %g", rel, bound);
        MT_CHECK_MSG(rel <= ref_err * 1.001, "%g worse than the reference's %g", rel, ref_err);
    }
}

// An importance row that weights a few columns 100x: quantizing with it lowers the weighted
// error (the error that matters for the model's output) against quantizing without it.
MT_TEST_TABLE(importanceLowersWeightedError, TypeRow, type_rows()) {
    const DType t = row.type;
    const int n = 4096;
    const auto x = test::random_floats(n, 5, 1.0f);
    std::vector<float> w(n);
    for (int i = 0; i < n; ++i)
        w[static_cast<size_t>(i)] = (i * 7) % 11 == 0 ? 100.0f : 1.0f;
    const double plain = weighted_sq_error(x, decode(t, encode(t, x, nullptr), n), w.data());
    const double weighted = weighted_sq_error(x, decode(t, encode(t, x, w.data()), n), w.data());
    std::printf("  %s: weighted error %.4g with importance, %.4g without (ratio %.3f)\n",
                dtype_name(t), weighted, plain, weighted / plain);
    MT_CHECK_MSG(weighted < 0.97 * plain, "%g vs %g", weighted, plain);
    // Uniform importance is the same as none.
    const std::vector<float> ones(n, 1.0f);
    const double uniform = weighted_sq_error(x, decode(t, encode(t, x, ones.data()), n), nullptr);
    const double none = weighted_sq_error(x, decode(t, encode(t, x, nullptr), n), nullptr);
    MT_CHECK_MSG(uniform <= none * 1.02, "uniform importance %g vs none %g", uniform, none);
}

// ---- special blocks -------------------------------------------------------------------------

MT_TEST_TABLE(zeroAndConstantBlocks, TypeRow, type_rows()) {
    const DType t = row.type;
    std::vector<float> x(64, 0.0f);
    auto y = decode(t, encode(t, x, nullptr), 64);
    for (float v : y)
        MT_COMPARE(v, 0.0f);
    for (float c : {0.375f, -3.0f, 1e-3f}) {
        MT_SCOPE("constant %g", static_cast<double>(c));
        std::fill(x.begin(), x.end(), c);
        y = decode(t, encode(t, x, nullptr), 64);
        for (float v : y)
            MT_CHECK_MSG(std::fabs(v - c) <= 2e-3f * std::fabs(c), "%g", static_cast<double>(v));
    }
    // One block zero, the next not: blocks are independent.
    for (int i = 32; i < 64; ++i)
        x[static_cast<size_t>(i)] = 0.1f * static_cast<float>(i - 48);
    std::fill(x.begin(), x.begin() + 32, 0.0f);
    y = decode(t, encode(t, x, nullptr), 64);
    for (int i = 0; i < 32; ++i)
        MT_COMPARE(y[static_cast<size_t>(i)], 0.0f);
    for (int i = 32; i < 64; ++i)
        MT_CHECK_MSG(std::fabs(y[static_cast<size_t>(i)] - x[static_cast<size_t>(i)]) < 0.15f, "%d",
                     i);
}

// Values beyond what an fp16 scale can express and values far below it: no NaN or infinity
// comes out (huge blocks saturate, tiny ones flush to zero), and ordinary blocks of the same row
// are unaffected.
MT_TEST_TABLE(hugeAndTinyInputs, TypeRow, type_rows()) {
    const DType t = row.type;
    std::vector<float> x(128);
    for (int i = 0; i < 32; ++i) {
        x[static_cast<size_t>(i)] = (i % 2 ? 1e30f : -3e29f) * static_cast<float>(i + 1);
        x[static_cast<size_t>(32 + i)] = (i % 3 ? 1e-30f : -2e-31f) * static_cast<float>(i);
        x[static_cast<size_t>(64 + i)] = 6e4f * (static_cast<float>(i) / 31.0f - 0.4f);
        x[static_cast<size_t>(96 + i)] = 0.01f * static_cast<float>(i - 16);
    }
    std::vector<float> w(128, 1.0f);
    w[5] = 1e6f;
    for (const float* imp :
         {static_cast<const float*>(nullptr), static_cast<const float*>(w.data())}) {
        MT_SCOPE("importance %s", imp ? "yes" : "no");
        const auto y = decode(t, encode(t, x, imp), 128);
        for (int i = 0; i < 128; ++i)
            MT_CHECK_MSG(std::isfinite(y[static_cast<size_t>(i)]), "element %d: %g", i,
                         static_cast<double>(y[static_cast<size_t>(i)]));
        for (int i = 32; i < 64; ++i)
            MT_CHECK_MSG(std::fabs(y[static_cast<size_t>(i)]) < 1e-20f, "%d", i);
        for (int i = 64; i < 96; ++i) // fp16-representable large values keep their precision
            MT_CHECK_MSG(std::fabs(y[static_cast<size_t>(i)] - x[static_cast<size_t>(i)]) <
                             0.08f * 6e4f,
                         "%d: %g vs %g", i, static_cast<double>(y[static_cast<size_t>(i)]),
                         static_cast<double>(x[static_cast<size_t>(i)]));
        for (int i = 96; i < 128; ++i)
            MT_CHECK_MSG(std::fabs(y[static_cast<size_t>(i)] - x[static_cast<size_t>(i)]) < 0.02f,
                         "%d", i);
    }
}

MINI_TEST_MAIN()
