// The CUDA KV cache in every KvDtype against the CPU (kernels/cpu/kv_format.h, kv_write.h,
// engine/runtime/attention.h):
// - kv_write stores exactly the bytes of kernels::kv_write_ref (values and int8 row scales, the
//   block-major layout, padding slots untouched) for every type, at two geometries;
// - the element encoders on the edge values: every fp8 code, the midpoints between neighbouring
//   codes and the floats on either side of them, subnormals, saturation, zeros, inf and NaN,
//   and random floats over a wide exponent range (bf16, f16, fp8 e4m3 / e5m2 with and without a
//   scale);
// - paged attention over pools written by the CPU in each type, against the CPU's attention over
//   the same bytes (exact stored values: tight bounds), on the fp32 kernel with and without key
//   splits and on the tensor-core kernel (K/V dequantized into its f16 tiles).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "engine/runtime/attention.h"
#include "engine/runtime/forward_batch.h"
#include "kernels/cpu/kv_format.h"
#include "kernels/cpu/kv_write.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/gpu/ops/gpu_test_util.h"

using namespace llmwb;
using namespace llmwb::gputest;
namespace cu = llmwb::cuda;

namespace {

// Writes rows ([n][kv_heads * head_dim]) at `slots` on the device and on the CPU (pools of
// num_blocks blocks, both starting as 0xFF bytes) and compares every byte of both pools.
int compare_write(const char* what, const KvLayout& L, int32_t num_blocks,
                  const std::vector<float>& k, const std::vector<float>& v,
                  const std::vector<int64_t>& slots, float k_inv, float v_inv) {
    const int64_t n = static_cast<int64_t>(slots.size());
    const int64_t row = static_cast<int64_t>(L.num_kv_heads) * L.head_dim;
    const size_t bytes = static_cast<size_t>(num_blocks * L.block_bytes());
    std::vector<uint8_t> want_k(bytes, 0xFF), want_v(bytes, 0xFF);
    for (int64_t i = 0; i < n; ++i) // the CPU never sees padding slots (< 0): one row at a time
        if (slots[static_cast<size_t>(i)] >= 0) {
            kernels::kv_write_ref(want_k.data(), L, k.data() + i * row, row, &slots[size_t(i)], 1,
                                  k_inv);
            kernels::kv_write_ref(want_v.data(), L, v.data() + i * row, row, &slots[size_t(i)], 1,
                                  v_inv);
        }
    DeviceBuffer<uint8_t> dkc(bytes), dvc(bytes);
    dkc.poison();
    dvc.poison();
    DeviceBuffer<float> dk(k), dv(v);
    DeviceBuffer<int64_t> dslots(slots);
    GT_OP(cu::kv_write(dkc.get(), dvc.get(), dk.get(), dv.get(), dslots.get(), n, L, k_inv, v_inv,
                       nullptr));
    const auto got_k = dkc.download(), got_v = dvc.download();
    int bad = 0;
    size_t first = bytes;
    for (size_t i = 0; i < bytes; ++i)
        if (got_k[i] != want_k[i] || got_v[i] != want_v[i]) {
            ++bad;
            first = std::min(first, i);
        }
    GT_CHECK(
        bad == 0,
        "kv_write %s %s: %d bytes differ from kv_write_ref (first at %zu: K %02x/%02x V %02x/%02x)",
        what, kv_dtype_name(L.dtype), bad, first, first < bytes ? got_k[first] : 0,
        first < bytes ? want_k[first] : 0, first < bytes ? got_v[first] : 0,
        first < bytes ? want_v[first] : 0);
    return bad;
}

// Random rows with outliers (key-like), an all-zero row, a padding token; slots shuffled over
// the pool.
void test_kv_write(KvDtype t, int32_t block_size, int32_t kv_heads, int32_t head_dim) {
    const KvLayout L{t, block_size, kv_heads, head_dim};
    const int32_t num_blocks = 6;
    const int64_t n = 23, row = static_cast<int64_t>(kv_heads) * head_dim;
    std::vector<int64_t> perm(static_cast<size_t>(num_blocks) * block_size);
    for (size_t i = 0; i < perm.size(); ++i)
        perm[i] = static_cast<int64_t>(i);
    std::shuffle(perm.begin(), perm.end(), rng());
    std::vector<int64_t> slots(perm.begin(), perm.begin() + n);
    slots[4] = -1;
    auto k = random_floats(n * row, -3.0f, 3.0f), v = random_floats(n * row, -1.0f, 1.0f);
    for (int i = 0; i < 12; ++i) // outliers
        k[static_cast<size_t>(random_int(0, static_cast<int>(n * row) - 1))] *= 40.0f;
    std::fill(k.begin() + 2 * row, k.begin() + 3 * row, 0.0f); // int8 scale 0
    char what[64];
    std::snprintf(what, sizeof(what), "bs %d kvh %d hd %d", block_size, kv_heads, head_dim);
    compare_write(what, L, num_blocks, k, v, slots, 1.0f / 0.05f, 1.0f / 0.8f);
}

void push_fp8_edges(std::vector<float>& vals, float (*decode)(uint8_t)) {
    for (int c = 0; c < 0x80; ++c) {
        const float a = decode(static_cast<uint8_t>(c));
        if (!std::isfinite(a))
            continue;
        vals.push_back(a);
        vals.push_back(-a);
        const float b = decode(static_cast<uint8_t>(c + 1));
        if (c + 1 < 0x80 && std::isfinite(b)) {
            const float mid = (a + b) * 0.5f; // exact: neighbours differ in one ulp of fp8
            for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
                vals.push_back(x);
                vals.push_back(-x);
            }
        }
    }
}

