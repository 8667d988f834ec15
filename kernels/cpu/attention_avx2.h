// AVX2 (+FMA, F16C) attention of one query row for the heads that share one KV head
// (grouped-query), over a paged KV cache of any element type. Chosen by kernels::attend_group
// (attention.h) when the active SIMD level is AVX2 and attend_group_avx2_supported(head_dim).
#pragma once

#include <cstdint>

#include "kernels/cpu/attention.h"

namespace llmwb::kernels {

// head_dim 32, 64, 96 or 128, any element type.
bool attend_group_avx2_supported(int head_dim, KvDtype t);

// Scratch floats attend_group_avx2 needs for n_heads heads over n_keys keys.
int64_t attend_group_avx2_scratch(int n_heads, int32_t n_keys);

// As attend_group_avx512 (attention_avx512.h): each K row is converted once per 8-key tile for
// all heads; each V row once per 3 heads.
void attend_group_avx2(float* out, const float* q, int n_heads, int head_dim, int32_t n_keys,
                       float scale, const PagedKvView& kv, float* scratch);

// As attend_rows (attention.h) for 1 <= n_rows <= kAttendMaxRows and n_heads <= 64; each row's
// output is bit for bit attend_group_avx2's for that row alone.
int64_t attend_rows_avx2_scratch(int n_rows, int n_heads, int32_t n_keys0);
void attend_rows_avx2(float* out, int64_t out_stride, const float* q, int64_t q_stride, int n_rows,
                      int n_heads, int head_dim, int32_t n_keys0, float scale,
                      const PagedKvView& kv, float* scratch);

} // namespace llmwb::kernels
