// CUDA matmul against kernels::matmul_reference for every weight dtype: the GEMV path (n <= 8),
// the cuBLAS paths (n > 8; quantized weights dequantized whole or in row tiles), odd sizes,
// misaligned activations, and the workspace checks.
#include <cmath>
#include <cstdio>

#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant.h"
#include "tests/gpu/ops/gpu_test_util.h"

using namespace llmwb;
using namespace llmwb::gputest;
namespace cu = llmwb::cuda;

namespace {

cu::BlasContext* g_blas = nullptr;

// Relative error bound (to the largest |output| of the row) of each path.
double tolerance(DType t, int64_t n) {
    if (n <= 8)
        return 2e-5; // fp32 GEMV
    if (t == DType::F32)
        return 2e-5; // cublasSgemm
    return 1.5e-2;   // f16/bf16 operands, fp32 accumulation
}

// tile_rows > 0: workspace sized for the activations plus that many dequantized rows.
void run_case(DType t, int64_t rows, int64_t cols, int64_t n, int64_t tile_rows = 0,
              bool misalign_x = false) {
    const auto wf = random_floats(rows * cols);
    const int64_t rb = dtype_row_bytes(t, cols);
    std::vector<uint8_t> packed(rows * rb);
    for (int64_t r = 0; r < rows; ++r)
        kernels::quantize_row(t, wf.data() + r * cols, packed.data() + r * rb, cols);
    const auto x = random_floats(n * cols + 1, -2.0f, 2.0f);
    std::vector<float> want(n * rows);
    kernels::WeightMatrix wm{t, packed.data(), rows, cols};
    kernels::matmul_reference(want.data(), wm, x.data() + (misalign_x ? 1 : 0), n);

    DeviceBuffer<uint8_t> dw(packed);
    DeviceBuffer<float> dx(x), dout(n * rows);
    dout.poison();
    size_t ws = cu::matmul_workspace_bytes(rows, cols, n, t);
    if (tile_rows > 0)
        ws = (n * cols * 2 + 255) / 256 * 256 + tile_rows * cols * 2;
    DeviceBuffer<uint8_t> dws(ws);
    cu::DeviceMatrix m{t, dw.get(), rows, cols};
    GT_OP(cu::matmul(*g_blas, dout.get(), m, dx.get() + (misalign_x ? 1 : 0), n,
                     ws ? dws.get() : nullptr, ws, nullptr));
    char what[96];
    std::snprintf(what, sizeof(what), "matmul %s rows %lld cols %lld n %lld tile %lld",
                  dtype_name(t), static_cast<long long>(rows), static_cast<long long>(cols),
                  static_cast<long long>(n), static_cast<long long>(tile_rows));
    compare_rows(what, dout.download(), want, n, rows, tolerance(t, n), 1e-5);
}

// dequantize_to_bf16 against the CPU dequantizer (bf16 rounding: 2^-8 relative).
void test_dequantize_to_bf16(DType t, int64_t rows, int64_t cols) {
    const auto wf = random_floats(rows * cols);
    const int64_t rb = dtype_row_bytes(t, cols);
    std::vector<uint8_t> packed(rows * rb);
    std::vector<float> want(rows * cols);
    for (int64_t r = 0; r < rows; ++r) {
        kernels::quantize_row(t, wf.data() + r * cols, packed.data() + r * rb, cols);
        kernels::dequantize_row(t, packed.data() + r * rb, want.data() + r * cols, cols);
    }
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
    GT_CHECK(bad == 0, "dequantize_to_bf16 %s: %d wrong elements", dtype_name(t), bad);
    cu::DeviceMatrix f16{DType::F16, dw.get(), rows, cols};
    GT_CHECK(cu::dequantize_to_bf16(dout.get(), f16, nullptr) == cu::OpStatus::InvalidArgument,
             "F16 is not quantized");
}

void test_workspace_checks() {
    const int64_t rows = 64, cols = 256, n = 16;
    for (DType t : {DType::F16, DType::Q4_K}) {
        const size_t need = cu::matmul_workspace_bytes(rows, cols, n, t);
        GT_CHECK(need >= static_cast<size_t>(n * cols * 2), "%s workspace covers activations",
                 dtype_name(t));
        DeviceBuffer<uint8_t> w(dtype_row_bytes(t, cols) * rows), ws(need);
        DeviceBuffer<float> x(n * cols), out(n * rows);
        cu::DeviceMatrix m{t, w.get(), rows, cols};
        GT_CHECK(cu::matmul(*g_blas, out.get(), m, x.get(), n, ws.get(), n * cols, nullptr) ==
                     cu::OpStatus::WorkspaceTooSmall,
                 "%s small workspace refused", dtype_name(t));
    }
    GT_CHECK(cu::matmul_workspace_bytes(rows, cols, 8, DType::Q4_K) == 0, "GEMV needs none");
    GT_CHECK(cu::matmul_workspace_bytes(rows, cols, 100, DType::F32) == 0, "Sgemm needs none");
    cu::DeviceMatrix bad{DType::Q4_0, reinterpret_cast<void*>(256), 4, 33};
    GT_CHECK(cu::matmul(*g_blas, nullptr, bad, nullptr, 1, nullptr, 0, nullptr) ==
                 cu::OpStatus::InvalidArgument,
             "cols not a multiple of the block");
}

} // namespace

