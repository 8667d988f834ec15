// AVX2 grouped-query attention of one query row (see attention_avx2.h), any KV element type.
//   scores: per 8-key tile, the K rows are converted once into a stack buffer (f32 rows are
//           read in place); per head, 8 dot-product vectors (q chunk loaded once per column,
//           8 accumulators) are reduced to 8 scores with an hadd tree;
//   softmax: vector exp (range reduction, degree-6 polynomial, 2^n built in the exponent);
//           int8's V row scales multiply the weights (p_j * s_j), the 1 / sum and the layer
//           multiplier are applied to the outputs at the end;
//   values: 32 output columns of up to 3 heads in 12 accumulators; each V row chunk converted
//           in registers once per 3 heads; chunk by chunk of kVChunk keys, so that the passes
//           over a chunk's columns and heads re-read its rows from L1, not from memory (the
//           partial sums wait in `out` between chunks: the same additions in the same order).
// The K and V rows of a paged cache are scattered block by block, which the hardware prefetcher
// follows badly: each is prefetched from the gathered offsets kPrefetchKeys (K) and
// kPrefetchValues (V) keys ahead.
#include "kernels/cpu/attention_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/attention_dispatch.h"
#include "kernels/cpu/attention_kv_load.h"
#include "kernels/cpu/avx2_util.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels {

namespace {

int64_t round8(int64_t n) {
    return (n + 7) & ~int64_t{7};
}

template <KvDtype T> inline __m256 load8(const unsigned char* row, int e) {
    if constexpr (T == KvDtype::F32) {
        return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + e);
    } else if constexpr (T == KvDtype::F16) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * e)));
    } else if constexpr (T == KvDtype::BF16) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * e));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    } else if constexpr (T == KvDtype::Fp8E5M2) {
        const __m128i w =
            _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + e)));
        return _mm256_cvtph_ps(_mm_slli_epi16(w, 8));
    } else if constexpr (T == KvDtype::Fp8E4M3) {
        const __m128i w =
            _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + e)));
        const __m128i h = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(w, _mm_set1_epi16(0x80)), 8),
                                       _mm_slli_epi16(_mm_and_si128(w, _mm_set1_epi16(0x7F)), 7));
        return _mm256_cvtph_ps(h);
    } else {
        const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + e));
        return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
    }
}

// [sum(v[0]), ..., sum(v[7])]
inline __m256 reduce8(const __m256 v[8]) {
    const __m256 t0 = _mm256_hadd_ps(v[0], v[1]), t1 = _mm256_hadd_ps(v[2], v[3]);
    const __m256 t2 = _mm256_hadd_ps(v[4], v[5]), t3 = _mm256_hadd_ps(v[6], v[7]);
    const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
                         _mm256_permute2f128_ps(u0, u1, 0x31));
}

// e^x for x <= 0 (inputs below -87.3 give ~0).
inline __m256 exp_neg(__m256 x) {
    const __m256 ln2_hi = _mm256_set1_ps(0.693359375f), ln2_lo = _mm256_set1_ps(-2.12194440e-4f);
    x = _mm256_max_ps(x, _mm256_set1_ps(-87.3f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, ln2_hi, x);
    r = _mm256_fnmadd_ps(n, ln2_lo, r);
    __m256 p = _mm256_set1_ps(1.0f / 720);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    // n in [-126, 0]: 2^n is a normal float.
    const __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// cap * tanh(x / cap), with tanh|y| = (1 - e^-2|y|) / (1 + e^-2|y|) and the sign of y.
inline __m256 softcap8(__m256 x, float cap, float inv_cap) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 y = _mm256_mul_ps(x, _mm256_set1_ps(inv_cap));
    const __m256 ay = _mm256_andnot_ps(sign, y);
    const __m256 t = exp_neg(_mm256_mul_ps(ay, _mm256_set1_ps(-2.0f)));
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 th = _mm256_div_ps(_mm256_sub_ps(one, t), _mm256_add_ps(one, t));
    return _mm256_mul_ps(_mm256_or_ps(th, _mm256_and_ps(sign, y)), _mm256_set1_ps(cap));
}

// Lanes i < n all ones.
inline __m256i first_n(int64_t n) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<int64_t>(n, 8))), idx);
}

