// attend_group (grouped-query attention of one query row over a paged KV cache, dispatched on
// the SIMD level) against a plain double-precision reference at every level this CPU has, for
// every KV element type (the cache written through kv_write, the reference computed on the
// stored values read back by kv_load_row_ref), head sizes the SIMD kernels take and one they do
// not (the portable path), several group sizes, key counts around the 8/16-key tiles and
// shuffled block tables of each block size; with and without gemma2's attention-logit
// soft-cap (cap * tanh(s / cap) on the scaled scores before the softmax).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_avx2.h"
#include "kernels/cpu/attention_avx512.h"
#include "kernels/cpu/kv_write.h"
#include "kernels/cpu/simd.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

struct ShapeRow {
    std::string name;
    SimdLevel level;
    KvDtype dtype;
    int head_dim;
    int block_size;
};

std::vector<ShapeRow> shape_rows() {
    std::vector<ShapeRow> rows;
    for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512})
        for (KvDtype t : kAllKvDtypes)
            for (int hd : {32, 64, 80, 96, 128, 256})
                for (int bs : {8, 16, 32})
                    rows.push_back({mini_test::format("%s/%s/hd%d/bs%d", simd_level_name(level),
                                                      kv_dtype_name(t), hd, bs),
                                    level, t, hd, bs});
    return rows;
}

// attend_rows' table: block size 16 for every head size, 8 and 32 at head_dim 64; the portable
// level (row by row whatever the shape) at head_dim 64 and 80.
std::vector<ShapeRow> rows_shape_rows() {
    std::vector<ShapeRow> rows;
    for (const ShapeRow& r : shape_rows())
        if ((r.block_size == 16 || r.head_dim == 64) &&
            (r.level != SimdLevel::Scalar || (r.block_size == 16 && r.head_dim <= 80)))
            rows.push_back(r);
    return rows;
}

// Restores the SIMD level the process started with.
struct LevelGuard {
    SimdLevel saved = active_simd_level();
    ~LevelGuard() { set_simd_level(saved); }
};

} // namespace

