// CUDA paged attention against the CPU reference (engine/runtime/attention.h): GQA ratios 1/4/8,
// block sizes 8/16/32, head dims 64..256, contexts ending mid-block and spanning many blocks,
// batches mixing prefill chunks and decode rows, KV in F32 and F16 (the other types:
// tst_cuda_ops_kv_types), with and without the
// split-context workspace. Cache slots outside every sequence's context hold NaN, so a read
// past the context shows up in the output. Sliding windows (mistral, gemma2/3's local layers) and
// gemma2's attention-logit soft-cap, on the fp32 and the tensor-core kernels: under a window the
// keys before a sequence's first window hold NaN and its blocks wholly before it point at a
// NaN-filled block (freed and reused by another request), so any read of them shows.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "engine/runtime/attention.h"
#include "engine/runtime/forward_batch.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/gpu/ops/gpu_test_util.h"

using namespace llmwb;
using namespace llmwb::gputest;
namespace cu = llmwb::cuda;

namespace {

struct SeqSpec {
    int32_t context;   // tokens in KV after the step
    int32_t query_len; // rows of this step (1 = decode)
};

struct Case {
    const char* name;
    int32_t heads, kv_heads, head_dim, block_size;
    std::vector<SeqSpec> seqs;
};

// Gemma / mistral attention features: sliding window (0 = none), logit soft-cap (0 = none).
struct Variant {
    int32_t window = 0;
    float softcap = 0.0f;
};

// ctx_bound > 0: passed as max_context_len instead of the true maximum (an understated bound,
// as in a graph captured at a shorter context); the result must not change.
// tensor_cores: prefill sequences (>= 64 rows) on the f16 tensor-core kernel, compared with a
// looser bound (q, K, V and the probabilities rounded to f16).
void run_case(const Case& c, KvDtype kv_dtype, bool use_workspace, int32_t ctx_bound = 0,
              bool tensor_cores = false, Variant var = {}) {
    const int32_t bs = c.block_size;
    int32_t blocks_needed = 0;
    for (const auto& s : c.seqs)
        blocks_needed += (s.context + bs - 1) / bs;
    const int32_t num_blocks = blocks_needed + 3;
    std::vector<int32_t> pool(num_blocks);
    for (int32_t i = 0; i < num_blocks; ++i)
        pool[i] = i;
    std::shuffle(pool.begin(), pool.end(), rng());
    const int32_t nan_block = pool.back(); // never a sequence's: NaN throughout

    ForwardBatch batch;
    const int64_t kv_dim = static_cast<int64_t>(c.kv_heads) * c.head_dim;
    const int64_t slots = static_cast<int64_t>(num_blocks) * bs;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> kc(slots * kv_dim, nan), vc(slots * kv_dim, nan);
    size_t next = 0;
    int32_t max_q = 0, max_ctx = 0;
    for (const auto& s : c.seqs) {
        const int32_t nb = (s.context + bs - 1) / bs;
        std::vector<int32_t> blocks(pool.begin() + next, pool.begin() + next + nb);
        next += nb;
        // Under a window, keys before the first query row's window are never read: they hold NaN
        // and their whole blocks are replaced by the NaN block, as freed and reused ones.
        const int32_t first_key =
            var.window > 0 ? std::max(0, s.context - s.query_len - var.window + 1) : 0;
        for (int32_t b = 0; b < first_key / bs; ++b)
            blocks[b] = nan_block;
        std::vector<int32_t> tokens(s.query_len, 1);
        batch.add_sequence(tokens, s.context - s.query_len, blocks, bs, ForwardBatch::Logits::Last);
        for (int32_t j = first_key; j < s.context; ++j) { // K/V of every key the step may see
            const int64_t slot = static_cast<int64_t>(blocks[j / bs]) * bs + j % bs;
            const auto k = random_floats(kv_dim), v = random_floats(kv_dim);
            std::copy(k.begin(), k.end(), kc.begin() + slot * kv_dim);
            std::copy(v.begin(), v.end(), vc.begin() + slot * kv_dim);
        }
        max_q = std::max(max_q, s.query_len);
        max_ctx = std::max(max_ctx, s.context);
    }
    const Status valid = batch.validate(bs, num_blocks);
    GT_CHECK(valid.ok(), "%s: batch invalid", c.name);
    if (!valid.ok())
        return;

    // F16 caches: the reference sees the same rounded values.
    std::vector<uint16_t> kh, vh;
    if (kv_dtype == KvDtype::F16) {
        kh.resize(kc.size());
        vh.resize(vc.size());
        for (size_t i = 0; i < kc.size(); ++i) {
            kh[i] = kernels::fp32_to_fp16(kc[i]);
            vh[i] = kernels::fp32_to_fp16(vc[i]);
            kc[i] = kernels::fp16_to_fp32(kh[i]);
            vc[i] = kernels::fp16_to_fp32(vh[i]);
        }
    }

    const int32_t n = batch.n_tokens();
    const int64_t row = static_cast<int64_t>(c.heads) * c.head_dim;
    const auto q = random_floats(n * row);
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    std::vector<float> want(n * row);
    kernels::ThreadPool threads(1);
    AttentionScratch scratch;
    const KvLayout layout{KvDtype::F32, bs, c.kv_heads, c.head_dim};
    paged_attention(
        want.data(), q.data(), batch, reinterpret_cast<const unsigned char*>(kc.data()),
        reinterpret_cast<const unsigned char*>(vc.data()), layout, 1.0f, 1.0f,
        AttentionShape{c.heads, c.kv_heads, c.head_dim, bs, scale, var.window, var.softcap},
        threads, scratch);

    DeviceBuffer<float> dq(q), dout(n * row);
    DeviceBuffer<float> dkc(kv_dtype == KvDtype::F32 ? kc.size() : 0),
        dvc(kv_dtype == KvDtype::F32 ? vc.size() : 0);
    DeviceBuffer<uint16_t> dkh(kh), dvh(vh);
    if (kv_dtype == KvDtype::F32) {
        dkc.upload(kc);
        dvc.upload(vc);
    }
    DeviceBuffer<int32_t> dqs(batch.query_start), dctx(batch.context_lens),
        dtab(batch.block_tables);
    const size_t ws_bytes =
        use_workspace ? cu::paged_attention_workspace_bytes(n, c.heads, c.head_dim, max_ctx) : 0;
    GT_CHECK(!use_workspace || max_ctx <= 256 || ws_bytes > 0, "%s: split workspace", c.name);
    DeviceBuffer<uint8_t> dws(ws_bytes);
    dout.poison();

    cu::AttentionBatch ab;
    ab.query_start = dqs.get();
    ab.context_lens = dctx.get();
    ab.block_tables = dtab.get();
    ab.max_blocks_per_seq = batch.max_blocks_per_seq;
    ab.n_seqs = batch.n_seqs();
    ab.n_tokens = n;
    ab.max_query_len = max_q;
    ab.max_context_len = ctx_bound > 0 ? ctx_bound : max_ctx;
    cu::AttentionParams ap;
    ap.heads = c.heads;
    ap.kv_heads = c.kv_heads;
    ap.head_dim = c.head_dim;
    ap.block_size = bs;
    ap.scale = scale;
    ap.kv_dtype = kv_dtype;
    ap.tensor_cores = tensor_cores;
    ap.window = var.window;
    ap.logit_softcap = var.softcap;
    const void* kptr = kv_dtype == KvDtype::F32 ? static_cast<const void*>(dkc.get()) : dkh.get();
    const void* vptr = kv_dtype == KvDtype::F32 ? static_cast<const void*>(dvc.get()) : dvh.get();
    GT_OP(cu::paged_attention(dout.get(), dq.get(), kptr, vptr, ab, ap,
                              ws_bytes ? dws.get() : nullptr, ws_bytes, nullptr));
    char what[160];
    std::snprintf(what, sizeof(what),
                  "attention %s kv %s workspace %zu ctx bound %d tc %d window %d softcap %g",
                  c.name, kv_dtype_name(kv_dtype), ws_bytes, ctx_bound, tensor_cores ? 1 : 0,
                  var.window, static_cast<double>(var.softcap));
    // Rows of one head: each output row of head_dim compared to its own scale.
    const bool tc = tensor_cores && max_q >= 64 && c.head_dim <= 128;
    compare_rows(what, dout.download(), want, static_cast<int64_t>(n) * c.heads, c.head_dim,
                 tc ? 5e-3 : 2e-5, tc ? 5e-5 : 2e-6);
}

void test_invalid_arguments() {
    cu::AttentionBatch ab;
    ab.n_seqs = 1;
    ab.n_tokens = 1;
    ab.max_query_len = 1;
    cu::AttentionParams ap{8, 3, 64, 16, 0.125f, KvDtype::F32};
    GT_CHECK(cu::paged_attention(nullptr, nullptr, nullptr, nullptr, ab, ap, nullptr, 0, nullptr) ==
                 cu::OpStatus::InvalidArgument,
             "heads %% kv_heads");
    ap = {8, 2, 48, 16, 0.125f, KvDtype::F32};
    GT_CHECK(cu::paged_attention(nullptr, nullptr, nullptr, nullptr, ab, ap, nullptr, 0, nullptr) ==
                 cu::OpStatus::InvalidArgument,
             "head_dim 48");
    ap = {8, 2, 64, 12, 0.125f, KvDtype::F32};
    GT_CHECK(cu::paged_attention(nullptr, nullptr, nullptr, nullptr, ab, ap, nullptr, 0, nullptr) ==
                 cu::OpStatus::InvalidArgument,
             "block size 12");
    ap = {8, 2, 64, 16, 0.125f, static_cast<KvDtype>(77)};
    GT_CHECK(cu::paged_attention(nullptr, nullptr, nullptr, nullptr, ab, ap, nullptr, 0, nullptr) ==
                 cu::OpStatus::InvalidArgument,
             "unknown KV dtype");
    ap = {8, 2, 64, 16, 0.125f, KvDtype::F16};
    const void* misaligned = reinterpret_cast<const void*>(uintptr_t{4104});
    GT_CHECK(cu::paged_attention(nullptr, nullptr, misaligned, misaligned, ab, ap, nullptr, 0,
                                 nullptr) == cu::OpStatus::InvalidArgument,
             "misaligned cache");
}

} // namespace