// Each encoder on the edge values above, stored through kv_write (fp8 also with a scale).
void test_encoders() {
    std::vector<float> vals;
    push_fp8_edges(vals, fp8_e4m3_to_fp32);
    push_fp8_edges(vals, fp8_e5m2_to_fp32);
    const float inf = std::numeric_limits<float>::infinity();
    for (float x :
         {0.0f,       -0.0f,    inf,      -inf,       std::numeric_limits<float>::quiet_NaN(),
          448.0f,     449.0f,   464.0f,   479.9f,     480.0f,
          57344.0f,   61439.0f, 61440.0f, 1e30f,      std::numeric_limits<float>::max(),
          1e-40f,     -1e-45f,  0x1p-10f, 0x1.8p-10f, 0x1p-17f,
          0x1.8p-17f, 65504.0f, 65520.0f, 1e-8f,      3.0e-5f})
        vals.push_back(x);
    for (int i = 0; i < 3000; ++i) { // random magnitudes over 2^-30 .. 2^20
        const float m = random_floats(1, 1.0f, 2.0f)[0];
        vals.push_back((i & 1 ? -m : m) * std::ldexp(1.0f, random_int(-30, 20)));
    }
    const int32_t hd = 64;
    while (vals.size() % hd)
        vals.push_back(0.25f);
    const int64_t n = static_cast<int64_t>(vals.size()) / hd;
    const int32_t bs = 16;
    const auto num_blocks = static_cast<int32_t>((n + bs - 1) / bs);
    std::vector<int64_t> slots(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        slots[static_cast<size_t>(i)] = i;
    std::vector<float> neg(vals);
    for (float& x : neg)
        x = -x;
    for (KvDtype t : {KvDtype::F16, KvDtype::BF16, KvDtype::Fp8E4M3, KvDtype::Fp8E5M2}) {
        const KvLayout L{t, bs, 1, hd};
        compare_write("edge values", L, num_blocks, vals, neg, slots, 1.0f, 1.0f);
        if (kv_dtype_is_fp8(t))
            compare_write("edge values scaled", L, num_blocks, vals, neg, slots, 1.0f / 0.3f,
                          1.0f / 7.0f);
    }
}

struct SeqSpec {
    int32_t context, query_len;
};

struct Case {
    const char* name;
    int32_t heads, kv_heads, head_dim, block_size;
    std::vector<SeqSpec> seqs;
};

// Pools written by the CPU in type t (unused slots: 0xFF bytes, NaN in every type: int8 through
// its scale), attention on both sides over the same bytes.
void test_attention(const Case& c, KvDtype t, bool use_workspace, bool tensor_cores) {
    const int32_t bs = c.block_size;
    int32_t blocks_needed = 0;
    for (const auto& s : c.seqs)
        blocks_needed += (s.context + bs - 1) / bs;
    const int32_t num_blocks = blocks_needed + 2;
    std::vector<int32_t> pool(static_cast<size_t>(num_blocks));
    for (int32_t i = 0; i < num_blocks; ++i)
        pool[static_cast<size_t>(i)] = i;
    std::shuffle(pool.begin(), pool.end(), rng());
    const KvLayout L{t, bs, c.kv_heads, c.head_dim};
    const int64_t kv_dim = static_cast<int64_t>(c.kv_heads) * c.head_dim;
    const size_t bytes = static_cast<size_t>(num_blocks * L.block_bytes());
    std::vector<uint8_t> kp(bytes, 0xFF), vp(bytes, 0xFF);
    const float k_scale = kv_dtype_is_fp8(t) ? 0.02f : 1.0f,
                v_scale = kv_dtype_is_fp8(t) ? 0.5f : 1.0f;

    ForwardBatch batch;
    size_t next = 0;
    int32_t max_q = 0, max_ctx = 0;
    for (const auto& s : c.seqs) {
        const int32_t nb = (s.context + bs - 1) / bs;
        std::vector<int32_t> blocks(pool.begin() + static_cast<long>(next),
                                    pool.begin() + static_cast<long>(next + nb));
        next += static_cast<size_t>(nb);
        std::vector<int32_t> tokens(static_cast<size_t>(s.query_len), 1);
        batch.add_sequence(tokens, s.context - s.query_len, blocks, bs, ForwardBatch::Logits::Last);
        std::vector<int64_t> slots(static_cast<size_t>(s.context));
        for (int32_t j = 0; j < s.context; ++j)
            slots[static_cast<size_t>(j)] = static_cast<int64_t>(blocks[j / bs]) * bs + j % bs;
        const auto k = random_floats(s.context * kv_dim, -2.0f, 2.0f);
        const auto v = random_floats(s.context * kv_dim);
        kernels::kv_write_ref(kp.data(), L, k.data(), kv_dim, slots.data(), s.context,
                              1.0f / k_scale);
        kernels::kv_write_ref(vp.data(), L, v.data(), kv_dim, slots.data(), s.context,
                              1.0f / v_scale);
        max_q = std::max(max_q, s.query_len);
        max_ctx = std::max(max_ctx, s.context);
    }
    GT_CHECK(batch.validate(bs, num_blocks).ok(), "%s: batch invalid", c.name);
    const int32_t n = batch.n_tokens();
    const int64_t row = static_cast<int64_t>(c.heads) * c.head_dim;
    const auto q = random_floats(n * row);
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    std::vector<float> want(static_cast<size_t>(n * row));
    kernels::ThreadPool threads(1);
    AttentionScratch scratch;
    paged_attention(want.data(), q.data(), batch, kp.data(), vp.data(), L, k_scale, v_scale,
                    AttentionShape{c.heads, c.kv_heads, c.head_dim, bs, scale}, threads, scratch);

    DeviceBuffer<float> dq(q), dout(static_cast<size_t>(n * row));
    DeviceBuffer<uint8_t> dk(kp), dv(vp);
    DeviceBuffer<int32_t> dqs(batch.query_start), dctx(batch.context_lens),
        dtab(batch.block_tables);
    const size_t ws =
        use_workspace ? cu::paged_attention_workspace_bytes(n, c.heads, c.head_dim, max_ctx) : 0;
    DeviceBuffer<uint8_t> dws(ws);
    dout.poison();
    cu::AttentionBatch ab;
    ab.query_start = dqs.get();
    ab.context_lens = dctx.get();
    ab.block_tables = dtab.get();
    ab.max_blocks_per_seq = batch.max_blocks_per_seq;
    ab.n_seqs = batch.n_seqs();
    ab.n_tokens = n;
    ab.max_query_len = max_q;
    ab.max_context_len = max_ctx;
    cu::AttentionParams ap;
    ap.heads = c.heads;
    ap.kv_heads = c.kv_heads;
    ap.head_dim = c.head_dim;
    ap.block_size = bs;
    ap.scale = scale;
    ap.kv_dtype = t;
    ap.tensor_cores = tensor_cores;
    ap.k_scale = k_scale;
    ap.v_scale = v_scale;
    GT_OP(cu::paged_attention(dout.get(), dq.get(), dk.get(), dv.get(), ab, ap,
                              ws ? dws.get() : nullptr, ws, nullptr));
    char what[160];
    std::snprintf(what, sizeof(what), "attention %s kv %s workspace %zu tc %d", c.name,
                  kv_dtype_name(t), ws, tensor_cores ? 1 : 0);
    const bool tc = tensor_cores && max_q >= 64 && c.head_dim <= 128;
    compare_rows(what, dout.download(), want, static_cast<int64_t>(n) * c.heads, c.head_dim,
                 tc ? 5e-3 : 2e-5, tc ? 5e-5 : 2e-6);
}

void test_invalid() {
    const KvLayout bad{KvDtype::Int8, 0, 2, 64};
    GT_CHECK(cu::kv_write(nullptr, nullptr, nullptr, nullptr, nullptr, 1, bad, 1.0f, 1.0f,
                          nullptr) == cu::OpStatus::InvalidArgument,
             "kv_write block size 0");
    cu::AttentionBatch ab;
    ab.n_seqs = 1;
    ab.n_tokens = 1;
    ab.max_query_len = 1;
    cu::AttentionParams ap;
    ap.heads = 4;
    ap.kv_heads = 2;
    ap.head_dim = 64;
    ap.block_size = 16;
    ap.scale = 0.125f;
    ap.kv_dtype = KvDtype::Fp8E4M3;
    ap.k_scale = 0.0f;
    GT_CHECK(cu::paged_attention(nullptr, nullptr, nullptr, nullptr, ab, ap, nullptr, 0, nullptr) ==
                 cu::OpStatus::InvalidArgument,
             "fp8 scale 0");
}

} // namespace

int main() {
    if (const int skip = skip_without_device())
        return skip;
    test_encoders();
    for (KvDtype t : kAllKvDtypes) {
        test_kv_write(t, 16, 2, 96);
        test_kv_write(t, 8, 3, 64);
    }
    const Case mixed{"gqa4-mixed", 8, 2, 64, 16, {{37, 37}, {300, 1}, {53, 20}}};
    const Case split{"long-decode", 4, 4, 64, 32, {{700, 1}, {9, 1}}};
    const Case tc{"tc-prefill", 4, 2, 128, 8, {{150, 130}, {10, 1}}};
    for (KvDtype t : kAllKvDtypes) {
        test_attention(mixed, t, false, false);
        test_attention(split, t, true, false);
        test_attention(tc, t, false, true);
    }
    test_invalid();
    return finish("tst_cuda_ops_kv_types");
}
