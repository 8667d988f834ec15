// AVX-512 attention of one query row for the heads that share one KV head (grouped-query),
// over a paged KV cache. Chosen by kernels::attend_group (attention.h) when the active SIMD
// level is AVX-512 and attend_group_avx512_supported(head_dim).
#pragma once

#include <cstdint>

#include "kernels/cpu/attention.h"

namespace llmwb::kernels {

// head_dim 32, 64, 96 or 128, over a pool of any element type.
bool attend_group_avx512_supported(int head_dim, KvDtype t);

// Scratch floats attend_group_avx512 needs for n_heads heads over n_keys keys.
int64_t attend_group_avx512_scratch(int n_heads, int32_t n_keys);

// For h < n_heads (query rows q + h * head_dim, outputs out + h * head_dim), keys j < n_keys at
// slot table[j / block_size] * block_size + j % block_size:
//   out_h = sum_j softmax_j(scale * q_h . K[j]) * V[j]
// Each K and V row is loaded once for all the heads of the group.
void attend_group_avx512(float* out, const float* q, int n_heads, int head_dim, int32_t n_keys,
                         float scale, const PagedKvView& kv, float* scratch);

// As attend_rows (attention.h) for 1 <= n_rows <= kAttendMaxRows and n_heads <= 64: the K tiles
// are transposed once and shared by every (row, head) pair, the V rows of a chunk by all pairs;
// each row's output is bit for bit attend_group_avx512's for that row alone.
int64_t attend_rows_avx512_scratch(int n_rows, int n_heads, int32_t n_keys0);
void attend_rows_avx512(float* out, int64_t out_stride, const float* q, int64_t q_stride,
                        int n_rows, int n_heads, int head_dim, int32_t n_keys0, float scale,
                        const PagedKvView& kv, float* scratch);

} // namespace llmwb::kernels