int main() {
    if (const int skip = skip_without_device())
        return skip;
    if (cu::blas_create(&g_blas, nullptr) != cu::OpStatus::Ok) {
        std::fprintf(stderr, "blas_create failed: %s\n", cu::last_error_message());
        return 1;
    }
    for (DType t : {DType::F32, DType::F16, DType::BF16}) {
        for (int64_t n : {1, 3, 8, 9, 33}) {
            run_case(t, 37, 67, n);   // odd: scalar loads + tail
            run_case(t, 130, 256, n); // aligned: vector loads
        }
        run_case(t, 37, 64, 2, 0, true); // activations not 16-byte aligned
    }
    for (DType t : {DType::Q8_0, DType::Q4_0}) {
        for (int64_t n : {1, 2, 5, 8, 12, 40})
            run_case(t, 45, 96, n);
        run_case(t, 300, 1024, 4);
        run_case(t, 45, 96, 20, 16); // tiles of 16 rows (16, 16, 13)
        run_case(t, 45, 96, 3, 0, true);
    }
    for (DType t : {DType::Q4_K, DType::Q6_K}) {
        for (int64_t n : {1, 4, 7, 8, 9, 64})
            run_case(t, 45, 512, n);
        run_case(t, 129, 2048, 1);
        run_case(t, 45, 512, 17, 7);    // 7 rows per tile
        run_case(t, 300, 256, 10, 200); // tile rounded down to 128
    }
    // n = 2..8 with 2 and 4 rows per warp, a partial last warp and block, activations staged in
    // several tiles of 32 chunks (the last one partial), scalar staging and a float row tail.
    run_case(DType::Q4_K, 2050, 1280, 3);
    run_case(DType::Q8_0, 8200, 64, 8);
    run_case(DType::F16, 8193, 67, 5);
    run_case(DType::BF16, 2049, 1056, 2, 0, true);
    run_case(DType::Q6_K, 300, 2304, 7);
    // n == 1 with 2 and 4 rows per warp (and a partial last warp).
    run_case(DType::Q4_K, 4100, 256, 1);
    run_case(DType::Q8_0, 16390, 64, 1);
    run_case(DType::F16, 16385, 67, 1);
    run_case(DType::BF16, 5000, 96, 1, 0, true);
    for (DType t : {DType::Q8_0, DType::Q4_0})
        test_dequantize_to_bf16(t, 33, 160);
    for (DType t : {DType::Q4_K, DType::Q6_K})
        test_dequantize_to_bf16(t, 17, 768);
    test_workspace_checks();
    cu::blas_destroy(g_blas);
    return finish("tst_cuda_ops_matmul");
}
