// attend_group (grouped-query attention of one query row over a paged KV cache, dispatched on
// the SIMD level) against a plain double-precision reference at every level this CPU has, for
// head sizes the AVX-512 kernel takes and one it does not (the portable path), several group
// sizes, key counts around the 16-key tiles and shuffled block tables of each block size.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_avx512.h"
#include "kernels/cpu/simd.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

struct ShapeRow {
    std::string name;
    SimdLevel level;
    int head_dim;
    int block_size;
};

std::vector<ShapeRow> shape_rows() {
    std::vector<ShapeRow> rows;
    for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512})
        for (int hd : {32, 64, 80, 96, 128})
            for (int bs : {8, 16, 32})
                rows.push_back({mini_test::format("%s/hd%d/bs%d", simd_level_name(level), hd, bs),
                                level, hd, bs});
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
    // The AVX-512 kernel groups heads; every other path takes them one by one.
    MT_COMPARE(attention_groups_heads(head_dim, KvDtype::F32),
               row.level == SimdLevel::Avx512 &&
                   attend_group_avx512_supported(head_dim, KvDtype::F32));
    const int kv_heads = 2, kv_head = 1;
    const int max_keys = 140;
    const int n_blocks = (max_keys + block_size - 1) / block_size + 3;
    const int64_t slot_stride = static_cast<int64_t>(kv_heads) * head_dim;
    const auto k = test::random_floats(static_cast<size_t>(n_blocks * block_size * slot_stride),
                                       1u + head_dim, 1.0f);
    const auto v = test::random_floats(k.size(), 2u + block_size, 1.0f);
    std::vector<int32_t> table(static_cast<size_t>(n_blocks));
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937(7));
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    for (int n_heads : {1, 2, 7, 9})
        for (int n_keys : {1, 5, 16, 17, 33, 140}) {
            MT_SCOPE("heads %d keys %d", n_heads, n_keys);
            const auto q =
                test::random_floats(static_cast<size_t>(n_heads * head_dim), 3u + n_keys, 2.0f);
            std::vector<float> out(static_cast<size_t>(n_heads * head_dim + 16), 12345.0f);
            std::vector<float> scratch(static_cast<size_t>(attend_group_scratch(n_heads, n_keys)),
                                       NAN);
            PagedKvView kv;
            kv.k = reinterpret_cast<const unsigned char*>(k.data());
            kv.v = reinterpret_cast<const unsigned char*>(v.data());
            kv.table = table.data();
            kv.layout = KvLayout{KvDtype::F32, block_size, kv_heads, head_dim};
            kv.kv_head = kv_head;
            attend_group(out.data(), q.data(), n_heads, head_dim, n_keys, scale, kv,
                         scratch.data());
            for (size_t i = out.size() - 16; i < out.size(); ++i)
                MT_COMPARE(out[i], 12345.0f);
            for (int h = 0; h < n_heads; ++h) {
                std::vector<double> s(static_cast<size_t>(n_keys));
                auto row_of = [&](const std::vector<float>& c, int j) {
                    const int64_t slot =
                        static_cast<int64_t>(table[static_cast<size_t>(j / block_size)]) *
                            block_size +
                        j % block_size;
                    return c.data() + slot * slot_stride + kv_head * head_dim;
                };
                double mx = -1e300;
                for (int j = 0; j < n_keys; ++j) {
                    double d = 0;
                    for (int e = 0; e < head_dim; ++e)
                        d += static_cast<double>(q[static_cast<size_t>(h * head_dim + e)]) *
                             row_of(k, j)[e];
                    s[static_cast<size_t>(j)] = d * scale;
                    mx = std::max(mx, s[static_cast<size_t>(j)]);
                }
                double sum = 0;
                for (double& x : s)
                    sum += (x = std::exp(x - mx));
                for (int e = 0; e < head_dim; ++e) {
                    double ref = 0;
                    for (int j = 0; j < n_keys; ++j)
                        ref += s[static_cast<size_t>(j)] / sum * row_of(v, j)[e];
                    const float got = out[static_cast<size_t>(h * head_dim + e)];
                    MT_CHECK_MSG(std::fabs(got - ref) <= 2e-5 * (1.0 + std::fabs(ref)),
                                 "heads %d keys %d head %d elem %d: %g vs %g", n_heads, n_keys, h,
                                 e, static_cast<double>(got), ref);
                }
            }
        }
}

MT_TEST(unsupportedHeadDims) {
    MT_CHECK(!attend_group_avx512_supported(80, KvDtype::F32));
    MT_CHECK(!attend_group_avx512_supported(256, KvDtype::F32));
}

MINI_TEST_MAIN()
