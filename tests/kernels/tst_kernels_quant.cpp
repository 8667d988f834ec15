// fp16/bf16 conversions (exhaustive) and row (de)quantization of every DType: hand-built GGML
// blocks decode to the documented values, round trips stay within per-type error bounds, and the
// quantizers are deterministic.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernel_test_util.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_blocks.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

// Independent reference for fp16 -> fp32: the value from the bit fields, through double.
double fp16_value(uint16_t h) {
    const int sign = (h >> 15) ? -1 : 1;
    const int exp = (h >> 10) & 31;
    const int mant = h & 1023;
    if (exp == 0)
        return sign * std::ldexp(static_cast<double>(mant), -24);
    if (exp == 31)
        return mant ? NAN : sign * INFINITY;
    return sign * std::ldexp(1024.0 + mant, exp - 25);
}

// Independent reference for fp32 -> fp16/bf16 rounding: nearest-even in double arithmetic.
// mant_bits: 10 (fp16) or 7 (bf16); min_exp: -14 or -126; max_finite: largest finite value.
uint16_t round_reference(float f, int mant_bits, int min_exp, double max_finite, int exp_bias,
                         int total_exp_bits) {
    const uint16_t sign = std::signbit(f) ? static_cast<uint16_t>(1u << 15) : 0;
    const double a = std::fabs(static_cast<double>(f));
    const uint16_t inf = static_cast<uint16_t>(((1u << total_exp_bits) - 1) << mant_bits);
    if (std::isinf(a))
        return sign | inf;
    int e = a > 0 ? std::ilogb(a) : min_exp;
    if (e < min_exp)
        e = min_exp;
    const double ulp = std::ldexp(1.0, e - mant_bits);
    double m = std::nearbyint(a / ulp); // default rounding mode: nearest-even
    double v = m * ulp;
    const double half_ulp_above_max =
        max_finite + std::ldexp(1.0, std::ilogb(max_finite) - mant_bits - 1);
    if (a >= half_ulp_above_max)
        return sign | inf;
    // Encode v.
    if (v == 0)
        return sign;
    int ev = std::ilogb(v);
    if (ev < min_exp) { // subnormal
        const auto mm = static_cast<uint16_t>(v / std::ldexp(1.0, min_exp - mant_bits));
        return sign | mm;
    }
    const auto frac =
        static_cast<uint16_t>(v / std::ldexp(1.0, ev - mant_bits) - std::ldexp(1.0, mant_bits));
    return static_cast<uint16_t>(sign | ((ev + exp_bias) << mant_bits) | frac);
}

uint16_t fp16_ref(float f) {
    return round_reference(f, 10, -14, 65504.0, 15, 5);
}
uint16_t bf16_ref(float f) {
    return round_reference(f, 7, -126, std::ldexp(255.0 / 128.0, 127), 127, 8);
}

#if defined(__x86_64__)
__attribute__((target("f16c"))) uint16_t f16c_to_half(float f) {
    return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float f16c_to_float(uint16_t h) {
    return _cvtsh_ss(h);
}
#endif

bool has_f16c() {
    return cpu_simd_level() >= SimdLevel::Avx2;
} // Avx2 level implies F16C

float rms(const std::vector<float>& v) {
    double s = 0;
    for (float x : v)
        s += static_cast<double>(x) * x;
    return static_cast<float>(std::sqrt(s / static_cast<double>(v.size())));
}

} // namespace

MT_TEST(fp16ToFp32Exhaustive) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = fp16_to_fp32(static_cast<uint16_t>(h));
        const double ref = fp16_value(static_cast<uint16_t>(h));
        if (std::isnan(ref)) {
            MT_CHECK_MSG(std::isnan(f), "%x", h);
            continue;
        }
        MT_CHECK_MSG(static_cast<double>(f) == ref && std::signbit(f) == std::signbit(ref), "%x",
                     h);
#if defined(__x86_64__)
        if (has_f16c())
            MT_COMPARE(std::bit_cast<uint32_t>(f),
                       std::bit_cast<uint32_t>(f16c_to_float(static_cast<uint16_t>(h))));
#endif
    }
}

