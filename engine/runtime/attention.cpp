#include "engine/runtime/attention.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "kernels/cpu/attention_avx512.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb {

namespace {

constexpr int32_t kQueryChunk = 16;  // query rows per task

// One query row of one head: scores over keys [0, n_keys), softmax, weighted sum of V.
void attend_row(float* out, const float* q, const int32_t* table, int32_t n_keys,
                const float* k_cache, const float* v_cache, int32_t kv_head,
                const AttentionShape& sh, float* scores) {
    const int64_t slot_stride = static_cast<int64_t>(sh.num_kv_heads) * sh.head_dim;
    const int64_t head_off = static_cast<int64_t>(kv_head) * sh.head_dim;
    for (int32_t j0 = 0; j0 < n_keys; j0 += sh.block_size) {
        const int64_t slot0 = static_cast<int64_t>(table[j0 / sh.block_size]) * sh.block_size;
        const int32_t n = std::min(sh.block_size, n_keys - j0);
        for (int32_t o = 0; o < n; ++o)
            scores[j0 + o] =
                sh.scale * kernels::dot_f32(q, k_cache + (slot0 + o) * slot_stride + head_off,
                                            sh.head_dim);
    }
    kernels::softmax(scores, n_keys);
    std::memset(out, 0, sizeof(float) * sh.head_dim);
    for (int32_t j0 = 0; j0 < n_keys; j0 += sh.block_size) {
        const int64_t slot0 = static_cast<int64_t>(table[j0 / sh.block_size]) * sh.block_size;
        const int32_t n = std::min(sh.block_size, n_keys - j0);
        for (int32_t o = 0; o < n; ++o)
            kernels::axpy_f32(out, scores[j0 + o], v_cache + (slot0 + o) * slot_stride + head_off,
                              sh.head_dim);
    }
}

}  // namespace

void paged_attention(float* out, const float* q, const ForwardBatch& batch, const float* k_cache,
                     const float* v_cache, const AttentionShape& sh, kernels::ThreadPool& pool,
                     AttentionScratch& scratch) {
    const int32_t n_seqs = batch.n_seqs();
    const int32_t group = sh.num_heads / sh.num_kv_heads;
    // AVX-512: one task per (sequence, KV head, query chunk) handles the `group` query heads of
    // that KV head together (each K/V row read once for all of them); otherwise one per head.
    const bool grouped = kernels::active_simd_level() == kernels::SimdLevel::Avx512 &&
                         kernels::attend_group_avx512_supported(sh.head_dim);
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
    if (tasks.empty()) return;

    const int threads = pool.size();
    if (static_cast<int>(scratch.scores.size()) < threads) scratch.scores.resize(threads);
    const int64_t scores_len = grouped ? kernels::attend_group_scratch(group, max_ctx) : max_ctx;
    for (auto& row : scratch.scores)
        if (static_cast<int64_t>(row.size()) < scores_len) row.resize(static_cast<size_t>(scores_len));

    const int64_t row_stride = static_cast<int64_t>(sh.num_heads) * sh.head_dim;
    // Small steps (a decode token over a short context) run on the calling thread: waking the
    // pool would cost more than the work.
    int64_t work = 0;  // ~ multiply-adds
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
            if (grouped) {
                const int64_t kv_off = static_cast<int64_t>(t.head) * sh.head_dim;
                const kernels::PagedKvView kv{k_cache + kv_off, v_cache + kv_off, table, sh.block_size,
                                              static_cast<int64_t>(sh.num_kv_heads) * sh.head_dim};
                for (int32_t r = t.q_begin; r < t.q_end; ++r) {
                    const int64_t row = batch.query_start[t.seq] + r;
                    const int32_t n_keys = ctx - ql + r + 1;
                    const int64_t off = row * row_stride + static_cast<int64_t>(t.head) * group * sh.head_dim;
                    kernels::attend_group_avx512(out + off, q + off, group, sh.head_dim, n_keys, sh.scale, kv, scores);
                }
                continue;
            }
            for (int32_t r = t.q_begin; r < t.q_end; ++r) {
                const int64_t row = batch.query_start[t.seq] + r;
                const int32_t n_keys = ctx - ql + r + 1;  // causal: keys up to this position
                const int64_t off = row * row_stride + static_cast<int64_t>(t.head) * sh.head_dim;
                attend_row(out + off, q + off, table, n_keys, k_cache, v_cache, t.head / group, sh,
                           scores);
            }
        }
    };
    if (inline_run) {
        body(0, 1);
    } else {
        pool.run(body);
    }
}

}  // namespace llmwb
