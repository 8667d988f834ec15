#include "kernels/cpu/kv_write.h"

namespace llmwb::kernels {

void kv_write_ref(void* pool, const KvLayout& L, const float* rows, int64_t row_stride,
                  const int64_t* slots, int64_t n, float inv_scale) {
    auto* base = static_cast<unsigned char*>(pool);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t block = slots[i] / L.block_size;
        const auto o = static_cast<int32_t>(slots[i] % L.block_size);
        for (int32_t h = 0; h < L.num_kv_heads; ++h) {
            float* scale = L.scales_bytes() > 0
                               ? reinterpret_cast<float*>(base + L.scale_offset(block, o, h))
                               : nullptr;
            kv_store_row_ref(L.dtype, rows + i * row_stride + static_cast<int64_t>(h) * L.head_dim,
                             L.head_dim, base + L.value_offset(block, o, h), scale, inv_scale);
        }
    }
}

void kv_write(void* pool, const KvLayout& L, const float* rows, int64_t row_stride,
              const int64_t* slots, int64_t n, float inv_scale) {
    kv_write_ref(pool, L, rows, row_stride, slots, n, inv_scale);
}

} // namespace llmwb::kernels
