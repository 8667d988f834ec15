// Every quantized weight type on the CUDA ops that read weights (matmul's GEMV and GEMM paths,
// dequantize_to_bf16, embedding_gather) against the CPU's dequantize_row / matmul_reference, on
// two kinds of data:
// - random blocks: every byte random except the fp16 scales (finite, small), so that every code,
//   sub-block scale and high bit takes values a quantizer would rarely write — the sharpest test
//   of a decoder's bit layout;
// - quantized data: random floats through kernels::quantize_row.
// Odd shapes: rows that are not a multiple of the rows per block (1, 45, 129, 4100, 8200, 16390),
// one block per row, n = 1..9 and 33 (GEMV up to 8, cuBLAS beyond), rows longer than one pass of
// the n = 2..8 GEMV's staged activations, the GEMM in tiles of rows,
// activations that are not 16-byte aligned, weights at the lowest alignment their blocks have in
// a matrix (the decoders must not load wider), and misaligned weights refused.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant.h"
#include "tests/gpu/ops/gpu_test_util.h"

using namespace llmwb;
using namespace llmwb::gputest;
namespace cu = llmwb::cuda;

namespace {

cu::BlasContext* g_blas = nullptr;

enum class Data { Random, Quantized };

const char* data_name(Data d) {
    return d == Data::Random ? "random blocks" : "quantized";
}

// Byte offsets of the fp16 fields of a block, written from GGML's block layouts (not from
// kernels/cpu/quant_blocks.h, so that the two are checked against each other).
std::vector<int> half_fields(DType t) {
    switch (t) {
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::Q8_0:
    case DType::IQ4_NL:
    case DType::IQ4_XS: // d; scales_h at 2 is a bit field, random
        return {0};
    case DType::Q4_1:
    case DType::Q5_1:
    case DType::Q4_K:
    case DType::Q5_K:
        return {0, 2}; // d, m (dmin)
    case DType::Q2_K:
        return {80, 82}; // after scales[16] and qs[64]
    case DType::Q3_K:
        return {108}; // after hmask[32], qs[64], scales[12]
    case DType::Q6_K:
        return {208}; // after ql[128], qh[64], scales[16]
    case DType::F32:
    case DType::F16:
    case DType::BF16:
        return {}; // not block types: random bytes would be NaN/Inf
    }
    return {};
}

// The largest power of two (<= 16) that divides the block size: the alignment every block of a
// 16-byte aligned matrix has.
int64_t block_alignment(DType t) {
    int64_t a = 16;
    while (a > 1 && dtype_block_bytes(t) % a != 0)
        a /= 2;
    return a;
}

std::vector<uint8_t> make_weights(DType t, int64_t rows, int64_t cols, Data data) {
    const int64_t rb = dtype_row_bytes(t, cols);
    std::vector<uint8_t> packed(static_cast<size_t>(rows * rb));
    if (data == Data::Quantized) {
        const auto wf = random_floats(rows * cols);
        for (int64_t r = 0; r < rows; ++r)
            kernels::quantize_row(t, wf.data() + r * cols, packed.data() + r * rb, cols);
        return packed;
    }
    for (uint8_t& b : packed)
        b = static_cast<uint8_t>(random_int(0, 255));
    const int64_t bb = dtype_block_bytes(t);
    const auto fields = half_fields(t);
    for (size_t blk = 0; blk < packed.size() / bb; ++blk) {
        for (int off : fields) {
            const uint16_t h = kernels::fp32_to_fp16(random_floats(1, -0.02f, 0.02f)[0]);
            packed[blk * bb + off] = static_cast<uint8_t>(h & 0xFF);
            packed[blk * bb + off + 1] = static_cast<uint8_t>(h >> 8);
        }
    }
    return packed;
}

double tolerance(int64_t n) {
    return n <= 8 ? 2e-5    // fp32 GEMV
                  : 1.5e-2; // bf16 operands, fp32 accumulation
}

// An allowance per output proportional to sum_k |w_rk x_tk|, on top of tolerance(n) x the
// largest |want| of its token row: a sum's rounding error scales with the magnitude of its terms,
// not with the result, which can cancel (a 1-row matrix has only the result as its row maximum:
// CI once saw a Q6_K GEMV result that cancelled to 0.27 miss a bound relative to it with an error
// of 5.4e-5). fp32 GEMV: ~17 ulp of the terms' sum; bf16 operands: a quarter of bf16's 2^-8
// worst case.
double magnitude_tolerance(int64_t n) {
    return n <= 8 ? 1e-6 : 1e-3;
}

// got vs want ([n][rows]): |got - want| <= tolerance(n) x row max |want| + magnitude_tolerance(n)
// x sum_k |w_rk x_tk| + abs_tol for every output.
int compare_outputs(const char* what, const std::vector<float>& got, const std::vector<float>& want,
                    DType t, const uint8_t* packed, int64_t rows, int64_t cols, const float* x,
                    int64_t n, double abs_tol) {
    const int64_t rb = dtype_row_bytes(t, cols);
    std::vector<float> wr(static_cast<size_t>(cols));
    std::vector<double> mag(static_cast<size_t>(n * rows));
    for (int64_t r = 0; r < rows; ++r) {
        kernels::dequantize_row(t, packed + r * rb, wr.data(), cols);
        for (int64_t k = 0; k < n; ++k) {
            double m = 0;
            for (int64_t c = 0; c < cols; ++c)
                m += std::fabs(static_cast<double>(wr[c]) * x[k * cols + c]);
            mag[k * rows + r] = m;
        }
    }
    const double rel = tolerance(n), rel_mag = magnitude_tolerance(n);
    auto bound_of = [&](double row_max, double m) { return rel * row_max + rel_mag * m + abs_tol; };
    int bad_rows = 0;
    for (int64_t k = 0; k < n; ++k) {
        double row_max = 0;
        for (int64_t r = 0; r < rows; ++r)
            row_max = std::fmax(row_max, std::fabs(static_cast<double>(want[k * rows + r])));
        int64_t worst = -1;
        double worst_excess = 0;
        for (int64_t r = 0; r < rows; ++r) {
            const size_t i = static_cast<size_t>(k * rows + r);
            const double bound = bound_of(row_max, mag[i]);
            const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
            if (!(err <= bound) && (worst < 0 || !(err - bound <= worst_excess))) {
                worst = r;
                worst_excess = err - bound;
            }
        }
        if (worst >= 0) {
            ++bad_rows;
            const size_t i = static_cast<size_t>(k * rows + worst);
            GT_CHECK(false, "%s token %lld row %lld: got %g want %g (bound %g, sum |w x| %g)", what,
                     static_cast<long long>(k), static_cast<long long>(worst),
                     static_cast<double>(got[i]), static_cast<double>(want[i]),
                     bound_of(row_max, mag[i]), mag[i]);
        }
    }
    if (!bad_rows)
        ++g_checks;
    return bad_rows;
}

// tile_rows > 0: workspace sized for the activations plus that many dequantized rows.
// w_offset: bytes between the 256-aligned allocation and the matrix.
void run_matmul(DType t, int64_t rows, int64_t cols, int64_t n, Data data, int64_t tile_rows = 0,
                bool misalign_x = false, int64_t w_offset = 0) {
    const auto packed = make_weights(t, rows, cols, data);
    const auto x = random_floats(n * cols + 1, -2.0f, 2.0f);
    const float* xh = x.data() + (misalign_x ? 1 : 0);
    std::vector<float> want(n * rows);
    kernels::WeightMatrix wm{t, packed.data(), rows, cols};
    kernels::matmul_reference(want.data(), wm, xh, n);

    std::vector<uint8_t> staged(static_cast<size_t>(w_offset), 0);
    staged.insert(staged.end(), packed.begin(), packed.end());
    DeviceBuffer<uint8_t> dw(staged);
    DeviceBuffer<float> dx(x), dout(n * rows);
    dout.poison();
    size_t ws = cu::matmul_workspace_bytes(rows, cols, n, t);
    if (tile_rows > 0)
        ws = (n * cols * 2 + 255) / 256 * 256 + tile_rows * cols * 2;
    DeviceBuffer<uint8_t> dws(ws);
    cu::DeviceMatrix m{t, dw.get() + w_offset, rows, cols};
    GT_OP(cu::matmul(*g_blas, dout.get(), m, dx.get() + (misalign_x ? 1 : 0), n,
                     ws ? dws.get() : nullptr, ws, nullptr));
    char what[160];
    std::snprintf(what, sizeof(what), "matmul %s (%s) rows %lld cols %lld n %lld tile %lld%s%s",
                  dtype_name(t), data_name(data), static_cast<long long>(rows),
                  static_cast<long long>(cols), static_cast<long long>(n),
                  static_cast<long long>(tile_rows), misalign_x ? " x misaligned" : "",
                  w_offset ? " w offset" : "");
    compare_outputs(what, dout.download(), want, t, packed.data(), rows, cols, xh, n, 1e-5);
}

// dequantize_to_bf16 against the CPU dequantizer (bf16 rounding: 2^-8 relative).
void test_dequantize_to_bf16(DType t, int64_t rows, int64_t cols, Data data) {
    const auto packed = make_weights(t, rows, cols, data);
    const int64_t rb = dtype_row_bytes(t, cols);
    std::vector<float> want(rows * cols);
    for (int64_t r = 0; r < rows; ++r)
        kernels::dequantize_row(t, packed.data() + r * rb, want.data() + r * cols, cols);
    DeviceBuffer<uint8_t> dw(packed);
    DeviceBuffer<uint16_t> dout(rows * cols);
    dout.poison();
    cu::DeviceMatrix m{t, dw.get(), rows, cols};
    GT_OP(cu::dequantize_to_bf16(dout.get(), m, nullptr));
    const auto bits = dout.download();
    int bad = 0;
    for (int64_t i = 0; i < rows * cols; ++i) {
        const float got = kernels::bf16_to_fp32(bits[i]);
        if (!(std::fabs(got - want[i]) <= std::fabs(want[i]) * (1.0f / 256.0f) + 1e-6f))
            ++bad;
    }
    GT_CHECK(bad == 0, "dequantize_to_bf16 %s (%s): %d wrong elements", dtype_name(t),
             data_name(data), bad);
}

// embedding_gather of rows of random blocks (ids clamped into the table).
void test_embedding(DType t, int64_t vocab, int64_t hidden, Data data) {
    const auto packed = make_weights(t, vocab, hidden, data);
    const int64_t rb = dtype_row_bytes(t, hidden);
    std::vector<int32_t> ids = {0, static_cast<int32_t>(vocab - 1), 3, 3, -1, 1 << 30, 2};
    const int64_t n = static_cast<int64_t>(ids.size());
    std::vector<float> want(n * hidden);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t id = ids[i] < 0 ? 0 : (ids[i] >= vocab ? vocab - 1 : ids[i]);
        kernels::dequantize_row(t, packed.data() + id * rb, want.data() + i * hidden, hidden);
    }
    DeviceBuffer<uint8_t> dtable(packed);
    DeviceBuffer<int32_t> dids(ids);
    DeviceBuffer<float> dout(n * hidden);
    dout.poison();
    cu::DeviceMatrix m{t, dtable.get(), vocab, hidden};
    GT_OP(cu::embedding_gather(dout.get(), m, dids.get(), n, nullptr));
    char what[96];
    std::snprintf(what, sizeof(what), "embedding %s (%s)", dtype_name(t), data_name(data));
    compare_rows(what, dout.download(), want, n, hidden, 1e-6);
}

