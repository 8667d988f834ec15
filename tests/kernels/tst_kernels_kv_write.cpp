// The KV write op (kv_write.h) at every SIMD level this CPU has, for every KV element type:
// byte-identical to kv_write_ref (values and int8 row scales) on rows built to hit every
// rounding case (random data, exact ties of each type, fp32 / fp16 / fp8 subnormals, values
// past each type's range, zeros and signed zeros, all-zero and tiny int8 rows), every row
// length's vector tail, and a sweep over fp32 bit patterns of the whole finite range.
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/kv_write.h"
#include "kernels/cpu/simd.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

struct Row {
    std::string name;
    SimdLevel level;
    KvDtype dtype;
};

std::vector<Row> rows() {
    std::vector<Row> out;
    for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512})
        for (KvDtype t : kAllKvDtypes)
            out.push_back(
                {mini_test::format("%s/%s", simd_level_name(level), kv_dtype_name(t)), level, t});
    return out;
}

float from_bits(uint32_t b) {
    return std::bit_cast<float>(b);
}

// Values that stress one rounding rule or range edge; random sign.
float special(std::mt19937& rng) {
    std::uniform_int_distribution<uint32_t> any;
    const uint32_t r = any(rng);
    const uint32_t sign = (r & 1) << 31;
    // A random normal exponent in [2^-30, 2^20] with random mantissa bits.
    const uint32_t exp = 97 + (r >> 1) % 51;
    const uint32_t mant = any(rng) & 0x7FFFFF;
    switch ((r >> 8) % 12) {
    case 0: // fp16 tie (low 13 bits = 1000...)
        return from_bits(sign | exp << 23 | (mant & ~0x1FFFu) | 0x1000);
    case 1: // bf16 tie
        return from_bits(sign | exp << 23 | (mant & ~0xFFFFu) | 0x8000);
    case 2: // e4m3 tie
        return from_bits(sign | exp << 23 | (mant & ~0xFFFFFu) | 0x80000);
    case 3: // e5m2 tie
        return from_bits(sign | exp << 23 | (mant & ~0x1FFFFFu) | 0x100000);
    case 4: // fp32 subnormal
        return from_bits(sign | (mant & 0x7FFFFF));
    case 5: // fp8 / fp16 subnormal range (2^-26 .. 2^-6), with ties there too
        return from_bits(sign | (101 + (r >> 12) % 20) << 23 |
                         ((r >> 20) & 1 ? mant : (mant & ~0x3FFFFu) | 0x20000));
    case 6: // past e4m3 / fp16 / e5m2 ranges
    {
        const float big[] = {448.0f,   464.0f,   480.0f, 500.0f, 57344.0f, 61440.0f,
                             65504.0f, 65520.0f, 7e4f,   1e30f,  3.4e38f};
        return (sign ? -1.0f : 1.0f) * big[(r >> 12) % 11];
    }
    case 7:
        return sign ? -0.0f : 0.0f;
    default:
        return std::normal_distribution<float>(0.0f, 1.0f)(rng) *
               ((r >> 12) % 8 == 0 ? 100.0f : 1.0f);
    }
}

// Writes n_tok tokens of x (row stride kv_heads * head_dim + 3) through both implementations into
// two pools; compares bytes.
bool same_bytes(KvDtype t, int head_dim, int kv_heads, int block_size, const std::vector<float>& x,
                int n_tok, float inv_scale, std::string& why) {
    const KvLayout L{t, block_size, kv_heads, head_dim};
    const int blocks = (n_tok + block_size - 1) / block_size + 2;
    std::vector<unsigned char> a(static_cast<size_t>(L.block_bytes() * blocks), 0xAB), b = a;
    std::vector<int64_t> slots(static_cast<size_t>(n_tok));
    for (int i = 0; i < n_tok; ++i) // reversed block order, a gap at the start
        slots[static_cast<size_t>(i)] =
            static_cast<int64_t>(blocks - 1 - i / block_size) * block_size + i % block_size;
    const int64_t stride = static_cast<int64_t>(kv_heads) * head_dim + 3;
    kv_write(a.data(), L, x.data(), stride, slots.data(), n_tok, inv_scale);
    kv_write_ref(b.data(), L, x.data(), stride, slots.data(), n_tok, inv_scale);
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) {
            why = mini_test::format("byte %zu: 0x%02x vs ref 0x%02x", i, a[i], b[i]);
            return false;
        }
    return true;
}

} // namespace

MT_TEST_TABLE(matchesReferenceBytes, Row, rows()) {
    if (static_cast<int>(cpu_simd_level()) < static_cast<int>(row.level))
        MT_SKIP(std::string(simd_level_name(row.level)) + " is not available on this CPU");
    test::SimdLevelGuard guard;
    set_simd_level(row.level);
    MT_REQUIRE(active_simd_level() == row.level);
    std::mt19937 rng(42);
    for (int head_dim : {1, 7, 8, 15, 16, 17, 31, 32, 64, 80, 96, 128, 256})
        for (float inv_scale : {1.0f, 1.0f / 3.5f, 64.0f}) {
            MT_SCOPE("head_dim %d inv_scale %g", head_dim, static_cast<double>(inv_scale));
            const int kv_heads = 2, n_tok = 37, bs = 16;
            const int64_t stride = static_cast<int64_t>(kv_heads) * head_dim + 3;
            std::vector<float> x(static_cast<size_t>(stride * n_tok));
            for (float& v : x)
                v = special(rng);
            // Whole rows for int8's edge cases: all zeros, one value, tiny (subnormal amax),
            // amax and -amax, plain random.
            for (int e = 0; e < head_dim; ++e) {
                x[static_cast<size_t>(e)] = 0.0f;
                x[static_cast<size_t>(stride + e)] = e == head_dim / 2 ? -3.0f : 0.0f;
                x[static_cast<size_t>(2 * stride + e)] = from_bits(1u + 977u * e);
                x[static_cast<size_t>(3 * stride + e)] = (e % 2 ? 1.0f : -1.0f) * (e % 5) * 0.25f;
            }
            std::string why;
            MT_CHECK_MSG(same_bytes(row.dtype, head_dim, kv_heads, bs, x, n_tok, inv_scale, why),
                         "%s", why.c_str());
        }
}

// Every 4099th fp32 bit pattern below infinity, both signs, 64-element rows (int8 then sees
// rows of wildly mixed magnitudes).
MT_TEST_TABLE(sweepsBitPatterns, Row, rows()) {
    if (static_cast<int>(cpu_simd_level()) < static_cast<int>(row.level))
        MT_SKIP(std::string(simd_level_name(row.level)) + " is not available on this CPU");
    test::SimdLevelGuard guard;
    set_simd_level(row.level);
    std::vector<float> x;
    for (uint64_t b = 0; b < 0x7F800000u; b += 4099) {
        x.push_back(from_bits(static_cast<uint32_t>(b)));
        x.push_back(-from_bits(static_cast<uint32_t>(b ^ 0x5555)));
    }
    const int head_dim = 64;
    const int n_tok = static_cast<int>(x.size() / (head_dim + 3)); // same_bytes' row stride
    std::string why;
    MT_CHECK_MSG(same_bytes(row.dtype, head_dim, 1, 32, x, n_tok, 1.0f, why), "%s", why.c_str());
}

MINI_TEST_MAIN()
