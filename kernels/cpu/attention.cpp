#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/attention_avx2.h"
#include "kernels/cpu/attention_avx512.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/simd.h"

namespace llmwb::kernels {

namespace {

bool use_avx512(int head_dim, KvDtype t) {
    return active_simd_level() == SimdLevel::Avx512 && attend_group_avx512_supported(head_dim, t);
}

bool use_avx2(int head_dim, KvDtype t) {
    return active_simd_level() == SimdLevel::Avx2 && attend_group_avx2_supported(head_dim, t);
}

// Gemma2's attention-logit soft-cap on one head's scores (cap > 0).
void softcap_scores(float* scores, int32_t n_keys, float cap) {
    if (cap > 0.0f)
        softcap(scores, n_keys, cap);
}

// One head over an f32 pool: scores over keys [0, n_keys), softmax, weighted sum of V.
void attend_head_f32(float* out, const float* q, int head_dim, int32_t n_keys, float scale,
                     const PagedKvView& kv, float* scores) {
    for (int32_t j = 0; j < n_keys; ++j)
        scores[j] = scale * dot_f32(q, reinterpret_cast<const float*>(kv.k_row(j)), head_dim);
    softcap_scores(scores, n_keys, kv.logit_softcap);
    softmax(scores, n_keys);
    std::memset(out, 0, sizeof(float) * static_cast<size_t>(head_dim));
    for (int32_t j = 0; j < n_keys; ++j)
        axpy_f32(out, scores[j], reinterpret_cast<const float*>(kv.v_row(j)), head_dim);
}

// One head over a pool of another element type: each stored row is converted to floats in
// chunks of kChunk (kv_load_row_ref), never the whole cache.
constexpr int kChunk = 64;

void attend_head_converted(float* out, const float* q, int head_dim, int32_t n_keys, float scale,
                           const PagedKvView& kv, float* scores) {
    const KvDtype t = kv.layout.dtype;
    const int64_t eb = kv.layout.elem_bytes();
    const bool row_scales = kv_dtype_has_row_scales(t);
    float buf[kChunk];
    for (int32_t j = 0; j < n_keys; ++j) {
        const unsigned char* row = kv.k_row(j);
        const float rs = row_scales ? kv.k_row_scale(j) : 1.0f;
        float dot = 0;
        for (int c = 0; c < head_dim; c += kChunk) {
            const int n = std::min(kChunk, head_dim - c);
            kv_load_row_ref(t, row + c * eb, n, rs, kv.k_scale, buf);
            dot += dot_f32(q + c, buf, n);
        }
        scores[j] = scale * dot;
    }
    softcap_scores(scores, n_keys, kv.logit_softcap);
    softmax(scores, n_keys);
    std::memset(out, 0, sizeof(float) * static_cast<size_t>(head_dim));
    for (int32_t j = 0; j < n_keys; ++j) {
        const unsigned char* row = kv.v_row(j);
        const float rs = row_scales ? kv.v_row_scale(j) : 1.0f;
        for (int c = 0; c < head_dim; c += kChunk) {
            const int n = std::min(kChunk, head_dim - c);
            kv_load_row_ref(t, row + c * eb, n, rs, kv.v_scale, buf);
            axpy_f32(out + c, scores[j], buf, n);
        }
    }
}

void attend_head(float* out, const float* q, int head_dim, int32_t n_keys, float scale,
                 const PagedKvView& kv, float* scores) {
    if (kv.layout.dtype == KvDtype::F32)
        attend_head_f32(out, q, head_dim, n_keys, scale, kv, scores);
    else
        attend_head_converted(out, q, head_dim, n_keys, scale, kv, scores);
}

} // namespace

bool attention_groups_heads(int head_dim, KvDtype t) {
    return use_avx512(head_dim, t) || use_avx2(head_dim, t);
}

int64_t attend_group_scratch(int n_heads, int32_t n_keys) {
    // Only asked of the SIMD code when it may run (it is compiled for that level).
    const SimdLevel level = active_simd_level();
    const int64_t wide = level == SimdLevel::Avx512 ? attend_group_avx512_scratch(n_heads, n_keys)
                         : level == SimdLevel::Avx2 ? attend_group_avx2_scratch(n_heads, n_keys)
                                                    : 0;
    return std::max<int64_t>(wide, n_keys);
}

void attend_group(float* out, const float* q, int n_heads, int head_dim, int32_t n_keys,
                  float scale, const PagedKvView& kv, float* scratch) {
    if (use_avx512(head_dim, kv.layout.dtype)) {
        attend_group_avx512(out, q, n_heads, head_dim, n_keys, scale, kv, scratch);
        return;
    }
    if (use_avx2(head_dim, kv.layout.dtype)) {
        attend_group_avx2(out, q, n_heads, head_dim, n_keys, scale, kv, scratch);
        return;
    }
    for (int h = 0; h < n_heads; ++h)
        attend_head(out + static_cast<int64_t>(h) * head_dim,
                    q + static_cast<int64_t>(h) * head_dim, head_dim, n_keys, scale, kv, scratch);
}

bool attention_multi_row(int head_dim, KvDtype t, int n_heads) {
    return (use_avx512(head_dim, t) || use_avx2(head_dim, t)) && n_heads <= 64;
}

int64_t attend_rows_scratch(int n_rows, int n_heads, int32_t n_keys0) {
    const int64_t one = attend_group_scratch(n_heads, n_keys0 + n_rows - 1);
    const SimdLevel level = active_simd_level();
    const int64_t rows =
        level == SimdLevel::Avx512 ? attend_rows_avx512_scratch(n_rows, n_heads, n_keys0)
        : level == SimdLevel::Avx2 ? attend_rows_avx2_scratch(n_rows, n_heads, n_keys0)
                                   : 0;
    return std::max(one, rows);
}

void attend_rows(float* out, int64_t out_stride, const float* q, int64_t q_stride, int n_rows,
                 int n_heads, int head_dim, int32_t n_keys0, float scale, const PagedKvView& kv,
                 float* scratch) {
    if (n_rows > 1 && n_rows <= kAttendMaxRows && n_heads <= 64) {
        if (use_avx512(head_dim, kv.layout.dtype)) {
            attend_rows_avx512(out, out_stride, q, q_stride, n_rows, n_heads, head_dim, n_keys0,
                               scale, kv, scratch);
            return;
        }
        if (use_avx2(head_dim, kv.layout.dtype)) {
            attend_rows_avx2(out, out_stride, q, q_stride, n_rows, n_heads, head_dim, n_keys0,
                             scale, kv, scratch);
            return;
        }
    }
    for (int r = 0; r < n_rows; ++r)
        attend_group(out + r * out_stride, q + r * q_stride, n_heads, head_dim, n_keys0 + r, scale,
                     kv, scratch);
}

} // namespace llmwb::kernels