MT_TEST_TABLE(matchesReference, ShapeRow, shape_rows()) {
    if (static_cast<int>(cpu_simd_level()) < static_cast<int>(row.level))
        MT_SKIP(std::string(simd_level_name(row.level)) + " is not available on this CPU");
    LevelGuard guard;
    set_simd_level(row.level);
    MT_REQUIRE(active_simd_level() == row.level);
    const int head_dim = row.head_dim;
    const int block_size = row.block_size;
    // The SIMD kernels group heads; the portable path takes them one by one.
    const bool simd_kernel =
        row.level == SimdLevel::Avx512 ? attend_group_avx512_supported(head_dim, row.dtype)
        : row.level == SimdLevel::Avx2 ? attend_group_avx2_supported(head_dim, row.dtype)
                                       : false;
    MT_COMPARE(attention_groups_heads(head_dim, row.dtype), simd_kernel);
    MT_COMPARE(simd_kernel, row.level != SimdLevel::Scalar && head_dim != 80);
    const int kv_heads = 2, kv_head = 1;
    const int max_keys = 300; // 300: three chunks of the kernels' V sum (kVChunk 128)
    const int n_blocks = (max_keys + block_size - 1) / block_size + 3;
    const int64_t slot_stride = static_cast<int64_t>(kv_heads) * head_dim;
    std::vector<int32_t> table(static_cast<size_t>(n_blocks));
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937(7));
    // Every slot of every block written through kv_write (the table's order: key j at slot
    // table[j / block_size] * block_size + j % block_size).
    const KvLayout layout{row.dtype, block_size, kv_heads, head_dim};
    const int n_slots = n_blocks * block_size;
    const auto k_in =
        test::random_floats(static_cast<size_t>(n_slots * slot_stride), 1u + head_dim, 1.0f);
    const auto v_in = test::random_floats(k_in.size(), 2u + block_size, 1.0f);
    std::vector<int64_t> slots(static_cast<size_t>(n_slots));
    for (int j = 0; j < n_slots; ++j)
        slots[static_cast<size_t>(j)] =
            static_cast<int64_t>(table[static_cast<size_t>(j / block_size)]) * block_size +
            j % block_size;
    // fp8: layer scales that put the data well inside each type's range (stored = x / scale).
    const float k_scale = kv_dtype_is_fp8(row.dtype) ? 0.03f : 1.0f;
    const float v_scale = kv_dtype_is_fp8(row.dtype) ? 0.011f : 1.0f;
    std::vector<unsigned char> k(static_cast<size_t>(layout.block_bytes() * n_blocks)), v(k.size());
    kv_write(k.data(), layout, k_in.data(), slot_stride, slots.data(), n_slots, 1.0f / k_scale);
    kv_write(v.data(), layout, v_in.data(), slot_stride, slots.data(), n_slots, 1.0f / v_scale);
    // The stored values read back (the reference's K and V), key-major.
    auto read_back = [&](const std::vector<unsigned char>& pool, float layer_scale) {
        std::vector<float> out(static_cast<size_t>(n_slots * head_dim));
        for (int j = 0; j < n_slots; ++j) {
            const int64_t b = table[static_cast<size_t>(j / block_size)];
            float rs = 0;
            if (kv_dtype_has_row_scales(row.dtype))
                std::memcpy(&rs, pool.data() + layout.scale_offset(b, j % block_size, kv_head),
                            sizeof rs);
            kv_load_row_ref(row.dtype,
                            pool.data() + layout.value_offset(b, j % block_size, kv_head), head_dim,
                            rs, layer_scale, out.data() + static_cast<int64_t>(j) * head_dim);
        }
        return out;
    };
    const auto k_ref = read_back(k, k_scale);
    const auto v_ref = read_back(v, v_scale);
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    // key_base > 0: a sliding window's view starting mid-table (and mid-block).
    for (float cap : {0.0f, 1.5f})
        for (int key_base : {0, 3, block_size + 5})
            for (int n_heads : {1, 2, 7, 9})
                for (int n_keys : {1, 5, 16, 17, 33, 140, 300}) {
                    if (key_base > 0 && n_heads == 2)
                        continue;
                    if (cap > 0 && key_base > 3)
                        continue;
                    MT_SCOPE("cap %g base %d heads %d keys %d", double(cap), key_base, n_heads,
                             n_keys);
                    const auto q = test::random_floats(static_cast<size_t>(n_heads * head_dim),
                                                       3u + n_keys, 2.0f);
                    std::vector<float> out(static_cast<size_t>(n_heads * head_dim + 16), 12345.0f);
                    std::vector<float> scratch(
                        static_cast<size_t>(attend_group_scratch(n_heads, n_keys)), NAN);
                    PagedKvView kv;
                    kv.k = k.data();
                    kv.v = v.data();
                    kv.table = table.data();
                    kv.layout = layout;
                    kv.kv_head = kv_head;
                    kv.k_scale = k_scale;
                    kv.v_scale = v_scale;
                    kv.key_base = key_base;
                    kv.logit_softcap = cap;
                    attend_group(out.data(), q.data(), n_heads, head_dim, n_keys, scale, kv,
                                 scratch.data());
                    for (size_t i = out.size() - 16; i < out.size(); ++i)
                        MT_COMPARE(out[i], 12345.0f);
                    for (int h = 0; h < n_heads; ++h) {
                        std::vector<double> s(static_cast<size_t>(n_keys));
                        auto row_of = [&](const std::vector<float>& c, int j) {
                            return c.data() + static_cast<int64_t>(key_base + j) * head_dim;
                        };
                        double mx = -1e300;
                        for (int j = 0; j < n_keys; ++j) {
                            double d = 0;
                            for (int e = 0; e < head_dim; ++e)
                                d += static_cast<double>(q[static_cast<size_t>(h * head_dim + e)]) *
                                     row_of(k_ref, j)[e];
                            s[static_cast<size_t>(j)] =
                                cap > 0 ? cap * std::tanh(d * scale / cap) : d * scale;
                            mx = std::max(mx, s[static_cast<size_t>(j)]);
                        }
                        double sum = 0;
                        for (double& x : s)
                            sum += (x = std::exp(x - mx));
                        for (int e = 0; e < head_dim; ++e) {
                            double ref = 0;
                            for (int j = 0; j < n_keys; ++j)
                                ref += s[static_cast<size_t>(j)] / sum * row_of(v_ref, j)[e];
                            const float got = out[static_cast<size_t>(h * head_dim + e)];
                            MT_CHECK_MSG(std::fabs(got - ref) <= 2e-5 * (1.0 + std::fabs(ref)),
                                         "heads %d keys %d head %d elem %d: %g vs %g", n_heads,
                                         n_keys, h, e, static_cast<double>(got), ref);
                        }
                    }
                }
}

