// Panel layout of F16 and BF16 weights (kernels/cpu/panel_float.h): the formats place every
// byte where the header says and unpack_row inverts pack exactly (NaN / inf bit patterns
// included); matmul on panel matrices matches matmul_reference at every SIMD level of this CPU,
// with the bf16 dot on and off; and a token's outputs are bit-identical alone or in any batch
// (1 .. 40 tokens, with and without threads).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/panel_float.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight_layout.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::kernels;

namespace {

constexpr DType kTypes[] = {DType::F16, DType::BF16};

// Restores the bf16-dot switch when a test leaves.
struct Bf16DotGuard {
    bool saved = bf16_dot_enabled();
    ~Bf16DotGuard() { set_bf16_dot_enabled(saved); }
};

// Random 16-bit patterns with the special values of both formats mixed in.
std::vector<uint8_t> random_bits(size_t n_values, uint32_t seed) {
    static constexpr uint16_t kSpecial[] = {0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFFFF, 0x7F80,
                                            0xFF80, 0x7FC0, 0x7F81, 0x0001, 0x8000, 0x0000};
    std::mt19937 rng(seed);
    std::vector<uint8_t> out(n_values * 2);
    for (size_t i = 0; i < n_values; ++i) {
        auto v = static_cast<uint16_t>(rng());
        if (rng() % 4 == 0)
            v = kSpecial[rng() % std::size(kSpecial)];
        std::memcpy(out.data() + 2 * i, &v, 2);
    }
    return out;
}

// Where the header says element (row i, column c) of a panel lies.
size_t documented_offset(DType t, int i, int64_t c, int64_t cols) {
    if (t == DType::F16)
        return static_cast<size_t>(c) * 32 + static_cast<size_t>(i) * 2;
    if (c < cols / 2 * 2)
        return static_cast<size_t>(c / 2) * 64 + static_cast<size_t>(i) * 4 +
               static_cast<size_t>(c % 2) * 2;
    return static_cast<size_t>(cols / 2) * 64 + static_cast<size_t>(i) * 2;
}

struct Matrix {
    DType type;
    int64_t rows, cols;
    std::vector<uint8_t> rows_bytes, panel_bytes;
    Matrix(DType t, int64_t r, int64_t c, uint32_t seed) : type(t), rows(r), cols(c) {
        auto wf = test::random_floats(static_cast<size_t>(r * c), seed, 0.05f);
        for (int64_t i = 0; i < r; ++i)
            for (int64_t j = 0; j < c; ++j)
                wf[static_cast<size_t>(i * c + j)] *= 0.25f + static_cast<float>(i % 5);
        const int64_t rb = dtype_row_bytes(t, c);
        rows_bytes.resize(static_cast<size_t>(rb * r));
        for (int64_t i = 0; i < r; ++i)
            quantize_row(t, wf.data() + i * c, rows_bytes.data() + i * rb, c);
        panel_bytes.resize(rows_bytes.size());
        pack_matrix_panels(t, rows_bytes.data(), r, c, panel_bytes.data(), nullptr);
    }
    WeightMatrix rows_layout() const {
        return {type, rows_bytes.data(), rows, cols, WeightLayout::Rows};
    }
    WeightMatrix panels() const {
        return {type, panel_bytes.data(), rows, cols, WeightLayout::Panels};
    }
};

constexpr int kGuard = 16;
constexpr float kGuardValue = 12345.0f;

// matmul into a NaN-poisoned buffer followed by a guard zone.
std::vector<float> run(const WeightMatrix& w, const float* x, int64_t n, ThreadPool* pool) {
    std::vector<float> y(static_cast<size_t>(w.rows * n + kGuard), NAN);
    for (int i = 0; i < kGuard; ++i)
        y[y.size() - 1 - static_cast<size_t>(i)] = kGuardValue;
    matmul(y.data(), w, x, n, pool);
    for (int i = 0; i < kGuard; ++i)
        MT_CHECK_MSG(y[y.size() - 1 - static_cast<size_t>(i)] == kGuardValue,
                     "wrote past the end of y");
    y.resize(static_cast<size_t>(w.rows * n));
    return y;
}

// fp32 -> bf16 -> fp32, round to nearest even (finite inputs), written from the definition.
float bf16_round(float f) {
    const double a = std::fabs(static_cast<double>(f));
    if (a == 0 || !std::isfinite(a))
        return f;
    int e = 0;
    std::frexp(a, &e);                                         // a = m * 2^e, m in [0.5, 1)
    const double ulp = std::ldexp(1.0, std::max(e - 8, -133)); // 8 significant bits
    double q = std::floor(a / ulp);
    const double rem = a / ulp - q;
    if (rem > 0.5 || (rem == 0.5 && std::fmod(q, 2.0) != 0))
        q += 1;
    return static_cast<float>(std::copysign(q * ulp, static_cast<double>(f)));
}

// The (row, token) settings a test walks: every level of this CPU, bf16 dot off and (where the
// level has it, BF16 only) on.
struct Setting {
    SimdLevel level;
    bool dot;
};
std::vector<Setting> settings(DType t) {
    std::vector<Setting> out;
    for (SimdLevel l : test::available_levels()) {
        out.push_back({l, false});
        if (t == DType::BF16 && l == SimdLevel::Avx512 && cpu_has_avx512_bf16())
            out.push_back({l, true});
    }
    return out;
}
void apply(const Setting& s) {
    set_simd_level(s.level);
    set_bf16_dot_enabled(s.dot);
}
std::string setting_name(const Setting& s) {
    return mini_test::format("%s%s", simd_level_name(s.level), s.dot ? "+bf16dot" : "");
}

struct ShapeRow {
    std::string name;
    DType type;
    int64_t rows, cols;
};

std::vector<ShapeRow> shape_rows() {
    std::vector<ShapeRow> out;
    // Rows: one panel, panels + a Rows tail, 5 panels (a block of 4 + 1). Columns: 1 and 2 (no
    // step / no pair beyond the odd tail), odd and even, exact and partial column chunks.
    for (DType t : kTypes)
        for (int64_t r : {16, 37, 80})
            for (int64_t c : {1, 2, 33, 300, 512, 1101})
                out.push_back(
                    {mini_test::format("%s/%lldx%lld", dtype_name(t), static_cast<long long>(r),
                                       static_cast<long long>(c)),
                     t, r, c});
    return out;
}

struct TypeRow {
    std::string name;
    DType type;
};
std::vector<TypeRow> type_rows() {
    return {{"F16", DType::F16}, {"BF16", DType::BF16}};
}

} // namespace

