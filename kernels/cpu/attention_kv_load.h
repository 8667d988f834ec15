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

// Paged K and V rows are scattered block by block, which the hardware prefetcher follows badly:
// the kernels prefetch each row from the gathered offsets kPrefetchKeys (K) and
// kPrefetchValues (V) keys ahead, and sum V kVChunk keys at a time (a chunk's
// rows stay in L1 for the passes over its heads and columns). Measured on Zen 5 (AVX-512 and
// AVX2): 16 / 32 / 64 / 128 keys ahead within noise of each other; chunks of 64 slower than 128.
constexpr int32_t kPrefetchKeys = 32;
constexpr int32_t kPrefetchValues = 16;
constexpr int32_t kVChunk = 128;

// Prefetches the cache lines of a stored row of kRowBytes bytes at p.
template <int64_t kRowBytes> inline void prefetch_kv_row(const unsigned char* p) {
    for (int64_t l = 0; l < kRowBytes; l += 64)
        __builtin_prefetch(p + l, 0, 3);
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

// The (row, head) pairs of a call over n_rows query rows (attend_rows): pair p = r * n_heads + h
// has keys[p] = n_keys0 + r keys (never fewer than the pair before), its query and output rows.
struct AttendPairs {
    static constexpr int kMax = kAttendMaxRows * 64; // (attend_group_chunks: at most 64 heads)
    int32_t keys[kMax];
    const float* q[kMax];
    float* out[kMax];
    AttendPairs(float* out_rows, int64_t out_stride, const float* q_rows, int64_t q_stride,
                int n_rows, int n_heads, int head_dim, int32_t n_keys0) {
        for (int r = 0, p = 0; r < n_rows; ++r)
            for (int h = 0; h < n_heads; ++h, ++p) {
                keys[p] = n_keys0 + r;
                q[p] = q_rows + r * q_stride + static_cast<int64_t>(h) * head_dim;
                out[p] = out_rows + r * out_stride + static_cast<int64_t>(h) * head_dim;
            }
    }
};

} // namespace llmwb::kernels
