// Attention of one query row over a paged KV cache, for the query heads that share one KV head
// (grouped-query), with run-time SIMD dispatch like matmul's: the AVX-512 or AVX2 kernel
// (attention_avx512.h, attention_avx2.h: each K and V row read once for all heads of the group,
// any element type converted in registers) where the active
// level and head_dim allow it, else a portable path (per head: scores through dot_f32, softmax,
// values through axpy_f32 — both dispatched themselves). The engine's paged_attention
// (engine/runtime/attention.h) only splits a batch into such calls over its threads.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/cpu/kv_format.h"

namespace llmwb::kernels {

// One KV head of one layer's paged K and V pools (kv_format.h), seen through one sequence's
// block table: key j (j = 0 is the view's first key) is the sequence's key at context index
// i = key_base + j, at block table[i / block_size], offset i % block_size. key_base > 0 is a
// sliding window: keys before it are not read (their blocks may be gone).
struct PagedKvView {
    const unsigned char* k = nullptr; // the layer's K pool (block 0)
    const unsigned char* v = nullptr; // the layer's V pool
    const int32_t* table = nullptr;   // the sequence's block table
    KvLayout layout;                  // element type, block size, kv heads, head_dim
    int32_t kv_head = 0;
    float k_scale = 1.0f, v_scale = 1.0f; // fp8: the layer's scales (stored = x / scale)
    int32_t key_base = 0;                 // context index of key 0
    float logit_softcap = 0.0f; // > 0: scores = cap * tanh(scores / cap) before the softmax

    // Stored row of key j (values of this KV head) and, for int8, its scale.
    const unsigned char* k_row(int32_t j) const { return k + offset(j); }
    const unsigned char* v_row(int32_t j) const { return v + offset(j); }
    float k_row_scale(int32_t j) const { return scale_at(k, j); }
    float v_row_scale(int32_t j) const { return scale_at(v, j); }
    int64_t offset(int32_t j) const {
        const int32_t i = key_base + j;
        return layout.value_offset(table[i / layout.block_size], i % layout.block_size, kv_head);
    }
    float scale_at(const unsigned char* pool, int32_t j) const {
        const int32_t i = key_base + j;
        float s;
        std::memcpy(&s,
                    pool + layout.scale_offset(table[i / layout.block_size], i % layout.block_size,
                                               kv_head),
                    sizeof s);
        return s;
    }
};

// True when the kernel chosen now for head_dim reads each K/V row once for a whole group of
// heads: callers then pass all query heads of a KV head in one call (fewer, larger calls);
// otherwise one head per call parallelises better and costs the same.
bool attention_groups_heads(int head_dim, KvDtype t);

// Scratch floats attend_group needs for n_heads heads over n_keys keys.
int64_t attend_group_scratch(int n_heads, int32_t n_keys);

// For h < n_heads (query rows q + h * head_dim, outputs out + h * head_dim), keys j < n_keys at
// slot table[j / block_size] * block_size + j % block_size:
//   out_h = sum_j softmax_j(s_j) * V[j],  s_j = scale * q_h . K[j]
// and with kv.logit_softcap = cap > 0 (gemma2): s_j = cap * tanh(scale * q_h . K[j] / cap).
void attend_group(float* out, const float* q, int n_heads, int head_dim, int32_t n_keys,
                  float scale, const PagedKvView& kv, float* scratch);

// Several consecutive query rows of one sequence at once (a prefill chunk, a speculative
// verify step): row r < n_rows (queries q + r * q_stride, outputs out + r * out_stride, n_heads
// heads of head_dim each) attends to keys [0, n_keys0 + r) of kv (causal). Each row's output is
// bit for bit attend_group's for that row alone — a token's result never depends on which
// rows share its call — but where attention_multi_row holds, the K and V rows are read and
// converted once for all rows and the scores need no horizontal sums.
constexpr int kAttendMaxRows = 16;
bool attention_multi_row(int head_dim, KvDtype t, int n_heads);
// Scratch floats attend_rows needs (n_rows <= kAttendMaxRows).
int64_t attend_rows_scratch(int n_rows, int n_heads, int32_t n_keys0);
void attend_rows(float* out, int64_t out_stride, const float* q, int64_t q_stride, int n_rows,
                 int n_heads, int head_dim, int32_t n_keys0, float scale, const PagedKvView& kv,
                 float* scratch);

} // namespace llmwb::kernels