// Every byte lands where panel_float.h documents it; unpack_row gives back each row's bytes.
MT_TEST_TABLE(packPlacesBytesAsDocumented, TypeRow, type_rows()) {
    const PanelFormat* f = panel_format(row.type);
    MT_REQUIRE(f != nullptr);
    for (int64_t cols : {1, 2, 3, 17, 64, 301}) {
        MT_SCOPE("cols %lld", static_cast<long long>(cols));
        const size_t row_bytes = static_cast<size_t>(cols) * 2;
        const auto src =
            random_bits(static_cast<size_t>(cols) * kPanelRows, static_cast<uint32_t>(cols));
        std::vector<uint8_t> panel(src.size(), 0xAB);
        f->pack(src.data(), cols, panel.data());
        for (int i = 0; i < kPanelRows; ++i)
            for (int64_t c = 0; c < cols; ++c)
                MT_CHECK_MSG(std::memcmp(panel.data() + documented_offset(row.type, i, c, cols),
                                         src.data() + i * row_bytes + 2 * c, 2) == 0,
                             "row %d col %lld", i, static_cast<long long>(c));
        std::vector<uint8_t> back(row_bytes);
        for (int i = 0; i < kPanelRows; ++i) {
            std::fill(back.begin(), back.end(), 0xCD);
            f->unpack_row(panel.data(), cols, i, back.data());
            MT_CHECK_MSG(std::memcmp(back.data(), src.data() + i * row_bytes, row_bytes) == 0,
                         "row %d", i);
        }
    }
}

// A whole matrix (panels + Rows tail) through pack_matrix_panels and copy_weight_row.
MT_TEST_TABLE(matrixRowsRoundTrip, TypeRow, type_rows()) {
    const int64_t rows = 53, cols = 45;
    MT_CHECK(panel_layout_applies(row.type, rows, cols));
    const size_t row_bytes = static_cast<size_t>(cols) * 2;
    const auto src = random_bits(static_cast<size_t>(rows * cols), 3);
    std::vector<uint8_t> packed(src.size());
    ThreadPool pool(2);
    pack_matrix_panels(row.type, src.data(), rows, cols, packed.data(), &pool);
    MT_CHECK(packed != src); // rearranged
    const WeightMatrix w{row.type, packed.data(), rows, cols, WeightLayout::Panels};
    std::vector<uint8_t> back(row_bytes);
    for (int64_t r = 0; r < rows; ++r) {
        copy_weight_row(w, r, back.data());
        MT_CHECK_MSG(std::memcmp(back.data(), src.data() + r * static_cast<int64_t>(row_bytes),
                                 row_bytes) == 0,
                     "row %lld", static_cast<long long>(r));
    }
}

