// AVX-512 grouped-query attention of one query row (see attention_avx512.h).
//   scores: per 16 keys and head, the head_dim/16 products of q_h and each K row are summed into
//           one vector per key, and the 16 vectors are reduced to one vector of 16 scores with a
//           shuffle tree (no per-key horizontal sum);
//   softmax: vector exp (range reduction to [-ln2/2, ln2/2], degree-6 polynomial, scalef);
//           the 1 / sum is applied to the outputs at the end;
//   values: each V row is loaded and multiplied into the accumulators of up to 4 heads
//           (head_dim 32/64), 2 heads (96/128) or 1 (256), chunk by chunk of kVChunk keys: the
//           passes over a chunk's heads re-read its rows from L1, not from memory; the partial
//           sums wait in `out` between chunks (the same additions in the same order as one pass).
// The K and V rows of a paged cache are scattered block by block, which the hardware prefetcher
// follows badly: each is prefetched from the gathered offsets kPrefetchKeys (K) and
// kPrefetchValues (V) keys ahead.
// Any KV element type (kv_format.h): each row is converted in registers as it is loaded (f16 by
// vcvtph2ps, bf16 by a 16-bit shift, fp8 e5m2 as the top byte of an fp16, fp8 e4m3 re-packed
// into an fp16 whose exponent bias is 8 short, int8 by widening) — for the scores a 16-key tile
// is converted once into a small stack buffer shared by all heads. The per-layer factor (fp8
// scale, e4m3's 2^8) is folded into the score scale (K) and the softmax normaliser (V); int8's
// per-row scales multiply the 16 scores of a tile (K) and the softmax weights p_j (V).
#include "kernels/cpu/attention_avx512.h"

#include <algorithm>

#include "kernels/cpu/attention_dispatch.h"
#include "kernels/cpu/attention_kv_load.h"
#include "kernels/cpu/avx512_util.h"

#define LLMWB_UNROLL _Pragma("GCC unroll 16")

namespace llmwb::kernels {

namespace {

int64_t round16(int64_t n) {
    return (n + 15) & ~int64_t{15};
}

// [sum(v[0]), sum(v[1]), ..., sum(v[15])]
inline __m512 reduce16(const __m512 v[16]) {
    __m512 a[8], b[4];
    LLMWB_UNROLL for (int i = 0; i < 8; ++i) a[i] = _mm512_add_ps(
        _mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
    // a[i], per 128-bit lane: [v2i.0+v2i.2, v2i+1.0+v2i+1.2, v2i.1+v2i.3, v2i+1.1+v2i+1.3]
    LLMWB_UNROLL for (int i = 0; i < 4; ++i) b[i] =
        _mm512_add_ps(_mm512_shuffle_ps(a[2 * i], a[2 * i + 1], 0x44),
                      _mm512_shuffle_ps(a[2 * i], a[2 * i + 1], 0xEE));
    // b[i], per 128-bit lane L: the lane-L partial sums of v[4i .. 4i + 3]
    const __m512 c0 = _mm512_add_ps(_mm512_shuffle_f32x4(b[0], b[1], 0x44),
                                    _mm512_shuffle_f32x4(b[0], b[1], 0xEE));
    const __m512 c1 = _mm512_add_ps(_mm512_shuffle_f32x4(b[2], b[3], 0x44),
                                    _mm512_shuffle_f32x4(b[2], b[3], 0xEE));
    return _mm512_add_ps(_mm512_shuffle_f32x4(c0, c1, 0x88), _mm512_shuffle_f32x4(c0, c1, 0xDD));
}

// e^x for x <= 0 (inputs below -87.3 give 0).
inline __m512 exp_neg(__m512 x) {
    const __m512 ln2_hi = _mm512_set1_ps(0.693359375f), ln2_lo = _mm512_set1_ps(-2.12194440e-4f);
    x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, ln2_hi, x);
    r = _mm512_fnmadd_ps(n, ln2_lo, r);
    __m512 p = _mm512_set1_ps(1.0f / 720);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

// cap * tanh(x / cap), with tanh|y| = (1 - e^-2|y|) / (1 + e^-2|y|) and the sign of y.
inline __m512 softcap16(__m512 x, float cap, float inv_cap) {
    const __m512 y = _mm512_mul_ps(x, _mm512_set1_ps(inv_cap));
    const __m512 ay = _mm512_abs_ps(y);
    const __m512 t = exp_neg(_mm512_mul_ps(ay, _mm512_set1_ps(-2.0f)));
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 th = _mm512_div_ps(_mm512_sub_ps(one, t), _mm512_add_ps(one, t));
    const __m512i sign = _mm512_and_si512(_mm512_castps_si512(y), _mm512_set1_epi32(INT32_MIN));
    return _mm512_mul_ps(_mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(th), sign)),
                         _mm512_set1_ps(cap));
}

inline __mmask16 first_n(int64_t n) {
    return static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << n) - 1);
}