template <int NV, KvDtype T>
void attend(float* out, const float* q, int n_heads, int32_t n_keys, float scale,
            const PagedKvView& kv, float* scratch) {
    constexpr int HD = 8 * NV;
    constexpr bool kRowScales = kv_dtype_has_row_scales(T);
    constexpr int64_t kRowBytes = HD * kv_dtype_elem_bytes(T);
    const int64_t ld = round8(n_keys);
    float* sc = scratch;
    auto* offs = reinterpret_cast<int64_t*>(scratch + static_cast<int64_t>(n_heads) * ld);
    float* ks = scratch + (static_cast<int64_t>(n_heads) + 2) * ld;
    float* vs = ks + ld;
    gather_key_offsets(kv, n_keys, offs, ks, vs);

    // Scores.
    const float kscale = scale * kv_layer_multiplier(T, kv.k_scale);
    alignas(32) float tile[T == KvDtype::F32 ? 1 : 8 * HD];
    for (int32_t j0 = 0; j0 < n_keys; j0 += 8) {
        const int n = std::min(8, n_keys - j0);
        for (int32_t j = j0 + kPrefetchKeys; j < std::min(n_keys, j0 + kPrefetchKeys + 8); ++j)
            prefetch_kv_row<kRowBytes>(kv.k + offs[j]);
        const float* kr[8];
        if constexpr (T == KvDtype::F32) {
            for (int i = 0; i < 8; ++i)
                kr[i] = reinterpret_cast<const float*>(kv.k + offs[j0 + std::min(i, n - 1)]);
        } else {
            for (int i = 0; i < n; ++i) {
                const unsigned char* row = kv.k + offs[j0 + i];
                LLMWB_UNROLL for (int c = 0; c < NV; ++c)
                    _mm256_store_ps(tile + i * HD + 8 * c, load8<T>(row, 8 * c));
            }
            for (int i = 0; i < 8; ++i)
                kr[i] = tile + std::min(i, n - 1) * HD;
        }
        __m256 tscale = _mm256_set1_ps(kscale);
        if constexpr (kRowScales)
            tscale = _mm256_mul_ps(tscale, _mm256_maskload_ps(ks + j0, first_n(n)));
        for (int h = 0; h < n_heads; ++h) {
            const float* qh = q + h * HD;
            __m256 p[8];
            const __m256 q0 = _mm256_loadu_ps(qh);
            LLMWB_UNROLL for (int i = 0; i < 8; ++i) p[i] =
                _mm256_mul_ps(q0, _mm256_loadu_ps(kr[i]));
            LLMWB_UNROLL for (int c = 1; c < NV; ++c) {
                const __m256 qc = _mm256_loadu_ps(qh + 8 * c);
                LLMWB_UNROLL for (int i = 0; i < 8; ++i) p[i] =
                    _mm256_fmadd_ps(qc, _mm256_loadu_ps(kr[i] + 8 * c), p[i]);
            }
            _mm256_maskstore_ps(sc + h * ld + j0, first_n(n), _mm256_mul_ps(reduce8(p), tscale));
        }
    }

    // Softmax numerators in place (times int8's V row scales); the normaliser per head.
    const float vmul = kv_layer_multiplier(T, kv.v_scale);
    float inv[64];
    const float cap = kv.logit_softcap;
    for (int h = 0; h < n_heads; ++h) {
        float* s = sc + h * ld;
        if (cap > 0.0f) // gemma2: soft-cap the scores (lanes past n_keys are scratch)
            for (int32_t j = 0; j < n_keys; j += 8)
                _mm256_storeu_ps(s + j, softcap8(_mm256_loadu_ps(s + j), cap, 1.0f / cap));
        __m256 m = _mm256_set1_ps(-3.0e38f);
        for (int32_t j = 0; j < n_keys; j += 8)
            m = _mm256_blendv_ps(m, _mm256_max_ps(m, _mm256_loadu_ps(s + j)),
                                 _mm256_castsi256_ps(first_n(n_keys - j)));
        const __m256 mx = _mm256_set1_ps(hmax_ps(m));
        __m256 sum = _mm256_setzero_ps();
        for (int32_t j = 0; j < n_keys; j += 8) {
            const __m256 k = _mm256_castsi256_ps(first_n(n_keys - j));
            const __m256 e = _mm256_and_ps(k, exp_neg(_mm256_sub_ps(_mm256_loadu_ps(s + j), mx)));
            sum = _mm256_add_ps(sum, e);
            if constexpr (kRowScales)
                _mm256_storeu_ps(
                    s + j, _mm256_mul_ps(e, _mm256_maskload_ps(vs + j, _mm256_castps_si256(k))));
            else
                _mm256_storeu_ps(s + j, e);
        }
        inv[h] = vmul / hsum_ps(sum);
    }

    // Weighted sum of V: 32 columns x 3 heads at a time, chunk by chunk.
    constexpr int kHeadsPerPass = 3, kCols = NV < 4 ? NV : 4;
    for (int32_t j0 = 0; j0 < n_keys; j0 += kVChunk) {
        const int32_t j1 = std::min(n_keys, j0 + kVChunk);
        const bool last = j1 == n_keys;
        for (int c0 = 0; c0 < NV; c0 += kCols)
            for (int h0 = 0; h0 < n_heads; h0 += kHeadsPerPass) {
                const int nh = std::min(kHeadsPerPass, n_heads - h0);
                const bool first_pass = c0 == 0 && h0 == 0;
                __m256 acc[kHeadsPerPass][kCols];
                LLMWB_UNROLL for (int h = 0; h < kHeadsPerPass; ++h) // (zero past nh: unused)
                    LLMWB_UNROLL for (int c = 0; c < kCols; ++c) acc[h][c] =
                        j0 == 0 || h >= nh ? _mm256_setzero_ps()
                                           : _mm256_loadu_ps(out + (h0 + h) * HD + 8 * (c0 + c));
                for (int32_t j = j0; j < j1; ++j) {
                    if (first_pass && j + kPrefetchValues < n_keys)
                        prefetch_kv_row<kRowBytes>(kv.v + offs[j + kPrefetchValues]);
                    const unsigned char* vr = kv.v + offs[j];
                    __m256 vv[kCols];
                    LLMWB_UNROLL for (int c = 0; c < kCols; ++c) vv[c] = load8<T>(vr, 8 * (c0 + c));
                    LLMWB_UNROLL for (int h = 0; h < kHeadsPerPass; ++h) {
                        if (h >= nh)
                            break;
                        const __m256 pj = _mm256_broadcast_ss(sc + (h0 + h) * ld + j);
                        LLMWB_UNROLL for (int c = 0; c < kCols; ++c) acc[h][c] =
                            _mm256_fmadd_ps(pj, vv[c], acc[h][c]);
                    }
                }
                LLMWB_UNROLL for (int h = 0; h < kHeadsPerPass; ++h) {
                    if (h >= nh)
                        break;
                    const __m256 f = _mm256_set1_ps(inv[h0 + h]);
                    LLMWB_UNROLL for (int c = 0; c < kCols; ++c)
                        _mm256_storeu_ps(out + (h0 + h) * HD + 8 * (c0 + c),
                                         last ? _mm256_mul_ps(acc[h][c], f) : acc[h][c]);
                }
            }
    }
}

} // namespace

bool attend_group_avx2_supported(int head_dim, KvDtype t) {
    (void)t; // every element type
    return attention_simd_head_dim(head_dim);
}

int64_t attend_group_avx2_scratch(int n_heads, int32_t n_keys) {
    return (static_cast<int64_t>(n_heads) + 4) * round8(n_keys);
}

void attend_group_avx2(float* out, const float* q, int n_heads, int head_dim, int32_t n_keys,
                       float scale, const PagedKvView& kv, float* scratch) {
    attend_group_chunks<8>(out, q, n_heads, head_dim, n_keys, kv.layout.dtype,
                           [&](auto cols, auto type, float* o, const float* qq, int nh) {
                               attend<decltype(cols)::value, decltype(type)::value>(
                                   o, qq, nh, n_keys, scale, kv, scratch);
                           });
}

} // namespace llmwb::kernels