MT_TEST(bf16DotSwitch) {
    test::SimdLevelGuard level;
    Bf16DotGuard dot;
    set_bf16_dot_enabled(true);
    set_simd_level(SimdLevel::Avx2);
    MT_CHECK(!bf16_dot_available());
    MT_CHECK(!bf16_dot_active());
    set_simd_level(SimdLevel::Avx512);
    const bool at512 = active_simd_level() == SimdLevel::Avx512;
    MT_COMPARE(bf16_dot_available(), at512 && cpu_has_avx512_bf16());
    MT_COMPARE(bf16_dot_active(), bf16_dot_available());
    set_bf16_dot_enabled(false);
    MT_CHECK(!bf16_dot_active());
    MT_CHECK(!bf16_dot_enabled());
    std::printf("AVX512_BF16 on this CPU: %s\n", cpu_has_avx512_bf16() ? "yes" : "no");
}

// Panels vs the reference (dequantize + double dot, on the Rows copy) for tokens 1 .. 40.
// fp32 path: relative error <= 2e-5 of |row| * |token| (tst_kernels_matmul's float bound).
// bf16 dot: x is rounded to bf16 (|x - bf16(x)| <= 2^-8 |x|) and the exact products summed in
// fp32 (<= cols * 2^-24 * S), so |y - ref| <= (2^-8 + 1.01 cols 2^-24) S with S = sum |w||x|;
// and against a reference on bf16-rounded x (double), |y - ref_bf16| <= 1.01 cols 2^-24 S, which
// fails if x were truncated or left in fp32 (the dot must also differ from the fp32 path).
MT_TEST_TABLE(matchesReference, ShapeRow, shape_rows()) {
    test::SimdLevelGuard level;
    Bf16DotGuard dot;
    const int64_t rows = row.rows, cols = row.cols, max_tokens = 40;
    const Matrix m(row.type, rows, cols, static_cast<uint32_t>(rows * 1000 + cols));
    const auto x = test::random_floats(static_cast<size_t>(max_tokens * cols), 77, 1.0f);
    std::vector<float> xb(x.size());
    for (size_t i = 0; i < x.size(); ++i)
        xb[i] = bf16_round(x[i]);
    std::vector<float> ref(static_cast<size_t>(rows * max_tokens)), ref_b(ref.size());
    matmul_reference(ref.data(), m.rows_layout(), x.data(), max_tokens);
    matmul_reference(ref_b.data(), m.rows_layout(), xb.data(), max_tokens);
    // S per (token, row), and the norms of tst_kernels_matmul's bound.
    std::vector<double> s_abs(ref.size()), norm(ref.size());
    {
        std::vector<float> w(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows; ++r) {
            dequantize_weight_row(m.rows_layout(), r, w.data());
            double wn = 0;
            for (float v : w)
                wn += static_cast<double>(v) * v;
            for (int64_t t = 0; t < max_tokens; ++t) {
                double s = 0, xn = 0;
                for (int64_t c = 0; c < cols; ++c) {
                    const double xv = x[static_cast<size_t>(t * cols + c)];
                    s += std::fabs(w[static_cast<size_t>(c)] * xv);
                    xn += xv * xv;
                }
                s_abs[static_cast<size_t>(t * rows + r)] = s;
                norm[static_cast<size_t>(t * rows + r)] = std::sqrt(wn * xn) + 1e-30;
            }
        }
    }
    const double acc_bound = 1.01 * static_cast<double>(cols) * std::ldexp(1.0, -24);
    ThreadPool pool(2);
    std::vector<float> fp32_y; // the AVX-512 fp32 result, to tell the dot apart
    for (const Setting& s : settings(row.type)) {
        MT_SCOPE("%s", setting_name(s).c_str());
        apply(s);
        double worst = 0, worst_s = 0;
        for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 25, 40}) {
            MT_SCOPE("n_tokens %lld", static_cast<long long>(n));
            for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
                const auto y = run(m.panels(), x.data(), n, tp);
                for (int64_t i = 0; i < n * rows; ++i) {
                    const auto k = static_cast<size_t>(i);
                    const double err = std::fabs(static_cast<double>(y[k]) - ref[k]);
                    MT_CHECK_MSG(std::isfinite(y[k]), "token %lld row %lld not written",
                                 static_cast<long long>(i / rows),
                                 static_cast<long long>(i % rows));
                    // The rows % 16 tail is in Rows order, computed by the Rows kernels in fp32.
                    if (s.dot && i % rows < rows / kPanelRows * kPanelRows) {
                        MT_CHECK_MSG(err <= (std::ldexp(1.0, -8) + acc_bound) * s_abs[k] + 1e-30,
                                     "token %lld row %lld: %g vs ref %g",
                                     static_cast<long long>(i / rows),
                                     static_cast<long long>(i % rows), static_cast<double>(y[k]),
                                     static_cast<double>(ref[k]));
                        const double err_b = std::fabs(static_cast<double>(y[k]) - ref_b[k]);
                        MT_CHECK_MSG(err_b <= acc_bound * s_abs[k] + 1e-30,
                                     "token %lld row %lld: %g vs bf16-x ref %g",
                                     static_cast<long long>(i / rows),
                                     static_cast<long long>(i % rows), static_cast<double>(y[k]),
                                     static_cast<double>(ref_b[k]));
                    } else {
                        MT_CHECK_MSG(err <= 2e-5 * norm[k], "token %lld row %lld: %g vs ref %g",
                                     static_cast<long long>(i / rows),
                                     static_cast<long long>(i % rows), static_cast<double>(y[k]),
                                     static_cast<double>(ref[k]));
                    }
                    worst = std::max(worst, err / norm[k]);
                    worst_s = std::max(worst_s, err / (s_abs[k] + 1e-30));
                }
                if (n == 40 && tp == nullptr && s.level == SimdLevel::Avx512) {
                    if (!s.dot) {
                        fp32_y = y;
                    } else if (!fp32_y.empty() && cols >= 33) {
                        size_t differ = 0;
                        for (size_t k = 0; k < y.size(); ++k)
                            differ += y[k] != fp32_y[k];
                        MT_CHECK_MSG(differ > 0, "the bf16 dot gave the fp32 path's bits");
                    }
                }
            }
        }
        if (row.rows == 80 && row.cols == 1101)
            std::printf("  %s %s: max |y - ref| = %.3g of |w||x| (norms), %.3g of sum |w x|\n",
                        dtype_name(row.type), setting_name(s).c_str(), worst, worst_s);
    }
}

