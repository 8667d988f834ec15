// The KV write op of the CPU backend: a step's new K (or V) rows stored into the paged pool
// through the slot mapping, converted to the pool's element type (kv_format.h), with run-time
// SIMD dispatch like matmul's. Every level's output is byte-identical to kv_store_row_ref.
#pragma once

#include <cstdint>

#include "kernels/cpu/kv_format.h"

namespace llmwb::kernels {

// For i < n: token row i (num_kv_heads * head_dim floats at rows + i * row_stride) goes to slot
// slots[i] (block slots[i] / block_size, offset slots[i] % block_size) of the pool at `pool`
// (one layer's K or V, layout L), one stored row (and int8 scale) per KV head. inv_scale:
// 1 / the layer's fp8 scale (ignored by the other types).
void kv_write(void* pool, const KvLayout& L, const float* rows, int64_t row_stride,
              const int64_t* slots, int64_t n, float inv_scale);

// The portable implementation (kv_store_row_ref per head), for the tests.
void kv_write_ref(void* pool, const KvLayout& L, const float* rows, int64_t row_stride,
                  const int64_t* slots, int64_t n, float inv_scale);

} // namespace llmwb::kernels
