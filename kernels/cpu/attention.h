// Attention of one query row over a paged KV cache, for the query heads that share one KV head
// (grouped-query), with run-time SIMD dispatch like matmul's: the AVX-512 kernel
// (attention_avx512.h: each K and V row read once for all heads of the group) where the active
// level and head_dim allow it, else a portable path (per head: scores through dot_f32, softmax,
// values through axpy_f32 — both dispatched themselves). The engine's paged_attention
// (engine/runtime/attention.h) only splits a batch into such calls over its threads.
#pragma once

#include <cstdint>

namespace llmwb::kernels {

struct PagedKvView {
    const float* k = nullptr;       // k_cache + kv_head * head_dim
    const float* v = nullptr;       // v_cache + kv_head * head_dim
    const int32_t* table = nullptr; // the sequence's block table
    int32_t block_size = 0;
    int64_t slot_stride = 0; // floats between consecutive slots
};

// True when the kernel chosen now for head_dim reads each K/V row once for a whole group of
// heads: callers then pass all query heads of a KV head in one call (fewer, larger calls);
// otherwise one head per call parallelises better and costs the same.
bool attention_groups_heads(int head_dim);

// Scratch floats attend_group needs for n_heads heads over n_keys keys.
int64_t attend_group_scratch(int n_heads, int32_t n_keys);

// For h < n_heads (query rows q + h * head_dim, outputs out + h * head_dim), keys j < n_keys at
// slot table[j / block_size] * block_size + j % block_size:
//   out_h = sum_j softmax_j(scale * q_h . K[j]) * V[j]
void attend_group(float* out, const float* q, int n_heads, int head_dim, int32_t n_keys,
                  float scale, const PagedKvView& kv, float* scratch);

} // namespace llmwb::kernels