// A token's outputs are the same bits alone, in the first n tokens, or at any offset of a batch
// of n (1 .. 40), with two threads and without: the panel kernels' contract. Checked on the
// panel rows; the rows % 16 tail goes through the Rows kernels, whose AVX-512 F16/BF16 matrix-
// vector tile sums in another order than their matrix-matrix tiles (tst_kernels_matmul leaves
// F16/BF16 out of its batch test for that reason).
MT_TEST_TABLE(resultIndependentOfBatch, TypeRow, type_rows()) {
    test::SimdLevelGuard level;
    Bf16DotGuard dot;
    const int64_t rows = 85, cols = 301, max_tokens = 40; // 5 panels + 5 tail rows
    const Matrix m(row.type, rows, cols, 9);
    const auto x = test::random_floats(static_cast<size_t>(max_tokens * cols), 5, 1.0f);
    ThreadPool pool(2);
    for (const Setting& s : settings(row.type)) {
        MT_SCOPE("%s", setting_name(s).c_str());
        apply(s);
        const auto all = run(m.panels(), x.data(), max_tokens, nullptr);
        for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
            MT_SCOPE("%s", tp ? "2 threads" : "no pool");
            for (int64_t n = 1; n <= max_tokens; ++n) {
                const int64_t start = (n * 7) % (max_tokens - n + 1);
                const auto y = run(m.panels(), x.data() + start * cols, n, tp);
                for (int64_t i = 0; i < n * rows; ++i)
                    if (i % rows < rows / kPanelRows * kPanelRows)
                        MT_CHECK_MSG(
                            y[static_cast<size_t>(i)] == all[static_cast<size_t>(start * rows + i)],
                            "n %lld start %lld token %lld row %lld", static_cast<long long>(n),
                            static_cast<long long>(start), static_cast<long long>(i / rows),
                            static_cast<long long>(i % rows));
            }
        }
    }
}

MINI_TEST_MAIN()
