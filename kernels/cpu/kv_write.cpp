#include "kernels/cpu/kv_write.h"

#include "kernels/cpu/kv_write_simd.h"
#include "kernels/cpu/simd.h"

namespace llmwb::kernels {

namespace {

using StoreRow = void (*)(KvDtype, const float*, int32_t, void*, float*, float);

void write_rows(StoreRow store, void* pool, const KvLayout& L, const float* rows,
                int64_t row_stride, const int64_t* slots, int64_t n, float inv_scale) {
    auto* base = static_cast<unsigned char*>(pool);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t block = slots[i] / L.block_size;
        const auto o = static_cast<int32_t>(slots[i] % L.block_size);
        for (int32_t h = 0; h < L.num_kv_heads; ++h) {
            float* scale = L.scales_bytes() > 0
                               ? reinterpret_cast<float*>(base + L.scale_offset(block, o, h))
                               : nullptr;
            store(L.dtype, rows + i * row_stride + static_cast<int64_t>(h) * L.head_dim, L.head_dim,
                  base + L.value_offset(block, o, h), scale, inv_scale);
        }
    }
}

} // namespace

void kv_write_ref(void* pool, const KvLayout& L, const float* rows, int64_t row_stride,
                  const int64_t* slots, int64_t n, float inv_scale) {
    write_rows(&kv_store_row_ref, pool, L, rows, row_stride, slots, n, inv_scale);
}

void kv_write(void* pool, const KvLayout& L, const float* rows, int64_t row_stride,
              const int64_t* slots, int64_t n, float inv_scale) {
    StoreRow store = &kv_store_row_ref;
    if (L.dtype != KvDtype::F32) { // f32 is a memcpy at every level
        switch (active_simd_level()) {
        case SimdLevel::Avx512:
            store = &kv_store_row_avx512;
            break;
        case SimdLevel::Avx2:
            store = &kv_store_row_avx2;
            break;
        case SimdLevel::Scalar:
            break;
        }
    }
    write_rows(store, pool, L, rows, row_stride, slots, n, inv_scale);
}

} // namespace llmwb::kernels