// Weights one byte off (or half their block alignment off) are refused before any launch.
void test_misaligned_refused(DType t) {
    const int64_t cols = dtype_block_elems(t), rows = 3;
    DeviceBuffer<uint8_t> w(dtype_row_bytes(t, cols) * rows + 16);
    DeviceBuffer<float> x(cols), out(rows);
    DeviceBuffer<uint16_t> bf(rows * cols);
    const int64_t a = block_alignment(t);
    for (int64_t off : {int64_t{1}, a / 2}) {
        if (off == 0 || off % a == 0)
            continue;
        cu::DeviceMatrix m{t, w.get() + off, rows, cols};
        GT_CHECK(cu::matmul(*g_blas, out.get(), m, x.get(), 1, nullptr, 0, nullptr) ==
                     cu::OpStatus::InvalidArgument,
                 "%s weights %lld bytes off refused", dtype_name(t), static_cast<long long>(off));
        GT_CHECK(cu::dequantize_to_bf16(bf.get(), m, nullptr) == cu::OpStatus::InvalidArgument,
                 "%s dequantize_to_bf16 %lld bytes off refused", dtype_name(t),
                 static_cast<long long>(off));
    }
}

void test_type(DType t) {
    const int64_t be = dtype_block_elems(t);
    const int64_t c1 = be == 32 ? 96 : 512, c2 = be == 32 ? 1024 : 2048;
    for (Data data : {Data::Random, Data::Quantized}) {
        for (int64_t n = 1; n <= 9; ++n)
            run_matmul(t, 45, c1, n, data); // 45 rows: a partial block of rows
        run_matmul(t, 45, c1, 33, data);
        run_matmul(t, 1, be, 1, data); // one row of one block
        run_matmul(t, 1, be, 2, data);
        run_matmul(t, 129, c2, 1, data);
        run_matmul(t, 129, c2, 5, data);
        run_matmul(t, 45, c1, 20, data, 16);    // cuBLAS in tiles of 16 rows (16, 16, 13)
        run_matmul(t, 300, 256, 10, data, 200); // tile rounded down to 128
        run_matmul(t, 45, c1, 3, data, 0, true);
        run_matmul(t, 45, c1, 12, data, 0, true);
        test_dequantize_to_bf16(t, 17, c1, data);
        test_embedding(t, 20, c1, data);
    }
    // n == 1 with 2 and 4 rows per warp and a partial last warp.
    run_matmul(t, 4100, be, 1, Data::Random);
    run_matmul(t, 16390, be, 1, Data::Random);
    // n = 2..8: 2 and 4 rows per warp with a partial last warp, and activations staged in two
    // passes of 32 chunks, the second partial.
    run_matmul(t, 4100, be, 3, Data::Random);
    run_matmul(t, 8200, be, 8, Data::Random);
    run_matmul(t, 45, be == 32 ? 1056 : 1280, 4, Data::Quantized);
    // The matrix at the lowest alignment its blocks have inside an aligned matrix.
    const int64_t a = block_alignment(t);
    if (a < 16) {
        run_matmul(t, 45, c1, 1, Data::Random, 0, false, a);
        run_matmul(t, 45, c1, 6, Data::Random, 0, false, a);
        run_matmul(t, 45, c1, 17, Data::Random, 0, false, a);
    }
    test_misaligned_refused(t);
}

} // namespace

int main() {
    if (const int skip = skip_without_device())
        return skip;
    if (cu::blas_create(&g_blas, nullptr) != cu::OpStatus::Ok) {
        std::fprintf(stderr, "blas_create failed: %s\n", cu::last_error_message());
        return 1;
    }
    int types = 0;
    for (DType t : kAllDTypes) {
        if (dtype_is_float(t))
            continue; // tst_cuda_ops_matmul covers F32/F16/BF16
        GT_CHECK(!half_fields(t).empty(), "%s has its fp16 fields listed", dtype_name(t));
        test_type(t);
        ++types;
    }
    GT_CHECK(types == 12, "12 quantized types tested (got %d)", types);
    cu::blas_destroy(g_blas);
    return finish("tst_cuda_ops_quant_types");
}