MT_TEST(fp32ToFp16RoundTripAndMidpoints) {
    for (uint32_t h = 0; h < 65536; ++h) {
        MT_SCOPE("h %x", h);
        const auto hh = static_cast<uint16_t>(h);
        const float f = fp16_to_fp32(hh);
        if (std::isnan(f)) {
            const uint16_t back = fp32_to_fp16(f);
            MT_CHECK((back & 0x7C00) == 0x7C00 && (back & 0x3FF) != 0);
            continue;
        }
        MT_COMPARE(fp32_to_fp16(f), hh);
        // Midpoint to the next value up (in magnitude) ties to the even mantissa.
        if ((h & 0x7FFF) < 0x7BFF) {
            const double lo = fp16_value(hh), hi = fp16_value(static_cast<uint16_t>(h + 1));
            const float mid = static_cast<float>((lo + hi) / 2); // exact in fp32
            const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : hh;
            MT_COMPARE(fp32_to_fp16(mid), even);
            MT_COMPARE(fp32_to_fp16(std::nextafter(mid, 0.0f)), hh);
            MT_COMPARE(fp32_to_fp16(std::nextafter(mid, mid * 2)), static_cast<uint16_t>(h + 1));
        }
    }
    MT_COMPARE(fp32_to_fp16(65519.996f), uint16_t{0x7BFF});
    MT_COMPARE(fp32_to_fp16(65520.0f), uint16_t{0x7C00});
    MT_COMPARE(fp32_to_fp16(-1e10f), uint16_t{0xFC00});
    MT_COMPARE(fp32_to_fp16(INFINITY), uint16_t{0x7C00});
    MT_COMPARE(fp32_to_fp16(std::ldexp(1.0f, -25)), uint16_t{0}); // tie to even (zero)
    MT_COMPARE(fp32_to_fp16(std::ldexp(1.5f, -25)), uint16_t{1});
    MT_COMPARE(fp32_to_fp16(-std::ldexp(1.0f, -30)), uint16_t{0x8000}); // signed zero
}

MT_TEST(fp32ToFp16RandomVsReferences) {
    std::mt19937 rng(7);
    for (int i = 0; i < 400000; ++i) {
        const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
        if (std::isnan(f))
            continue;
        MT_SCOPE("f %a", static_cast<double>(f));
        const uint16_t got = fp32_to_fp16(f);
        MT_COMPARE(got, fp16_ref(f));
#if defined(__x86_64__)
        if (has_f16c())
            MT_COMPARE(got, f16c_to_half(f));
#endif
    }
}

MT_TEST(bf16Exhaustive) {
    for (uint32_t b = 0; b < 65536; ++b) {
        MT_SCOPE("b %x", b);
        const auto bb = static_cast<uint16_t>(b);
        const float f = bf16_to_fp32(bb);
        MT_COMPARE(std::bit_cast<uint32_t>(f), b << 16);
        if (std::isnan(f)) {
            MT_CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(f))));
            continue;
        }
        MT_COMPARE(fp32_to_bf16(f), bb);
        if ((b & 0x7FFF) < 0x7F7F) { // midpoint to the next value ties to even
            const float mid = std::bit_cast<float>((b << 16) | 0x8000u);
            MT_COMPARE(fp32_to_bf16(mid), (b & 1) ? static_cast<uint16_t>(b + 1) : bb);
        }
    }
    std::mt19937 rng(11);
    for (int i = 0; i < 400000; ++i) {
        const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
        if (std::isnan(f))
            continue;
        MT_SCOPE("f %a", static_cast<double>(f));
        MT_COMPARE(fp32_to_bf16(f), bf16_ref(f));
    }
    MT_COMPARE(fp32_to_bf16(std::numeric_limits<float>::max()),
               uint16_t{0x7F80}); // rounds up to inf
}

// Hand-built blocks decode to the values the GGML layout documents.
MT_TEST(q4_0Layout) {
    BlockQ4_0 b{};
    b.d = fp32_to_fp16(0.5f);
    for (int j = 0; j < 16; ++j)
        b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    float y[32];
    dequantize_row(DType::Q4_0, &b, y, 32);
    for (int j = 0; j < 16; ++j) {
        MT_COMPARE(y[j], 0.5f * static_cast<float>(j - 8));
        MT_COMPARE(y[j + 16], 0.5f * static_cast<float>(7 - j));
    }
}

MT_TEST(q8_0Layout) {
    BlockQ8_0 b{};
    b.d = fp32_to_fp16(0.25f);
    for (int j = 0; j < 32; ++j)
        b.qs[j] = static_cast<int8_t>(j * 8 - 127);
    float y[32];
    dequantize_row(DType::Q8_0, &b, y, 32);
    for (int j = 0; j < 32; ++j)
        MT_COMPARE(y[j], 0.25f * static_cast<float>(j * 8 - 127));
}

