// KV element conversions (kv_format.h): fp8 E4M3FN / E5M2 encode every representable value back
// to itself, round to nearest even at every midpoint, saturate, keep signs; int8 row
// quantization's scale and rounding; the block layout's sizes and offsets.
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/kv_format.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

struct Fp8Row {
    std::string name;
    uint8_t (*enc)(float);
    float (*dec)(uint8_t);
    float max;
    uint8_t max_code;
};

std::vector<Fp8Row> fp8_rows() {
    return {{"e4m3", fp32_to_fp8_e4m3, fp8_e4m3_to_fp32, 448.0f, 0x7E},
            {"e5m2", fp32_to_fp8_e5m2, fp8_e5m2_to_fp32, 57344.0f, 0x7B}};
}

bool is_nan_code(const Fp8Row& r, uint8_t b) {
    return r.max_code == 0x7E ? (b & 0x7F) == 0x7F : (b & 0x7F) > 0x7C;
}

} // namespace

MT_TEST_TABLE(fp8_round_trips_and_rounds_to_nearest_even, Fp8Row, fp8_rows()) {
    std::vector<std::pair<float, uint8_t>> finite; // positive values in code order
    for (int b = 0; b < 256; ++b) {
        const auto code = static_cast<uint8_t>(b);
        if (is_nan_code(row, code)) {
            MT_CHECK(std::isnan(row.dec(code)));
            continue;
        }
        const float v = row.dec(code);
        if (std::isinf(v))
            continue; // e5m2's infinities: never produced (saturation)
        MT_CHECK_MSG(row.enc(v) == code || (v == 0 && (code & 0x7F) == 0), "code 0x%02x (%g)", b,
                     static_cast<double>(v));
        if (b < 0x80)
            finite.push_back({v, code});
    }
    MT_COMPARE(row.dec(row.max_code), row.max);
    // Midpoints between neighbours round to the even code; just above / below to the nearer.
    for (size_t i = 0; i + 1 < finite.size(); ++i) {
        const float a = finite[i].first, b = finite[i + 1].first;
        const float mid = (a + b) / 2; // exact in fp32
        const uint8_t even = (finite[i].second & 1) ? finite[i + 1].second : finite[i].second;
        MT_CHECK_MSG(row.enc(mid) == even, "midpoint %g", static_cast<double>(mid));
        MT_CHECK(row.enc(std::nextafter(mid, 0.0f)) == finite[i].second);
        MT_CHECK(row.enc(std::nextafter(mid, 1e9f)) == finite[i + 1].second);
        MT_CHECK(row.enc(-mid) == (even | 0x80));
    }
    // Saturation, tiny values, NaN.
    MT_COMPARE(row.enc(row.max * 1.5f), row.max_code);
    MT_COMPARE(row.enc(1e30f), row.max_code);
    MT_COMPARE(row.enc(-INFINITY), uint8_t(row.max_code | 0x80));
    MT_COMPARE(row.enc(1e-30f), uint8_t(0));
    MT_CHECK(std::isnan(row.dec(row.enc(NAN))));
}

MT_TEST(int8_rows) {
    const float x[5] = {0.5f, -2.54f, 1.0f, 0.0f, 2.54f * 0.5f / 127.0f * 127.0f};
    int8_t q[5];
    const float s = kv_quantize_int8(x, 5, q);
    MT_COMPARE(s, 2.54f / 127.0f);
    MT_COMPARE(int(q[1]), -127);
    MT_COMPARE(int(q[0]), 25); // 0.5 * 127 / 2.54 = 25.0
    MT_COMPARE(int(q[2]), 50);
    MT_COMPARE(int(q[3]), 0);
    for (int i = 0; i < 5; ++i)
        MT_CHECK(std::fabs(q[i] * s - x[i]) <= s / 2 * 1.0001f);
    const float zeros[3] = {0, 0, 0};
    MT_COMPARE(kv_quantize_int8(zeros, 3, q), 0.0f);
    MT_COMPARE(int(q[0]), 0);
    // Stored and loaded through the row functions.
    float back[5], scale = -1;
    int8_t stored[5];
    kv_store_row_ref(KvDtype::Int8, x, 5, stored, &scale, 1.0f);
    MT_COMPARE(scale, s);
    kv_load_row_ref(KvDtype::Int8, stored, 5, scale, 1.0f, back);
    for (int i = 0; i < 5; ++i)
        MT_COMPARE(back[i], stored[i] * s);
}

MT_TEST(layout_and_names) {
    const KvLayout l{KvDtype::Int8, 16, 2, 64};
    MT_COMPARE(l.values_bytes(), int64_t{16 * 2 * 64});
    MT_COMPARE(l.block_bytes(), int64_t{16 * 2 * 64 + 16 * 2 * 4});
    MT_COMPARE(l.value_offset(3, 5, 1), 3 * l.block_bytes() + 5 * 128 + 64);
    MT_COMPARE(l.scale_offset(3, 5, 1), 3 * l.block_bytes() + 2048 + 4 * (5 * 2 + 1));
    const KvLayout f{KvDtype::F32, 16, 2, 64};
    MT_COMPARE(f.block_bytes(), int64_t{16 * 2 * 64 * 4});
    for (KvDtype t : kAllKvDtypes)
        MT_COMPARE(parse_kv_dtype(kv_dtype_name(t)).value(), t);
    MT_COMPARE(parse_kv_dtype("fp8").value(), KvDtype::Fp8E4M3);
    MT_COMPARE(parse_kv_dtype("bfloat16").value(), KvDtype::BF16);
    MT_CHECK(!parse_kv_dtype("auto").has_value());
    MT_CHECK(!parse_kv_dtype("int4").has_value());
}

MINI_TEST_MAIN()