// attend_rows (several consecutive query rows of one sequence at once: a prefill chunk, a
// speculative verify step) against attend_group row by row: bit for bit, at every level this CPU
// has, for every element type and the head sizes the SIMD kernels take (and 80, which goes row by
// row through the portable path), with key counts around the tiles and the V chunks (row r sees
// n_keys0 + r keys, so a call's rows end in different tiles and chunks), a sliding window's
// key_base, gemma2's soft-cap and int8's row scales: a token's logits must not depend on which
// rows share its step, or speculative decoding and prefix caching would change the text.
MT_TEST_TABLE(rowsMatchOneByOne, ShapeRow, rows_shape_rows()) {
    if (static_cast<int>(cpu_simd_level()) < static_cast<int>(row.level))
        MT_SKIP(std::string(simd_level_name(row.level)) + " is not available on this CPU");
    LevelGuard guard;
    set_simd_level(row.level);
    const int head_dim = row.head_dim, block_size = row.block_size;
    MT_COMPARE(attention_multi_row(head_dim, row.dtype, 7),
               row.level != SimdLevel::Scalar && head_dim != 80);
    MT_CHECK(!attention_multi_row(head_dim, row.dtype, 65));
    const int kv_heads = 2, kv_head = 1, max_keys = 320;
    const int n_blocks = (max_keys + block_size - 1) / block_size + 1;
    const int64_t slot_stride = static_cast<int64_t>(kv_heads) * head_dim;
    std::vector<int32_t> table(static_cast<size_t>(n_blocks));
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937(11));
    const KvLayout layout{row.dtype, block_size, kv_heads, head_dim};
    const int n_slots = n_blocks * block_size;
    const auto k_in =
        test::random_floats(static_cast<size_t>(n_slots * slot_stride), 5u + head_dim, 1.0f);
    const auto v_in = test::random_floats(k_in.size(), 6u + block_size, 1.0f);
    std::vector<int64_t> slots(static_cast<size_t>(n_slots));
    std::iota(slots.begin(), slots.end(), 0);
    const float k_scale = kv_dtype_is_fp8(row.dtype) ? 0.03f : 1.0f;
    const float v_scale = kv_dtype_is_fp8(row.dtype) ? 0.011f : 1.0f;
    std::vector<unsigned char> k(static_cast<size_t>(layout.block_bytes() * n_blocks)), v(k.size());
    kv_write(k.data(), layout, k_in.data(), slot_stride, slots.data(), n_slots, 1.0f / k_scale);
    kv_write(v.data(), layout, v_in.data(), slot_stride, slots.data(), n_slots, 1.0f / v_scale);
    PagedKvView kv;
    kv.k = k.data();
    kv.v = v.data();
    kv.table = table.data();
    kv.layout = layout;
    kv.kv_head = kv_head;
    kv.k_scale = k_scale;
    kv.v_scale = v_scale;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    for (float cap : {0.0f, 1.5f})
        for (int key_base : {0, 3})
            for (int n_heads : {1, 7, 9})
                for (int n_rows : {2, 5, 16})
                    for (int n_keys0 : {1, 15, 17, 126, 290}) {
                        if ((cap > 0 || key_base > 0) && n_keys0 != 17 && n_keys0 != 126)
                            continue;
                        MT_SCOPE("cap %g base %d heads %d rows %d keys0 %d", double(cap), key_base,
                                 n_heads, n_rows, n_keys0);
                        kv.key_base = key_base;
                        kv.logit_softcap = cap;
                        // Rows strided wider than their heads (the engine's q and out rows hold
                        // every KV head's group).
                        const int64_t stride = static_cast<int64_t>(n_heads + 2) * head_dim;
                        const auto q = test::random_floats(static_cast<size_t>(n_rows * stride),
                                                           7u + n_keys0 + n_rows, 2.0f);
                        std::vector<float> want(q.size(), 777.0f), got(q.size() + 16, 777.0f);
                        std::vector<float> scratch(
                            static_cast<size_t>(attend_rows_scratch(n_rows, n_heads, n_keys0)),
                            NAN);
                        MT_CHECK(static_cast<int64_t>(scratch.size()) >=
                                 attend_group_scratch(n_heads, n_keys0 + n_rows - 1));
                        for (int r = 0; r < n_rows; ++r)
                            attend_group(want.data() + r * stride, q.data() + r * stride, n_heads,
                                         head_dim, n_keys0 + r, scale, kv, scratch.data());
                        std::fill(scratch.begin(), scratch.end(), NAN);
                        attend_rows(got.data(), stride, q.data(), stride, n_rows, n_heads, head_dim,
                                    n_keys0, scale, kv, scratch.data());
                        for (size_t i = q.size(); i < got.size(); ++i)
                            MT_COMPARE(got[i], 777.0f);
                        int differ = 0;
                        for (size_t i = 0; i < want.size(); ++i)
                            differ += std::memcmp(&want[i], &got[i], sizeof(float)) != 0;
                        MT_CHECK_MSG(differ == 0, "%d of %zu outputs differ (first row %g vs %g)",
                                     differ, want.size(), static_cast<double>(want[0]),
                                     static_cast<double>(got[0]));
                    }
}

MT_TEST(unsupportedHeadDims) {
    for (KvDtype t : kAllKvDtypes) {
        MT_CHECK(!attend_group_avx512_supported(80, t));
        MT_CHECK(!attend_group_avx2_supported(80, t));
        MT_CHECK(attend_group_avx512_supported(256, t)); // gemma2/3
        MT_CHECK(attend_group_avx2_supported(256, t));
        MT_CHECK(attend_group_avx512_supported(64, t));
        MT_CHECK(attend_group_avx2_supported(128, t));
    }
}

MINI_TEST_MAIN()
