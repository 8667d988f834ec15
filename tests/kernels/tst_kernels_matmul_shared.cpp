// matmul_shared (kernels/cpu/matmul.h): several matrices with one input give, bit for bit, what
// one matmul per matrix gives — panel matrices of one family (one shared activation
// preparation and one pass over the threads), families mixed, Rows-layout matrices, rows % 16
// tails — at every SIMD level of this CPU, with and without threads, for 1 .. 40 tokens. Also
// a panel product split over the threads: its bits equal the single-threaded product's.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight_layout.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

struct Matrix {
    DType type;
    int64_t rows, cols;
    WeightLayout layout;
    std::vector<uint8_t> bytes;
    Matrix(DType t, int64_t r, int64_t c, WeightLayout l, uint32_t seed)
        : type(t), rows(r), cols(c), layout(l) {
        const auto wf = test::random_floats(static_cast<size_t>(r * c), seed, 0.05f);
        const int64_t rb = dtype_row_bytes(t, c);
        std::vector<uint8_t> rows_bytes(static_cast<size_t>(rb * r));
        for (int64_t i = 0; i < r; ++i)
            quantize_row(t, wf.data() + i * c, rows_bytes.data() + i * rb, c);
        if (l == WeightLayout::Rows) {
            bytes = std::move(rows_bytes);
        } else {
            bytes.resize(rows_bytes.size());
            pack_matrix_panels(t, rows_bytes.data(), r, c, bytes.data(), nullptr);
        }
    }
    WeightMatrix view() const { return {type, bytes.data(), rows, cols, layout}; }
};

struct Group {
    std::string name;
    std::vector<Matrix> matrices;
};

constexpr WeightLayout P = WeightLayout::Panels;

// Shapes of q/k/v and gate/up (scaled down), tails included.
std::vector<Group> groups() {
    const int64_t c = 256;
    std::vector<Group> g;
    g.push_back({"q8_0 qkv", {}});
    g.back().matrices = {Matrix(DType::Q8_0, 96, c, P, 1), Matrix(DType::Q8_0, 32, c, P, 2),
                         Matrix(DType::Q8_0, 32, c, P, 3)};
    g.push_back({"q8_0 tails", {}});
    g.back().matrices = {Matrix(DType::Q8_0, 53, c, P, 4), Matrix(DType::Q8_0, 7, c, P, 5),
                         Matrix(DType::Q8_0, 18, c, P, 6)};
    g.push_back({"q4_0 gate/up", {}});
    g.back().matrices = {Matrix(DType::Q4_0, 144, c, P, 7), Matrix(DType::Q4_0, 144, c, P, 8)};
    g.push_back({"q4_k q4_k q6_k", {}});
    g.back().matrices = {Matrix(DType::Q4_K, 64, c, P, 9), Matrix(DType::Q4_K, 32, c, P, 10),
                         Matrix(DType::Q6_K, 48, c, P, 11)};
    g.push_back({"q5_k q6_k", {}});
    g.back().matrices = {Matrix(DType::Q5_K, 80, c, P, 12), Matrix(DType::Q6_K, 80, c, P, 13)};
    g.push_back({"f16", {}});
    g.back().matrices = {Matrix(DType::F16, 64, c, P, 14), Matrix(DType::F16, 16, c, P, 15),
                         Matrix(DType::F16, 21, c, P, 16)};
    g.push_back({"bf16", {}});
    g.back().matrices = {Matrix(DType::BF16, 48, c, P, 17), Matrix(DType::BF16, 48, c, P, 18)};
    g.push_back({"families mixed", {}});
    g.back().matrices = {Matrix(DType::Q8_0, 64, c, P, 19), Matrix(DType::F16, 32, c, P, 20),
                         Matrix(DType::Q4_K, 32, c, P, 21)};
    g.push_back({"rows layout", {}});
    g.back().matrices = {Matrix(DType::Q8_0, 64, c, WeightLayout::Rows, 22),
                         Matrix(DType::Q8_0, 32, c, P, 23)};
    return g;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

MT_TEST(sharedMatchesOneMatmulPerMatrix) {
    test::SimdLevelGuard guard;
    ThreadPool pool(2);
    for (const Group& g : groups()) {
        for (SimdLevel l : test::available_levels()) {
            set_simd_level(l);
            for (int64_t nt : {1, 2, 7, 32, 40}) {
                MT_SCOPE("%s, level %s, %lld tokens", g.name.c_str(), simd_level_name(l),
                         static_cast<long long>(nt));
                const int64_t cols = g.matrices[0].cols;
                const auto x = test::random_floats(static_cast<size_t>(nt * cols), 99, 1.0f);
                for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
                    std::vector<std::vector<float>> want, got;
                    std::vector<MatmulOut> outs;
                    for (const Matrix& m : g.matrices) {
                        want.emplace_back(static_cast<size_t>(m.rows * nt));
                        matmul(want.back().data(), m.view(), x.data(), nt, nullptr);
                        got.emplace_back(static_cast<size_t>(m.rows * nt), -1.0f);
                    }
                    for (size_t i = 0; i < g.matrices.size(); ++i)
                        outs.push_back({got[i].data(), g.matrices[i].view()});
                    matmul_shared(outs, x.data(), nt, tp);
                    for (size_t i = 0; i < g.matrices.size(); ++i)
                        MT_CHECK_MSG(same_bits(want[i], got[i]), "matrix %zu, %s", i,
                                     tp ? "2 threads" : "no pool");
                }
            }
        }
    }
}

// A matrix of many panels split over the threads: the threaded product's bits are the
// single-threaded product's, for every panel family.
MT_TEST(threadedPanelsMatchSingleThread) {
    test::SimdLevelGuard guard;
    ThreadPool pool(2);
    for (DType t : {DType::Q8_0, DType::Q4_K, DType::Q6_K, DType::F16, DType::BF16}) {
        const Matrix m(t, 16 * 70 + 5, 256, P, 31);
        for (SimdLevel l : test::available_levels()) {
            set_simd_level(l);
            for (int64_t nt : {3, 32}) {
                MT_SCOPE("%s, level %s, %lld tokens", dtype_name(t), simd_level_name(l),
                         static_cast<long long>(nt));
                const auto x = test::random_floats(static_cast<size_t>(nt * m.cols), 5, 1.0f);
                std::vector<float> one(static_cast<size_t>(m.rows * nt)), two(one.size(), -1.0f);
                matmul(one.data(), m.view(), x.data(), nt, nullptr);
                matmul(two.data(), m.view(), x.data(), nt, &pool);
                MT_CHECK(same_bits(one, two));
            }
        }
    }
}

MINI_TEST_MAIN()
