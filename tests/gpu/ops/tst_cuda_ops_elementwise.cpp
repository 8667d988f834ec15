// CUDA row/element-wise ops against the CPU reference: rmsnorm (+ fused add, qk-norm shapes),
// silu_mul, gelu_tanh_mul, softcap, scale, add, bias_add, rope (both pairings; partial rotary
// with a cos/sin multiplier as phi3's LongRoPE uses), embedding_gather (every
// dtype of kAllDTypes, quantized data; random blocks: tst_cuda_ops_quant_types), argmax_rows
// (ties, NaN). kv_write: tst_cuda_ops_kv_types.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "engine/runtime/rope.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/quant.h"
#include "tests/gpu/ops/gpu_test_util.h"

using namespace llmwb;
using namespace llmwb::gputest;
namespace cu = llmwb::cuda;

namespace {

void test_rmsnorm(int64_t rows, int64_t dim) {
    const float eps = 1e-6f;
    const auto x = random_floats(rows * dim, -3.0f, 3.0f);
    const auto w = random_floats(dim, 0.5f, 1.5f);
    std::vector<float> want(rows * dim);
    for (int64_t r = 0; r < rows; ++r)
        kernels::rmsnorm(want.data() + r * dim, x.data() + r * dim, w.data(), dim, eps);
    DeviceBuffer<float> dx(x), dw(w), dout(rows * dim);
    dout.poison();
    GT_OP(cu::rmsnorm(dout.get(), dx.get(), dw.get(), rows, dim, eps, nullptr));
    compare_rows("rmsnorm", dout.download(), want, rows, dim, 1e-5);
    // In place (out aliases x).
    GT_OP(cu::rmsnorm(dx.get(), dx.get(), dw.get(), rows, dim, eps, nullptr));
    compare_rows("rmsnorm in place", dx.download(), want, rows, dim, 1e-5);
}

void test_add_rmsnorm(int64_t rows, int64_t dim) {
    const float eps = 1e-5f;
    const auto res = random_floats(rows * dim, -2.0f, 2.0f);
    const auto delta = random_floats(rows * dim, -2.0f, 2.0f);
    const auto w = random_floats(dim, 0.5f, 1.5f);
    std::vector<float> want_res(rows * dim), want_out(rows * dim);
    for (int64_t i = 0; i < rows * dim; ++i)
        want_res[i] = res[i] + delta[i];
    for (int64_t r = 0; r < rows; ++r)
        kernels::rmsnorm(want_out.data() + r * dim, want_res.data() + r * dim, w.data(), dim, eps);
    DeviceBuffer<float> dres(res), ddelta(delta), dw(w), dout(rows * dim);
    dout.poison();
    GT_OP(cu::add_rmsnorm(dres.get(), dout.get(), ddelta.get(), dw.get(), rows, dim, eps, nullptr));
    compare_rows("add_rmsnorm residual", dres.download(), want_res, rows, dim, 1e-6);
    compare_rows("add_rmsnorm out", dout.download(), want_out, rows, dim, 1e-5);
}

void test_elementwise(int64_t n, int64_t dim) {
    const auto a = random_floats(n * dim, -6.0f, 6.0f);
    const auto b = random_floats(n * dim, -2.0f, 2.0f);
    const auto bias = random_floats(dim);
    std::vector<float> want_silu(n * dim), want_add(n * dim), want_bias(n * dim);
    kernels::silu_mul(want_silu.data(), a.data(), b.data(), n * dim);
    kernels::add(want_add.data(), a.data(), b.data(), n * dim);
    for (int64_t i = 0; i < n * dim; ++i)
        want_bias[i] = a[i] + bias[i % dim];
    DeviceBuffer<float> da(a), db(b), dbias(bias), dout(n * dim);
    dout.poison();
    GT_OP(cu::silu_mul(dout.get(), da.get(), db.get(), n * dim, nullptr));
    compare_rows("silu_mul", dout.download(), want_silu, n, dim, 1e-5);
    dout.poison();
    GT_OP(cu::add(dout.get(), da.get(), db.get(), n * dim, nullptr));
    compare_rows("add", dout.download(), want_add, n, dim, 1e-6);
    GT_OP(cu::bias_add(da.get(), dbias.get(), n, dim, nullptr));
    compare_rows("bias_add", da.download(), want_bias, n, dim, 1e-6);
}

// gemma's GeGLU, final-logit soft-cap and embedding scale.
void test_gemma_elementwise(int64_t n, int64_t dim) {
    auto a = random_floats(n * dim, -8.0f, 8.0f);
    a[0] = -30.0f; // a large negative gate: exp(-2z) overflows to inf, the product is -0
    a[1] = 0.0f;
    const auto b = random_floats(n * dim, -2.0f, 2.0f);
    auto x = random_floats(n * dim, -200.0f, 200.0f); // beyond the cap: saturates
    x[2] = 1e-3f;                                     // tiny: tanh(x) ~ x
    std::vector<float> want_gelu(n * dim), want_cap = x, want_scale(n * dim);
    kernels::gelu_tanh_mul(want_gelu.data(), a.data(), b.data(), n * dim);
    kernels::softcap(want_cap.data(), n * dim, 30.0f);
    for (int64_t i = 0; i < n * dim; ++i)
        want_scale[i] = a[i] * 45.254833995939045f;
    GT_CHECK(std::fabs(want_cap[3]) <= 30.0f, "reference soft-cap bounds");
    DeviceBuffer<float> da(a), db(b), dx(x), dout(n * dim);
    dout.poison();
    GT_OP(cu::gelu_tanh_mul(dout.get(), da.get(), db.get(), n * dim, nullptr));
    compare_rows("gelu_tanh_mul", dout.download(), want_gelu, n, dim, 1e-5);
    GT_OP(cu::softcap(dx.get(), n * dim, 30.0f, nullptr));
    compare_rows("softcap", dx.download(), want_cap, n, dim, 1e-5);
    GT_OP(cu::scale(da.get(), 45.254833995939045f, n * dim, nullptr));
    compare_rows("scale", da.download(), want_scale, n, dim, 1e-6);
    GT_CHECK(cu::softcap(dx.get(), 4, 0.0f, nullptr) == cu::OpStatus::InvalidArgument,
             "softcap cap 0");
}

// Partial rotary (phi3: 3/4 of the head; phi-2 style 1/2) with LongRoPE's cos/sin multiplier:
// the dimensions past rotary_dim are left as they are.
void test_rope_partial(bool interleaved, int32_t rotary_dim, float cs_scale) {
    const int32_t n = 5, heads = 4, kv_heads = 2, hd = 96;
    std::vector<int32_t> pos = {0, 1, 4095, 4096, 131000};
    std::vector<double> inv(rotary_dim / 2);
    for (int i = 0; i < rotary_dim / 2; ++i)
        inv[i] = std::pow(10000.0, -2.0 * i / rotary_dim) / (1.0 + 0.37 * i); // LongRoPE-like
    const auto q = random_floats(static_cast<size_t>(n) * heads * hd);
    const auto k = random_floats(static_cast<size_t>(n) * kv_heads * hd);
    auto want_q = q, want_k = k;
    const RopeStyle style = interleaved ? RopeStyle::Interleaved : RopeStyle::RotateHalf;
    std::vector<float> cs(rotary_dim / 2), sn(rotary_dim / 2);
    for (int32_t t = 0; t < n; ++t) {
        rope_cos_sin(cs.data(), sn.data(), inv, pos[t], cs_scale);
        rope_apply(want_q.data() + static_cast<size_t>(t) * heads * hd, heads, hd, cs.data(),
                   sn.data(), style, rotary_dim);
        rope_apply(want_k.data() + static_cast<size_t>(t) * kv_heads * hd, kv_heads, hd, cs.data(),
                   sn.data(), style, rotary_dim);
    }
    GT_CHECK(want_q[hd - 1] == q[hd - 1], "reference: the last dimension does not turn");
    DeviceBuffer<float> dq(q), dk(k);
    DeviceBuffer<int32_t> dpos(pos);
    DeviceBuffer<double> dinv(inv);
    GT_OP(cu::rope(dq.get(), dk.get(), dpos.get(), n, heads, kv_heads, hd, dinv.get(), interleaved,
                   nullptr, rotary_dim, cs_scale));
    compare_rows("rope partial q", dq.download(), want_q, n * heads, hd, 1e-5);
    compare_rows("rope partial k", dk.download(), want_k, n * kv_heads, hd, 1e-5);
    GT_CHECK(cu::rope(dq.get(), dk.get(), dpos.get(), n, heads, kv_heads, hd, dinv.get(),
                      interleaved, nullptr, hd + 2, 1.0f) == cu::OpStatus::InvalidArgument,
             "rope rotary_dim beyond head_dim");
}

void test_rope(bool interleaved, bool with_k) {
    const int32_t n = 7, heads = 6, kv_heads = 2, hd = 64;
    std::vector<int32_t> pos(n);
    for (auto& p : pos)
        p = random_int(0, 40000);
    pos[0] = 0;
    std::vector<double> inv(hd / 2);
    for (int i = 0; i < hd / 2; ++i)
        inv[i] = std::pow(500000.0, -2.0 * i / hd) / (i > hd / 4 ? 8.0 : 1.0); // llama3-like
    const auto q = random_floats(static_cast<size_t>(n) * heads * hd);
    const auto k = random_floats(static_cast<size_t>(n) * kv_heads * hd);
    auto want_q = q, want_k = k;
    const RopeStyle style = interleaved ? RopeStyle::Interleaved : RopeStyle::RotateHalf;
    std::vector<float> cs(hd / 2), sn(hd / 2);
    for (int32_t t = 0; t < n; ++t) {
        rope_cos_sin(cs.data(), sn.data(), inv, pos[t]);
        rope_apply(want_q.data() + static_cast<size_t>(t) * heads * hd, heads, hd, cs.data(),
                   sn.data(), style);
        rope_apply(want_k.data() + static_cast<size_t>(t) * kv_heads * hd, kv_heads, hd, cs.data(),
                   sn.data(), style);
    }
    DeviceBuffer<float> dq(q), dk(k);
    DeviceBuffer<int32_t> dpos(pos);
    DeviceBuffer<double> dinv(inv);
    GT_OP(cu::rope(dq.get(), with_k ? dk.get() : nullptr, dpos.get(), n, heads, kv_heads, hd,
                   dinv.get(), interleaved, nullptr));
    compare_rows(interleaved ? "rope q interleaved" : "rope q rotate-half", dq.download(), want_q,
                 n * heads, hd, 1e-5);
    compare_rows("rope k", dk.download(), with_k ? want_k : k, n * kv_heads, hd, 1e-5);
}

void test_embedding(DType t, int64_t vocab, int64_t hidden) {
    const auto table = random_floats(vocab * hidden, -2.0f, 2.0f);
    const int64_t rb = dtype_row_bytes(t, hidden);
    std::vector<uint8_t> packed(vocab * rb);
    for (int64_t r = 0; r < vocab; ++r)
        kernels::quantize_row(t, table.data() + r * hidden, packed.data() + r * rb, hidden);
    std::vector<int32_t> ids = {0, static_cast<int32_t>(vocab - 1), 5, 5, -3, 1000000, 17};
    const int64_t n = static_cast<int64_t>(ids.size());
    std::vector<float> want(n * hidden);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t id = std::clamp<int64_t>(ids[i], 0, vocab - 1);
        kernels::dequantize_row(t, packed.data() + id * rb, want.data() + i * hidden, hidden);
    }
    DeviceBuffer<uint8_t> dtable(packed);
    DeviceBuffer<int32_t> dids(ids);
    DeviceBuffer<float> dout(n * hidden);
    dout.poison();
    cu::DeviceMatrix m{t, dtable.get(), vocab, hidden};
    GT_OP(cu::embedding_gather(dout.get(), m, dids.get(), n, nullptr));
    char what[64];
    std::snprintf(what, sizeof(what), "embedding %s", dtype_name(t));
    compare_rows(what, dout.download(), want, n, hidden, 1e-6);
}