MT_TEST(q4_KLayout) {
    // Sub-block j: scale 3 + 7j (up to 52, uses the high bits), min 60 - 5j.
    int sc[8], mn[8];
    for (int j = 0; j < 8; ++j) {
        sc[j] = 3 + 7 * j;
        mn[j] = 60 - 5 * j;
    }
    BlockQ4_K b{};
    b.d = fp32_to_fp16(0.125f);
    b.dmin = fp32_to_fp16(0.0625f);
    // Packing as documented: bytes 0-3 scales 0-3 (+2 high bits of scales 4-7), bytes 4-7
    // mins 0-3 (+2 high bits of mins 4-7), bytes 8-11 low nibbles of scale/min 4-7.
    for (int j = 0; j < 4; ++j) {
        b.scales[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
        b.scales[j + 4] = static_cast<uint8_t>(mn[j] | ((mn[j + 4] >> 4) << 6));
        b.scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4));
    }
    for (int i = 0; i < 128; ++i)
        b.qs[i] = static_cast<uint8_t>((i % 16) | (((i * 7) % 16) << 4));
    float y[256];
    dequantize_row(DType::Q4_K, &b, y, 256);
    for (int e = 0; e < 256; ++e) {
        const int chunk = e / 64, within = e % 64, l = within % 32;
        const uint8_t byte = b.qs[32 * chunk + l];
        const int q = within < 32 ? (byte & 15) : (byte >> 4);
        const int j = e / 32;
        const float expect = 0.125f * static_cast<float>(sc[j]) * static_cast<float>(q) -
                             0.0625f * static_cast<float>(mn[j]);
        MT_CHECK_MSG(std::fabs(y[e] - expect) < 1e-6f, "element %d", e);
    }
}

MT_TEST(q6_KLayout) {
    BlockQ6_K b{};
    b.d = fp32_to_fp16(0.5f);
    for (int g = 0; g < 16; ++g)
        b.scales[g] = static_cast<int8_t>(g % 2 ? -(g + 1) : g + 1);
    int q[256];
    for (int e = 0; e < 256; ++e)
        q[e] = (e * 37 + 11) % 64;
    // ql: element 128h + l (+32) low nibbles of ql[64h + l (+32)], elements +64/+96 the high
    // nibbles; qh[32h + l] holds the top two bits of elements l, l+32, l+64, l+96 (2 bits each).
    for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 32; ++l) {
            const int* qq = q + 128 * h;
            b.ql[64 * h + l] = static_cast<uint8_t>((qq[l] & 15) | ((qq[l + 64] & 15) << 4));
            b.ql[64 * h + l + 32] =
                static_cast<uint8_t>((qq[l + 32] & 15) | ((qq[l + 96] & 15) << 4));
            b.qh[32 * h + l] =
                static_cast<uint8_t>((qq[l] >> 4) | ((qq[l + 32] >> 4) << 2) |
                                     ((qq[l + 64] >> 4) << 4) | ((qq[l + 96] >> 4) << 6));
        }
    float y[256];
    dequantize_row(DType::Q6_K, &b, y, 256);
    for (int e = 0; e < 256; ++e)
        MT_COMPARE(y[e],
                   0.5f * static_cast<float>(b.scales[e / 16]) * static_cast<float>(q[e] - 32));
}

namespace {

struct RoundTripRow {
    std::string name;
    DType type;
    int n;
    double max_rel_rms;
};

std::vector<RoundTripRow> round_trip_rows() {
    const struct {
        DType t;
        double bound;
    } cases[] = {{DType::F32, 0.0},     {DType::F16, 5e-4},   {DType::BF16, 4e-3},
                 {DType::Q8_0, 0.0095}, {DType::Q4_0, 0.145}, {DType::Q4_K, 0.11},
                 {DType::Q6_K, 0.03}};
    std::vector<RoundTripRow> rows;
    for (const auto& c : cases)
        for (int blocks : {1, 3, 8}) {
            const int n =
                static_cast<int>(dtype_block_elems(c.t) == 1
                                     ? 256 * blocks + 7
                                     : dtype_block_elems(c.t) * blocks *
                                           (c.t == DType::Q4_0 || c.t == DType::Q8_0 ? 8 : 1));
            rows.push_back({mini_test::format("%s/n=%d", dtype_name(c.t), n), c.t, n, c.bound});
        }
    return rows;
}

struct TypeRow {
    std::string name;
    DType type;
};

std::vector<TypeRow> special_block_rows() {
    std::vector<TypeRow> rows;
    for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K})
        rows.push_back({dtype_name(t), t});
    return rows;
}

} // namespace

