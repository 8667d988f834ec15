// The KV write op: each token's K and V rows into one layer's paged pools, in any KvDtype, with
// the bytes of kernels/cpu/kv_format.h's kv_store_row_ref.
//
// One warp per (token, kv head, K or V) row: lane i converts elements i, i + 32, ...; for int8
// the row's largest |x| is a warp reduction, and lane 0 stores the row's scale after the
// block's values.
#include <cuda_fp16.h>

#include "kernels/cuda/ops/common.cuh"
#include "kernels/cuda/ops/kv_cache.cuh"

namespace llmwb::cuda {

using detail::check_launch;
using detail::invalid;
using detail::KvGeom;

namespace {

constexpr int kWarps = 4; // warps (rows) per block

template <KvDtype T>
__global__ void __launch_bounds__(kWarps * 32)
    kv_write_kernel(unsigned char* kc, unsigned char* vc, const float* k, const float* v,
                    const int64_t* slots, int64_t n, KvGeom g, float k_inv, float v_inv) {
    const int lane = threadIdx.x % 32;
    const int64_t rows = n * 2 * g.kv_heads;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * kWarps;
    const int D = g.head_dim;
    for (int64_t r = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; r < rows;
         r += stride) { // r is uniform over the warp
        const int64_t t = r / (2 * g.kv_heads);
        const int32_t hv = static_cast<int32_t>(r % (2 * g.kv_heads));
        const bool is_v = hv >= g.kv_heads;
        const int32_t h = is_v ? hv - g.kv_heads : hv;
        const int64_t slot = slots[t];
        if (slot < 0)
            continue; // a padding token: the whole warp skips it
        const float* x = (is_v ? v : k) + (t * g.kv_heads + h) * D;
        unsigned char* pool = is_v ? vc : kc;
        const int64_t block = slot / g.block_size;
        const int32_t o = static_cast<int32_t>(slot % g.block_size);
        unsigned char* dst = pool + block * g.block_bytes + static_cast<int64_t>(o) * g.slot_bytes +
                             static_cast<int64_t>(h) * g.head_bytes;
        if constexpr (T == KvDtype::F32) {
            for (int d = lane; d < D; d += 32)
                reinterpret_cast<float*>(dst)[d] = x[d];
        } else if constexpr (T == KvDtype::F16) {
            for (int d = lane; d < D; d += 32)
                reinterpret_cast<uint16_t*>(dst)[d] = detail::encode_f16(x[d]);
        } else if constexpr (T == KvDtype::BF16) {
            for (int d = lane; d < D; d += 32)
                reinterpret_cast<uint16_t*>(dst)[d] = detail::encode_bf16(x[d]);
        } else if constexpr (T == KvDtype::Fp8E4M3) {
            const float inv = is_v ? v_inv : k_inv;
            for (int d = lane; d < D; d += 32)
                dst[d] = detail::encode_fp8_e4m3(x[d] * inv);
        } else if constexpr (T == KvDtype::Fp8E5M2) {
            const float inv = is_v ? v_inv : k_inv;
            for (int d = lane; d < D; d += 32)
                dst[d] = detail::encode_fp8_e5m2(x[d] * inv);
        } else {
            float amax = 0.0f; // fmaxf ignores NaN, as the reference's std::max does
            for (int d = lane; d < D; d += 32)
                amax = fmaxf(amax, fabsf(x[d]));
            amax = detail::warp_max(amax);
            const bool zero = !(amax > 0.0f) || amax == INFINITY;
            const float inv = zero ? 0.0f : 127.0f / amax;
            for (int d = lane; d < D; d += 32) {
                const float q = zero ? 0.0f : fminf(fmaxf(rintf(x[d] * inv), -127.0f), 127.0f);
                dst[d] = static_cast<unsigned char>(static_cast<int8_t>(q));
            }
            if (lane == 0)
                *reinterpret_cast<float*>(pool + block * g.block_bytes + g.values_bytes +
                                          4 * (static_cast<int64_t>(o) * g.kv_heads + h)) =
                    zero ? 0.0f : amax / 127.0f;
        }
    }
}

template <KvDtype T>
void launch(unsigned grid, void* kc, void* vc, const float* k, const float* v, const int64_t* slots,
            int64_t n, const KvGeom& g, float k_inv, float v_inv, cudaStream_t stream) {
    LLMWB_LAUNCH(grid, kWarps * 32, 0, stream, kv_write_kernel<T>)
    (static_cast<unsigned char*>(kc), static_cast<unsigned char*>(vc), k, v, slots, n, g, k_inv,
     v_inv);
}

} // namespace

OpStatus kv_write(void* k_cache, void* v_cache, const float* k, const float* v,
                  const int64_t* slot_mapping, int64_t n, const KvLayout& layout, float k_inv_scale,
                  float v_inv_scale, cudaStream_t stream) {
    if (n < 0 || layout.block_size <= 0 || layout.num_kv_heads <= 0 || layout.head_dim <= 0)
        return invalid("kv_write", "bad size");
    if (reinterpret_cast<uintptr_t>(k_cache) % 16 != 0 ||
        reinterpret_cast<uintptr_t>(v_cache) % 16 != 0 || layout.block_bytes() % 4 != 0)
        return invalid("kv_write", "KV pools must be 16-byte aligned (blocks 4-byte)");
    if (n == 0)
        return OpStatus::Ok;
    const KvGeom g = detail::kv_geom(layout);
    const unsigned blocks = detail::grid_for(n * 2 * layout.num_kv_heads, kWarps); // rows/block
    switch (layout.dtype) {
    case KvDtype::F32:
        launch<KvDtype::F32>(blocks, k_cache, v_cache, k, v, slot_mapping, n, g, k_inv_scale,
                             v_inv_scale, stream);
        break;
    case KvDtype::F16:
        launch<KvDtype::F16>(blocks, k_cache, v_cache, k, v, slot_mapping, n, g, k_inv_scale,
                             v_inv_scale, stream);
        break;
    case KvDtype::BF16:
        launch<KvDtype::BF16>(blocks, k_cache, v_cache, k, v, slot_mapping, n, g, k_inv_scale,
                              v_inv_scale, stream);
        break;
    case KvDtype::Fp8E4M3:
        launch<KvDtype::Fp8E4M3>(blocks, k_cache, v_cache, k, v, slot_mapping, n, g, k_inv_scale,
                                 v_inv_scale, stream);
        break;
    case KvDtype::Fp8E5M2:
        launch<KvDtype::Fp8E5M2>(blocks, k_cache, v_cache, k, v, slot_mapping, n, g, k_inv_scale,
                                 v_inv_scale, stream);
        break;
    case KvDtype::Int8:
        launch<KvDtype::Int8>(blocks, k_cache, v_cache, k, v, slot_mapping, n, g, k_inv_scale,
                              v_inv_scale, stream);
        break;
    default:
        return invalid("kv_write", "unknown KV dtype");
    }
    return check_launch("kv_write");
}

} // namespace llmwb::cuda