void test_argmax() {
    const int64_t rows = 5, vocab = 50001;
    auto logits = random_floats(rows * vocab, -10.0f, 10.0f);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    logits[1 * vocab + 0] = nan; // NaN never wins
    logits[1 * vocab + 777] = 50.0f;
    logits[2 * vocab + 40000] = 60.0f; // tie: the lower index wins
    logits[2 * vocab + 123] = 60.0f;
    logits[3 * vocab + vocab - 1] = 70.0f; // last element
    for (int64_t i = 0; i < vocab; ++i)
        logits[4 * vocab + i] = -1.0f; // all equal: index 0
    std::vector<int32_t> want(rows);
    for (int64_t r = 0; r < rows; ++r) {
        int32_t best = 0;
        for (int64_t i = 1; i < vocab; ++i) {
            const float v = logits[r * vocab + i], b = logits[r * vocab + best];
            if (v > b || std::isnan(b))
                best = static_cast<int32_t>(i);
        }
        want[r] = best;
    }
    GT_CHECK(want[1] == 777 && want[2] == 123 && want[3] == vocab - 1 && want[4] == 0,
             "reference argmax");
    DeviceBuffer<float> dl(logits);
    DeviceBuffer<int32_t> dout(rows);
    dout.poison();
    GT_OP(cu::argmax_rows(dout.get(), dl.get(), rows, vocab, nullptr));
    const auto got = dout.download();
    for (int64_t r = 0; r < rows; ++r)
        GT_CHECK(got[r] == want[r], "argmax row %lld: got %d want %d", static_cast<long long>(r),
                 got[r], want[r]);
}

