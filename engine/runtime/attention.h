// Paged causal attention over block tables (grouped-query), the CPU backend op.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/runtime/forward_batch.h"
#include "kernels/cpu/kv_format.h"

namespace llmwb {

namespace kernels {
class ThreadPool;
}

struct AttentionShape {
    int32_t num_heads = 0;
    int32_t num_kv_heads = 0; // num_heads is a multiple of it
    int32_t head_dim = 0;
    int32_t block_size = 0;
    float scale = 0.0f; // 1/sqrt(head_dim)
    int32_t window = 0; // sliding window: keys (pos - window, pos]; 0 = all keys up to pos
    float logit_softcap =
        0.0f; // gemma2: scores = cap * tanh(scores / cap) before softmax; 0 = none
};

// Reusable scratch, grown on demand (one scores row per thread).
struct AttentionScratch {
    struct Task {
        int32_t seq, head, q_begin, q_end; // query rows relative to the sequence's first row
    };
    std::vector<Task> tasks;                // [seqs x heads x query chunks]
    std::vector<std::vector<float>> scores; // [threads][max context]
    // Query rows per kernel call at most (kernels::attend_rows); 1 = row by row, the same
    // results (llmwb-bench-decode's baseline for the prefill attention).
    int32_t max_rows_per_call = 16;
};

// For every sequence s of the batch and each of its query rows t (at context index
// pos = ctx_s - q_s + i), and every head h:
//   out[t][h] = sum_{lo <= j <= pos} softmax_j(scale * q[t][h] . K[j][h / group]) * V[j][h / group]
// with lo = 0, or lo = max(0, pos - window + 1) under a sliding window (blocks wholly before lo
// are never read, so the KV manager may have freed them).
// where K[j] / V[j] live at block table_s[j / block_size], offset j % block_size of the
// layer's pools k_pool / v_pool in `layout` (kernels/cpu/kv_format.h: any KV element type; fp8
// read back times k_scale / v_scale). Each stored row is converted in registers (or a small
// per-row buffer), never into a full-precision copy of the cache.
// q, out: [n_tokens][num_heads * head_dim]. Parallel over (sequence, head, query chunk).
void paged_attention(float* out, const float* q, const ForwardBatch& batch,
                     const unsigned char* k_pool, const unsigned char* v_pool,
                     const KvLayout& layout, float k_scale, float v_scale,
                     const AttentionShape& shape, kernels::ThreadPool& pool,
                     AttentionScratch& scratch);

} // namespace llmwb