// 16 raw values of a stored row from element e on, as floats (real value / the layer
// multiplier, before int8's row scale).
template <KvDtype T> inline __m512 load16(const unsigned char* row, int e) {
    if constexpr (T == KvDtype::F32) {
        return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + e);
    } else if constexpr (T == KvDtype::F16) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * e)));
    } else if constexpr (T == KvDtype::BF16) {
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * e));
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else if constexpr (T == KvDtype::Fp8E5M2) {
        const __m256i w =
            _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + e)));
        return _mm512_cvtph_ps(_mm256_slli_epi16(w, 8));
    } else if constexpr (T == KvDtype::Fp8E4M3) {
        const __m256i w =
            _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + e)));
        const __m256i h =
            _mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(w, _mm256_set1_epi16(0x80)), 8),
                            _mm256_slli_epi16(_mm256_and_si256(w, _mm256_set1_epi16(0x7F)), 7));
        return _mm512_cvtph_ps(h);
    } else {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + e));
        return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b));
    }
}

template <int NV, KvDtype T>
void attend(float* out, const float* q, int n_heads, int32_t n_keys, float scale,
            const PagedKvView& kv, float* scratch) {
    constexpr int HD = 16 * NV;
    constexpr int kHeadsPerPass = NV <= 4 ? 4 : NV <= 8 ? 2 : 1;
    constexpr bool kRowScales = kv_dtype_has_row_scales(T);
    constexpr int64_t kRowBytes = HD * kv_dtype_elem_bytes(T);
    const int64_t ld = round16(n_keys);
    float* sc = scratch;
    auto* offs = reinterpret_cast<int64_t*>(scratch + static_cast<int64_t>(n_heads) * ld);
    float* ks = scratch + (static_cast<int64_t>(n_heads) + 2) * ld; // int8 row scales
    float* vs = ks + ld;
    gather_key_offsets(kv, n_keys, offs, ks, vs);
    const unsigned char* kbase = kv.k;
    const unsigned char* vbase = kv.v;

    // Scores: the tile's K rows converted (f32: copied) once for all heads into a buffer at
    // fixed offsets (16 row pointers into the pool would not stay in registers).
    const __m512 vscale = _mm512_set1_ps(scale * kv_layer_multiplier(T, kv.k_scale));
    alignas(64) float tile[16 * HD];
    for (int32_t j0 = 0; j0 < n_keys; j0 += 16) {
        const int n = std::min(16, n_keys - j0);
        for (int32_t j = j0 + kPrefetchKeys; j < std::min(n_keys, j0 + kPrefetchKeys + 16); ++j)
            prefetch_kv_row<kRowBytes>(kbase + offs[j]);
        for (int i = 0; i < n; ++i) {
            const unsigned char* row = kbase + offs[j0 + i];
            LLMWB_UNROLL for (int c = 0; c < NV; ++c)
                _mm512_store_ps(tile + i * HD + 16 * c, load16<T>(row, 16 * c));
        }
        const float* kr[16];
        for (int i = 0; i < 16; ++i)
            kr[i] = tile + std::min(i, n - 1) * HD;
        const __m512 tscale =
            kRowScales ? _mm512_mul_ps(vscale, _mm512_maskz_loadu_ps(first_n(n), ks + j0)) : vscale;
        for (int h = 0; h < n_heads; ++h) {
            const float* qh = q + h * HD;
            // Column by column (one q vector live; 16 accumulators), the same products in the
            // same order per key as a key-by-key loop: registers suffice up to head_dim 256.
            __m512 p[16];
            const __m512 q0 = _mm512_loadu_ps(qh);
            LLMWB_UNROLL for (int i = 0; i < 16; ++i) p[i] =
                _mm512_mul_ps(q0, _mm512_loadu_ps(kr[i]));
            LLMWB_UNROLL for (int c = 1; c < NV; ++c) {
                const __m512 qc = _mm512_loadu_ps(qh + 16 * c);
                LLMWB_UNROLL for (int i = 0; i < 16; ++i) p[i] =
                    _mm512_fmadd_ps(qc, _mm512_loadu_ps(kr[i] + 16 * c), p[i]);
            }
            _mm512_mask_storeu_ps(sc + h * ld + j0, first_n(n), _mm512_mul_ps(reduce16(p), tscale));
        }
    }

    // Softmax numerators in place (times int8's V row scales: p_j * s_j); 1 / sum per head,
    // times the V layer multiplier.
    const float vmul = kv_layer_multiplier(T, kv.v_scale);
    float inv[64];
    const float cap = kv.logit_softcap;
    for (int h = 0; h < n_heads; ++h) {
        float* s = sc + h * ld;
        if (cap > 0.0f) // gemma2: soft-cap the scores
            for (int32_t j = 0; j < n_keys; j += 16) {
                const __mmask16 k = first_n(n_keys - j);
                _mm512_mask_storeu_ps(s + j, k,
                                      softcap16(_mm512_maskz_loadu_ps(k, s + j), cap, 1.0f / cap));
            }
        __m512 m = _mm512_set1_ps(-3.0e38f);
        for (int32_t j = 0; j < n_keys; j += 16)
            m = _mm512_mask_max_ps(m, first_n(n_keys - j), m, _mm512_loadu_ps(s + j));
        const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(m));
        __m512 sum = _mm512_setzero_ps();
        for (int32_t j = 0; j < n_keys; j += 16) {
            const __mmask16 k = first_n(n_keys - j);
            const __m512 e =
                _mm512_maskz_mov_ps(k, exp_neg(_mm512_sub_ps(_mm512_loadu_ps(s + j), mx)));
            sum = _mm512_add_ps(sum, e);
            if constexpr (kRowScales)
                _mm512_storeu_ps(s + j, _mm512_mul_ps(e, _mm512_maskz_loadu_ps(k, vs + j)));
            else
                _mm512_storeu_ps(s + j, e);
        }
        inv[h] = vmul / _mm512_reduce_add_ps(sum);
    }

    // Weighted sum of V, chunk by chunk.
    for (int32_t j0 = 0; j0 < n_keys; j0 += kVChunk) {
        const int32_t j1 = std::min(n_keys, j0 + kVChunk);
        const bool last = j1 == n_keys;
        for (int h0 = 0; h0 < n_heads; h0 += kHeadsPerPass) {
            const int nh = std::min(kHeadsPerPass, n_heads - h0);
            __m512 acc[kHeadsPerPass][NV];
            LLMWB_UNROLL for (int h = 0; h < kHeadsPerPass; ++h) // (zero past nh: unused)
                LLMWB_UNROLL for (int c = 0; c < NV; ++c) acc[h][c] =
                    j0 == 0 || h >= nh ? _mm512_setzero_ps()
                                       : _mm512_loadu_ps(out + (h0 + h) * HD + 16 * c);
            for (int32_t j = j0; j < j1; ++j) {
                if (h0 == 0 && j + kPrefetchValues < n_keys)
                    prefetch_kv_row<kRowBytes>(vbase + offs[j + kPrefetchValues]);
                const unsigned char* vr = vbase + offs[j];
                __m512 vv[NV];
                LLMWB_UNROLL for (int c = 0; c < NV; ++c) vv[c] = load16<T>(vr, 16 * c);
                LLMWB_UNROLL for (int h = 0; h < kHeadsPerPass; ++h) {
                    if (h >= nh)
                        break;
                    const __m512 pj = _mm512_set1_ps(sc[(h0 + h) * ld + j]);
                    LLMWB_UNROLL for (int c = 0; c < NV; ++c) acc[h][c] =
                        _mm512_fmadd_ps(pj, vv[c], acc[h][c]);
                }
            }
            LLMWB_UNROLL for (int h = 0; h < kHeadsPerPass; ++h) {
                if (h >= nh)
                    break;
                const __m512 f = _mm512_set1_ps(inv[h0 + h]);
                LLMWB_UNROLL for (int c = 0; c < NV; ++c) _mm512_storeu_ps(
                    out + (h0 + h) * HD + 16 * c, last ? _mm512_mul_ps(acc[h][c], f) : acc[h][c]);
            }
        }
    }
}

} // namespace

bool attend_group_avx512_supported(int head_dim, KvDtype t) {
    (void)t; // every element type
    return attention_simd_head_dim(head_dim);
}

int64_t attend_group_avx512_scratch(int n_heads, int32_t n_keys) {
    return (static_cast<int64_t>(n_heads) + 4) * round16(n_keys);
}

void attend_group_avx512(float* out, const float* q, int n_heads, int head_dim, int32_t n_keys,
                         float scale, const PagedKvView& kv, float* scratch) {
    attend_group_chunks<16>(out, q, n_heads, head_dim, n_keys, kv.layout.dtype,
                            [&](auto cols, auto type, float* o, const float* qq, int nh) {
                                attend<decltype(cols)::value, decltype(type)::value>(
                                    o, qq, nh, n_keys, scale, kv, scratch);
                            });
}

} // namespace llmwb::kernels
