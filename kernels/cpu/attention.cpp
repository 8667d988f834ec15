#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/attention_avx512.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/simd.h"

namespace llmwb::kernels {

namespace {

bool use_avx512(int head_dim) {
    return active_simd_level() == SimdLevel::Avx512 && attend_group_avx512_supported(head_dim);
}

// One head: scores over keys [0, n_keys), softmax, weighted sum of V.
void attend_head(float* out, const float* q, int head_dim, int32_t n_keys, float scale,
                 const PagedKvView& kv, float* scores) {
    for (int32_t j0 = 0; j0 < n_keys; j0 += kv.block_size) {
        const int64_t slot0 = static_cast<int64_t>(kv.table[j0 / kv.block_size]) * kv.block_size;
        const int32_t n = std::min(kv.block_size, n_keys - j0);
        for (int32_t o = 0; o < n; ++o)
            scores[j0 + o] = scale * dot_f32(q, kv.k + (slot0 + o) * kv.slot_stride, head_dim);
    }
    softmax(scores, n_keys);
    std::memset(out, 0, sizeof(float) * static_cast<size_t>(head_dim));
    for (int32_t j0 = 0; j0 < n_keys; j0 += kv.block_size) {
        const int64_t slot0 = static_cast<int64_t>(kv.table[j0 / kv.block_size]) * kv.block_size;
        const int32_t n = std::min(kv.block_size, n_keys - j0);
        for (int32_t o = 0; o < n; ++o)
            axpy_f32(out, scores[j0 + o], kv.v + (slot0 + o) * kv.slot_stride, head_dim);
    }
}

} // namespace

bool attention_groups_heads(int head_dim) {
    return use_avx512(head_dim);
}

int64_t attend_group_scratch(int n_heads, int32_t n_keys) {
    // Only asked of the AVX-512 code when it may run (it is compiled for AVX-512).
    const int64_t wide =
        active_simd_level() == SimdLevel::Avx512 ? attend_group_avx512_scratch(n_heads, n_keys) : 0;
    return std::max<int64_t>(wide, n_keys);
}

void attend_group(float* out, const float* q, int n_heads, int head_dim, int32_t n_keys,
                  float scale, const PagedKvView& kv, float* scratch) {
    if (use_avx512(head_dim)) {
        attend_group_avx512(out, q, n_heads, head_dim, n_keys, scale, kv, scratch);
        return;
    }
    for (int h = 0; h < n_heads; ++h)
        attend_head(out + static_cast<int64_t>(h) * head_dim,
                    q + static_cast<int64_t>(h) * head_dim, head_dim, n_keys, scale, kv, scratch);
}

} // namespace llmwb::kernels
