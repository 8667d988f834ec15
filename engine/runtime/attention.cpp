#include "engine/runtime/attention.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb {

namespace {

constexpr int32_t kQueryChunk = 16; // query rows per task (kernels::kAttendMaxRows)
static_assert(kQueryChunk <= kernels::kAttendMaxRows);

// A task's rows go to the kernel together (kernels::attend_rows: each K/V tile read once for
// all of them) as long as their scores fit in this many bytes per thread; at long contexts
// fewer rows per call (16 rows x 7 heads x 16k keys: 7.3 MiB; at 128k keys, 2 rows).
constexpr int64_t kRowsScratchBytes = int64_t{8} << 20;

} // namespace

void paged_attention(float* out, const float* q, const ForwardBatch& batch,
                     const unsigned char* k_pool, const unsigned char* v_pool,
                     const KvLayout& layout, float k_scale, float v_scale, const AttentionShape& sh,
                     kernels::ThreadPool& pool, AttentionScratch& scratch) {
    assert(layout.block_size == sh.block_size && layout.num_kv_heads == sh.num_kv_heads &&
           layout.head_dim == sh.head_dim);
    const int32_t n_seqs = batch.n_seqs();
    const int32_t group = sh.num_heads / sh.num_kv_heads;
    // One task per (sequence, KV head, query chunk) handles the `group` query heads of that KV
    // head together when the kernel reads each K/V row once for all of them; otherwise one task
    // per (sequence, head, query chunk).
    const bool grouped = kernels::attention_groups_heads(sh.head_dim, layout.dtype);
    const int32_t task_heads = grouped ? sh.num_kv_heads : sh.num_heads;
    auto& tasks = scratch.tasks;
    tasks.clear();
    int32_t max_ctx = 0;
    for (int32_t s = 0; s < n_seqs; ++s) {
        const int32_t ql = batch.query_len(s);
        max_ctx = std::max(max_ctx, batch.context_lens[s]);
        for (int32_t h = 0; h < task_heads; ++h)
            for (int32_t b = 0; b < ql; b += kQueryChunk)
                tasks.push_back({s, h, b, std::min(ql, b + kQueryChunk)});
    }
    if (tasks.empty())
        return;

    const int threads = pool.size();
    if (static_cast<int>(scratch.scores.size()) < threads)
        scratch.scores.resize(threads);
    // Rows per kernel call: up to a task's (16) while their scores fit kRowsScratchBytes.
    int32_t rows_per_call = 1;
    if (grouped && kernels::attention_multi_row(sh.head_dim, layout.dtype, group)) {
        const int64_t per_row = static_cast<int64_t>(group) * (max_ctx + 16) * sizeof(float);
        rows_per_call = static_cast<int32_t>(std::clamp<int64_t>(
            kRowsScratchBytes / per_row, 1, std::clamp(scratch.max_rows_per_call, 1, kQueryChunk)));
    }
    const int64_t scores_len = rows_per_call > 1
                                   ? kernels::attend_rows_scratch(rows_per_call, group, max_ctx)
                                   : kernels::attend_group_scratch(grouped ? group : 1, max_ctx);
    for (auto& row : scratch.scores)
        if (static_cast<int64_t>(row.size()) < scores_len)
            row.resize(static_cast<size_t>(scores_len));

    const int64_t row_stride = static_cast<int64_t>(sh.num_heads) * sh.head_dim;
    // Small steps (a decode token over a short context) run on the calling thread: waking the
    // pool would cost more than the work.
    int64_t work = 0; // ~ multiply-adds
    for (int32_t s = 0; s < n_seqs; ++s)
        work += static_cast<int64_t>(batch.query_len(s)) * batch.context_lens[s];
    work *= static_cast<int64_t>(sh.num_heads) * sh.head_dim * 2;
    const bool inline_run = work < (int64_t{1} << 18);
    std::atomic<size_t> next{0};
    auto body = [&](int thread, int) {
        float* scores = scratch.scores[thread].data();
        for (size_t i = next.fetch_add(1); i < tasks.size(); i = next.fetch_add(1)) {
            const AttentionScratch::Task& t = tasks[i];
            const int32_t ql = batch.query_len(t.seq);
            const int32_t ctx = batch.context_lens[t.seq];
            const int32_t* table = batch.block_table(t.seq);
            const int32_t heads = grouped ? group : 1;
            const int32_t kv_head = grouped ? t.head : t.head / group;
            kernels::PagedKvView kv;
            kv.k = k_pool;
            kv.v = v_pool;
            kv.table = table;
            kv.layout = layout;
            kv.kv_head = kv_head;
            kv.k_scale = k_scale;
            kv.v_scale = v_scale;
            kv.logit_softcap = sh.logit_softcap;
            const int64_t head_off = static_cast<int64_t>(t.head) * heads * sh.head_dim;
            for (int32_t r = t.q_begin; r < t.q_end;) {
                const int64_t off = (batch.query_start[t.seq] + r) * row_stride + head_off;
                const int32_t end = ctx - ql + r + 1; // causal: keys up to this position
                // Several rows at once while none of them has a window cutting its first keys
                // (they must share key 0); the same bits as row by row.
                const int32_t n = std::min(rows_per_call, t.q_end - r);
                if (n > 1 && (sh.window <= 0 || end + n - 1 <= sh.window)) {
                    kv.key_base = 0;
                    kernels::attend_rows(out + off, row_stride, q + off, row_stride, n, heads,
                                         sh.head_dim, end, sh.scale, kv, scores);
                    r += n;
                    continue;
                }
                kv.key_base = sh.window > 0 ? std::max(0, end - sh.window) : 0;
                kernels::attend_group(out + off, q + off, heads, sh.head_dim, end - kv.key_base,
                                      sh.scale, kv, scores);
                ++r;
            }
        }
    };
    if (inline_run) {
        body(0, 1);
    } else {
        pool.run(body);
    }
}

} // namespace llmwb