MT_TEST_TABLE(roundTrip, RoundTripRow, round_trip_rows()) {
    const DType t = row.type;
    const int n = row.n;
    const double maxRelRms = row.max_rel_rms;
    const auto x =
        test::random_floats(static_cast<size_t>(n), 1234u + static_cast<uint32_t>(n), 0.02f);
    std::vector<uint8_t> q(static_cast<size_t>(dtype_row_bytes(t, n))), q2(q.size());
    quantize_row(t, x.data(), q.data(), n);
    quantize_row(t, x.data(), q2.data(), n);
    MT_CHECK(q == q2); // deterministic
    std::vector<float> y(static_cast<size_t>(n), NAN);
    dequantize_row(t, q.data(), y.data(), n);
    std::vector<float> err(static_cast<size_t>(n));
    for (size_t i = 0; i < err.size(); ++i) {
        MT_CHECK(std::isfinite(y[i]));
        err[i] = y[i] - x[i];
    }
    const double rel = rms(err) / rms(x);
    MT_CHECK_MSG(rel <= maxRelRms, "relative rms error %g > %g", rel, maxRelRms);
    if (t == DType::F32)
        MT_COMPARE(rel, 0.0);
}

// Blocks of zeros and of constants survive exactly; K-quants keep a zero block zero.
MT_TEST_TABLE(specialBlocks, TypeRow, special_block_rows()) {
    const DType t = row.type;
    std::vector<float> x(256, 0.0f), y(256, NAN);
    std::vector<uint8_t> q(static_cast<size_t>(dtype_row_bytes(t, 256)));
    quantize_row(t, x.data(), q.data(), 256);
    dequantize_row(t, q.data(), y.data(), 256);
    for (float v : y)
        MT_COMPARE(v, 0.0f);
    // A block with one large value: that value is reproduced within 1%.
    x[40] = -3.0f;
    quantize_row(t, x.data(), q.data(), 256);
    dequantize_row(t, q.data(), y.data(), 256);
    MT_CHECK_MSG(std::fabs(y[40] + 3.0f) < 0.03f, "%g", static_cast<double>(y[40]));
    for (int i = 0; i < 256; ++i)
        if (i != 40)
            MT_CHECK_MSG(std::fabs(y[i]) < 0.2f, "%d: %g", i, static_cast<double>(y[i]));
}

// K-quants beat the 32-block formats of the same width on the same data.
MT_TEST(kQuantsNoWorseThanLegacy) {
    const auto x = test::random_floats(4096, 99, 1.0f);
    auto err_of = [&](DType t) {
        std::vector<uint8_t> q(static_cast<size_t>(dtype_row_bytes(t, 4096)));
        std::vector<float> y(4096), e(4096);
        quantize_row(t, x.data(), q.data(), 4096);
        dequantize_row(t, q.data(), y.data(), 4096);
        for (size_t i = 0; i < y.size(); ++i)
            e[i] = y[i] - x[i];
        return rms(e);
    };
    MT_CHECK(err_of(DType::Q4_K) < err_of(DType::Q4_0));
    MT_CHECK(err_of(DType::Q6_K) < err_of(DType::Q4_K) * 0.5f);
}

MINI_TEST_MAIN()

// Q4_0, Q4_K and Q6_K take importance weights (an importance matrix's per-column mean x^2): on a
// row whose importance is skewed (every 7th column matters 100x more), the importance-weighted
// error is lower with them than without; without them the output is the unweighted quantizer's.
MT_TEST(importanceWeightsQ4_0Q4_KQ6_K) {
    for (DType t : {DType::Q4_0, DType::Q4_K, DType::Q6_K}) {
        MT_SCOPE("%s", dtype_name(t));
        const int64_t n = 2048;
        double plain = 0, weighted = 0;
        for (uint32_t seed = 0; seed < 4; ++seed) {
            std::mt19937 rng(700 + seed);
            std::normal_distribution<float> nd(0.0f, 1.0f);
            std::vector<float> x(n), imp(n, 1.0f), y(n);
            for (auto& v : x)
                v = nd(rng);
            for (int64_t i = 0; i < n; i += 7)
                imp[static_cast<size_t>(i)] = 100.0f;
            std::vector<uint8_t> q(static_cast<size_t>(dtype_row_bytes(t, n)));
            std::vector<uint8_t> q_null(q.size()), q_unit(q.size());
            auto werr = [&](const float* w) {
                quantize_row(t, x.data(), q.data(), n, w);
                dequantize_row(t, q.data(), y.data(), n);
                double e = 0, s = 0;
                for (int64_t i = 0; i < n; ++i) {
                    e += imp[i] * (x[i] - y[i]) * (x[i] - y[i]);
                    s += imp[i] * x[i] * x[i];
                }
                return std::sqrt(e / s);
            };
            plain += werr(nullptr);
            weighted += werr(imp.data());
            quantize_row(t, x.data(), q_null.data(), n);
            quantize_row(t, x.data(), q_unit.data(), n, nullptr);
            MT_CHECK(q_null == q_unit);
        }
        std::printf("  %s: weighted error %.4f without importance, %.4f with\n", dtype_name(t),
                    plain / 4, weighted / 4);
        MT_CHECK_MSG(weighted < 0.9 * plain, "%g vs %g", weighted, plain);
    }
}
