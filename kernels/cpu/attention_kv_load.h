// What the SIMD attention kernels share about reading a KV pool of any element type: the
// per-layer multiplier folded into the score scale (K) or the softmax normaliser (V), and the
// per-key byte offsets / int8 row scales gathered once per call. Plain C++ (no intrinsics).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/attention.h"

namespace llmwb::kernels {

// The vector loaders convert a stored element to a float that is the real value divided by
// this: fp8 e4m3 is widened through fp16 with its exponent bias 8 short (so 2^-8 of the
// value), fp8 carries the layer's scale; int8's row scale is applied separately per key.
inline float kv_layer_multiplier(KvDtype t, float layer_scale) {
    switch (t) {
    case KvDtype::Fp8E4M3:
        return layer_scale * 256.0f;
    case KvDtype::Fp8E5M2:
        return layer_scale;
    default:
        return 1.0f;
    }
}

// offs[j]: byte offset of key j's row (this KV head) in either pool; for int8 also the row
// scales ks[j] (K) and vs[j] (V).
inline void gather_key_offsets(const PagedKvView& kv, int32_t n_keys, int64_t* offs, float* ks,
                               float* vs) {
    const KvLayout& L = kv.layout;
    const int32_t bs = L.block_size;
    const bool scales = kv_dtype_has_row_scales(L.dtype);
    // Block by block from the view's first key (key_base may start mid-block).
    for (int32_t j0 = 0; j0 < n_keys;) {
        const int32_t i = kv.key_base + j0;
        const int32_t o0 = i % bs;
        const int32_t n = std::min(bs - o0, n_keys - j0);
        const int64_t block = kv.table[i / bs];
        for (int32_t o = 0; o < n; ++o)
            offs[j0 + o] = L.value_offset(block, o0 + o, kv.kv_head);
        if (scales) // (unaligned when head_dim * kv heads * block size is not a multiple of 4)
            for (int32_t o = 0; o < n; ++o) {
                const int64_t so = L.scale_offset(block, o0 + o, kv.kv_head);
                std::memcpy(ks + j0 + o, kv.k + so, sizeof(float));
                std::memcpy(vs + j0 + o, kv.v + so, sizeof(float));
            }
        j0 += n;
    }
}

} // namespace llmwb::kernels