void test_invalid_arguments() {
    GT_CHECK(cu::rmsnorm(nullptr, nullptr, nullptr, 1, 0, 1e-5f, nullptr) ==
                 cu::OpStatus::InvalidArgument,
             "rmsnorm dim 0");
    GT_CHECK(cu::rope(nullptr, nullptr, nullptr, 1, 2, 2, 63, nullptr, false, nullptr) ==
                 cu::OpStatus::InvalidArgument,
             "rope odd head_dim");
    cu::DeviceMatrix bad{DType::Q4_K, nullptr, 4, 100};
    GT_CHECK(cu::embedding_gather(nullptr, bad, nullptr, 1, nullptr) ==
                 cu::OpStatus::InvalidArgument,
             "embedding cols not a multiple of 256");
}

} // namespace

int main() {
    if (const int skip = skip_without_device())
        return skip;
    test_rmsnorm(7, 1000);
    test_rmsnorm(5 * 3, 128); // qk-norm shape: rows = tokens * heads, dim = head_dim
    test_rmsnorm(1, 4097);
    test_add_rmsnorm(9, 896);
    test_add_rmsnorm(2, 33);
    test_elementwise(3, 1001);
    test_elementwise(17, 64);
    for (bool inter : {false, true})
        for (bool with_k : {true, false})
            test_rope(inter, with_k);
    test_gemma_elementwise(3, 1001);
    test_gemma_elementwise(17, 64);
    for (bool inter : {false, true}) {
        test_rope_partial(inter, 64, 1.1902f);
        test_rope_partial(inter, 48, 1.0f);
    }
    for (DType t : kAllDTypes) { // every type a GGUF token_embd can have
        const int64_t be = dtype_block_elems(t);
        test_embedding(t, be == 1 ? 50 : (be == 32 ? 50 : 30),
                       be == 1 ? 67 : (be == 32 ? 96 : 512));
    }
    test_argmax();
    test_invalid_arguments();
    return finish("tst_cuda_ops_elementwise");
}