int main() {
    if (const int skip = skip_without_device())
        return skip;
    const std::vector<Case> cases = {
        // GQA 1, mixed: a prefill from 0, a decode row, a chunked prefill mid-context.
        {"mha-mixed", 4, 4, 64, 16, {{37, 37}, {100, 1}, {53, 20}}},
        // GQA 4, decode only, one long context (splits when a workspace is given).
        {"gqa4-decode", 8, 2, 128, 8, {{1, 1}, {9, 1}, {700, 1}, {129, 1}}},
        // GQA 8, a prefill chunk over a long history plus a long decode.
        {"gqa8-mixed", 16, 2, 96, 32, {{370, 70}, {2000, 1}, {33, 2}}},
        // GQA 7 (Qwen2.5-0.5B-like: 14/2 heads), head_dim 64, single sequence prefill.
        {"gqa7-prefill", 14, 2, 64, 16, {{301, 301}}},
        // head_dim 256, GQA 2, block 8, mixed decode/prefill.
        {"hd256", 4, 2, 256, 8, {{77, 1}, {260, 40}, {5, 5}}},
        // One sequence, one decode row over many blocks: the split path at full depth.
        {"long-decode", 8, 8, 128, 16, {{4099, 1}}},
        // Tensor-core shapes: several prefill chunks (64+ rows, partial 64-row tiles) with decode
        // rows, GQA 4, head_dim 128; and MHA head_dim 64 with block size 8.
        {"tc-chunks", 8, 2, 128, 16, {{200, 130}, {64, 64}, {500, 1}, {90, 65}}},
        {"tc-mha", 4, 4, 64, 8, {{150, 150}, {10, 1}, {1000, 70}}},
    };
    for (const Case& c : cases)
        for (KvDtype kv : {KvDtype::F32, KvDtype::F16})
            for (bool ws : {false, true})
                run_case(c, kv, ws);
    for (const Case& c : cases)
        for (KvDtype kv : {KvDtype::F32, KvDtype::F16})
            run_case(c, kv, true, 0, true);
    run_case(cases[5], KvDtype::F32, true, 1024); // splits sized for 1024 keys, context 4099
    run_case(cases[2], KvDtype::F16, true, 400);
    // Sliding windows: shorter than a block, a few blocks, longer than some contexts; on the
    // fp32 kernel (with and without key splits) and the tensor-core one; with gemma2's soft-cap.
    const Case windowed[] = {
        {"win-mixed", 8, 2, 64, 16, {{37, 37}, {700, 1}, {300, 90}, {20, 1}}},
        {"win-long-decode", 4, 4, 128, 8, {{2100, 1}, {999, 2}}},
        {"win-tc", 8, 2, 128, 16, {{400, 130}, {64, 64}, {90, 65}}},
    };
    for (const Case& c : windowed)
        for (int32_t window : {5, 48, 256})
            for (bool tc : {false, true}) {
                run_case(c, KvDtype::F32, !tc, 0, tc, Variant{window, 0.0f});
                run_case(c, KvDtype::F16, true, 0, tc, Variant{window, 50.0f});
            }
    for (bool tc : {false, true}) { // soft-cap alone (small cap: most scores saturate)
        run_case(cases[0], KvDtype::F32, true, 0, tc, Variant{0, 2.0f});
        run_case(cases[6], KvDtype::F16, false, 0, tc, Variant{0, 50.0f});
    }
    test_invalid_arguments();
    return finish("tst_cuda_ops_attention");
}
