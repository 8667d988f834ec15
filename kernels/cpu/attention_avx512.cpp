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
    return static_cast<__mmask16>(n >= 16 ? 0xFFFF : n <= 0 ? 0 : (1u << n) - 1);
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

// 16x16 transpose: t[c][i] = r[i][c] (r: 16 rows of 16 floats; t may not alias r).
inline void transpose16(const __m512 r[16], float* t) {
    __m512 a[16], b[16];
    LLMWB_UNROLL for (int i = 0; i < 8; ++i) {
        a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // b[4i + k], per 128-bit lane L: column 4L + k of rows 4i .. 4i + 3.
    LLMWB_UNROLL for (int i = 0; i < 4; ++i) {
        const __m512d x0 = _mm512_castps_pd(a[4 * i]), x1 = _mm512_castps_pd(a[4 * i + 1]);
        const __m512d x2 = _mm512_castps_pd(a[4 * i + 2]), x3 = _mm512_castps_pd(a[4 * i + 3]);
        b[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(x0, x2));
        b[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(x0, x2));
        b[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(x1, x3));
        b[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(x1, x3));
    }
    LLMWB_UNROLL for (int k = 0; k < 4; ++k) {
        const __m512 c0 = _mm512_shuffle_f32x4(b[k], b[4 + k], 0x44);
        const __m512 c1 = _mm512_shuffle_f32x4(b[k], b[4 + k], 0xEE);
        const __m512 d0 = _mm512_shuffle_f32x4(b[8 + k], b[12 + k], 0x44);
        const __m512 d1 = _mm512_shuffle_f32x4(b[8 + k], b[12 + k], 0xEE);
        _mm512_store_ps(t + 16 * k, _mm512_shuffle_f32x4(c0, d0, 0x88));
        _mm512_store_ps(t + 16 * (4 + k), _mm512_shuffle_f32x4(c0, d0, 0xDD));
        _mm512_store_ps(t + 16 * (8 + k), _mm512_shuffle_f32x4(c1, d1, 0x88));
        _mm512_store_ps(t + 16 * (12 + k), _mm512_shuffle_f32x4(c1, d1, 0xDD));
    }
}

// The 16 scores of M query vectors against a transposed tile kt (kt[16 * e + i] = element e of
// key i), bit for bit what the row-wise path computes: per key, lane l of the column-by-column
// products is P_l = q_l k_l + q_{16 + l} k_{16 + l} + ... (a mul, then fmas in column order), and
// reduce16 adds them as ((Q0 + Q2) + (Q1 + Q3)), Q_L = ((P_4L + P_4L+2) + (P_4L+1 + P_4L+3)).
// Here P_l is a vector over the 16 keys (q broadcast), so no shuffles are needed.
template <int NV, int M>
__attribute__((always_inline)) inline void scores_transposed(const float* kt,
                                                             const float* const* qs, __m512* res) {
    auto P = [&](int l, const float* qm) __attribute__((always_inline)) {
        __m512 p = _mm512_mul_ps(_mm512_set1_ps(qm[l]), _mm512_load_ps(kt + 16 * l));
        LLMWB_UNROLL for (int c = 1; c < NV; ++c) p = _mm512_fmadd_ps(
            _mm512_set1_ps(qm[16 * c + l]), _mm512_load_ps(kt + 16 * (16 * c + l)), p);
        return p;
    };
    auto Q = [&](int L, const float* qm) __attribute__((always_inline)) {
        const __m512 a0 = _mm512_add_ps(P(4 * L, qm), P(4 * L + 2, qm));
        const __m512 a1 = _mm512_add_ps(P(4 * L + 1, qm), P(4 * L + 3, qm));
        return _mm512_add_ps(a0, a1);
    };
    __m512 t02[M], t13[M];
    LLMWB_UNROLL for (int m = 0; m < M; ++m) t02[m] = _mm512_add_ps(Q(0, qs[m]), Q(2, qs[m]));
    LLMWB_UNROLL for (int m = 0; m < M; ++m) t13[m] = _mm512_add_ps(Q(1, qs[m]), Q(3, qs[m]));
    LLMWB_UNROLL for (int m = 0; m < M; ++m) res[m] = _mm512_add_ps(t02[m], t13[m]);
}

// Softmax numerators of one score row in place (times int8's V row scales: p_j * s_j), after
// gemma2's soft-cap when cap > 0; returns 1 / sum times vmul.
template <bool kRowScales>
inline float softmax_row(float* s, int32_t n_keys, float cap, const float* vs, float vmul) {
    if (cap > 0.0f)
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
        const __m512 e = _mm512_maskz_mov_ps(k, exp_neg(_mm512_sub_ps(_mm512_loadu_ps(s + j), mx)));
        sum = _mm512_add_ps(sum, e);
        if constexpr (kRowScales)
            _mm512_storeu_ps(s + j, _mm512_mul_ps(e, _mm512_maskz_loadu_ps(k, vs + j)));
        else
            _mm512_storeu_ps(s + j, e);
    }
    return vmul / _mm512_reduce_add_ps(sum);
}

// n_rows consecutive query rows of one sequence: row r (queries q + r * q_stride, outputs
// out + r * out_stride, n_heads heads each) attends to keys [0, n_keys0 + r). Pair p = r *
// n_heads + h has its scores at sc + p * ld. One row (decode) computes the scores tile by tile
// with reduce16; several rows share a transposed tile (the same sums, see scores_transposed).
template <int NV, KvDtype T>
void attend(float* out, int64_t out_stride, const float* q, int64_t q_stride, int n_rows,
            int n_heads, int32_t n_keys0, float scale, const PagedKvView& kv, float* scratch) {
    constexpr int HD = 16 * NV;
    constexpr int kHeadsPerPass = NV <= 4 ? 4 : NV <= 8 ? 2 : 1;
    constexpr bool kRowScales = kv_dtype_has_row_scales(T);
    constexpr int64_t kRowBytes = HD * kv_dtype_elem_bytes(T);
    const int n_pairs = n_rows * n_heads;        // <= AttendPairs::kMax
    const int32_t n_keys = n_keys0 + n_rows - 1; // the last row's
    const int64_t ld = round16(n_keys);
    float* sc = scratch;
    auto* offs = reinterpret_cast<int64_t*>(scratch + static_cast<int64_t>(n_pairs) * ld);
    float* ks = scratch + (static_cast<int64_t>(n_pairs) + 2) * ld; // int8 row scales
    float* vs = ks + ld;
    gather_key_offsets(kv, n_keys, offs, ks, vs);
    const unsigned char* kbase = kv.k;
    const unsigned char* vbase = kv.v;
    // Per pair: its key count, query and output rows.
    const AttendPairs pairs(out, out_stride, q, q_stride, n_rows, n_heads, HD, n_keys0);
    const int32_t* pkeys = pairs.keys;
    const float* const* pq = pairs.q;
    float* const* pout = pairs.out;

    // Scores. Row-wise: the tile's K rows converted (f32: copied) once for all heads into a
    // buffer at fixed offsets (16 row pointers into the pool would not stay in registers).
    const __m512 vscale = _mm512_set1_ps(scale * kv_layer_multiplier(T, kv.k_scale));
    alignas(64) float tile[16 * HD];
    // Per tile: prefetch the K rows kPrefetchKeys ahead; the tile's score multiplier.
    auto tile_start = [&](int32_t j0, int n) __attribute__((always_inline)) {
        for (int32_t j = j0 + kPrefetchKeys; j < std::min(n_keys, j0 + kPrefetchKeys + 16); ++j)
            prefetch_kv_row<kRowBytes>(kbase + offs[j]);
        return kRowScales ? _mm512_mul_ps(vscale, _mm512_maskz_loadu_ps(first_n(n), ks + j0))
                          : vscale;
    };
    if (n_rows == 1) {
        for (int32_t j0 = 0; j0 < n_keys; j0 += 16) {
            const int n = std::min(16, n_keys - j0);
            const __m512 tscale = tile_start(j0, n);
            for (int i = 0; i < n; ++i) {
                const unsigned char* row = kbase + offs[j0 + i];
                LLMWB_UNROLL for (int c = 0; c < NV; ++c)
                    _mm512_store_ps(tile + i * HD + 16 * c, load16<T>(row, 16 * c));
            }
            const float* kr[16];
            for (int i = 0; i < 16; ++i)
                kr[i] = tile + std::min(i, n - 1) * HD;
            for (int h = 0; h < n_heads; ++h) {
                const float* qh = q + h * HD;
                // Column by column (one q vector live; 16 accumulators), the same products in
                // the same order per key as a key-by-key loop: registers suffice up to 256.
                __m512 p[16];
                const __m512 q0 = _mm512_loadu_ps(qh);
                LLMWB_UNROLL for (int i = 0; i < 16; ++i) p[i] =
                    _mm512_mul_ps(q0, _mm512_loadu_ps(kr[i]));
                LLMWB_UNROLL for (int c = 1; c < NV; ++c) {
                    const __m512 qc = _mm512_loadu_ps(qh + 16 * c);
                    LLMWB_UNROLL for (int i = 0; i < 16; ++i) p[i] =
                        _mm512_fmadd_ps(qc, _mm512_loadu_ps(kr[i] + 16 * c), p[i]);
                }
                _mm512_mask_storeu_ps(sc + h * ld + j0, first_n(n),
                                      _mm512_mul_ps(reduce16(p), tscale));
            }
        }
    } else {
        constexpr int M = NV <= 4 ? 2 : 1;
        for (int32_t j0 = 0; j0 < n_keys; j0 += 16) {
            const int n = std::min(16, n_keys - j0);
            const __m512 tscale = tile_start(j0, n);
            // The tile transposed (tile[16 * e + i] = element e of key i; keys past n are
            // zeros), shared by every (row, head) pair whose keys reach it.
            LLMWB_UNROLL for (int c = 0; c < NV; ++c) {
                __m512 r[16];
                for (int i = 0; i < 16; ++i)
                    r[i] = i < n ? load16<T>(kbase + offs[j0 + i], 16 * c) : _mm512_setzero_ps();
                transpose16(r, tile + 256 * c);
            }
            int p = 0;
            while (p < n_pairs && pkeys[p] <= j0) // (rows whose keys end before this tile)
                ++p;
            for (; p + M <= n_pairs; p += M) {
                const float* qs[M];
                __m512 res[M];
                LLMWB_UNROLL for (int m = 0; m < M; ++m) qs[m] = pq[p + m];
                scores_transposed<NV, M>(tile, qs, res);
                LLMWB_UNROLL for (int m = 0; m < M; ++m)
                    _mm512_mask_storeu_ps(sc + (p + m) * ld + j0, first_n(pkeys[p + m] - j0),
                                          _mm512_mul_ps(res[m], tscale));
            }
            for (; p < n_pairs; ++p) {
                const float* qs[1] = {pq[p]};
                __m512 res[1];
                scores_transposed<NV, 1>(tile, qs, res);
                _mm512_mask_storeu_ps(sc + p * ld + j0, first_n(pkeys[p] - j0),
                                      _mm512_mul_ps(res[0], tscale));
            }
        }
    }

    // Softmax numerators in place; 1 / sum per pair, times the V layer multiplier.
    const float vmul = kv_layer_multiplier(T, kv.v_scale);
    float inv[AttendPairs::kMax];
    for (int p = 0; p < n_pairs; ++p)
        inv[p] = softmax_row<kRowScales>(sc + p * ld, pkeys[p], kv.logit_softcap, vs, vmul);

    // Weighted sum of V, chunk by chunk; pairs in passes of kHeadsPerPass (a pass may span two
    // rows: the pairs' key counts never decrease with p, so finished pairs are a prefix and a
    // pass's first pair has the fewest keys).
    // One pass: pairs p0 .. p0 + NH - 1 over keys [j0, j1) (NH fixed at compile time, so the
    // accumulators stay in registers).
    auto pass = [&](auto nh_c, int32_t j0, int32_t j1, int p0, bool prefetch)
        __attribute__((always_inline)) {
        constexpr int NH = decltype(nh_c)::value;
        __m512 acc[NH][NV];
        const float* s[NH];
        int32_t end[NH];
        LLMWB_UNROLL for (int h = 0; h < NH; ++h) {
            s[h] = sc + (p0 + h) * ld;
            end[h] = std::min(j1, pkeys[p0 + h]);
            LLMWB_UNROLL for (int c = 0; c < NV; ++c) acc[h][c] =
                j0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(pout[p0 + h] + 16 * c);
        }
        const int32_t common = end[0]; // every pair of the pass has these keys
        for (int32_t j = j0; j < common; ++j) {
            if (prefetch && j + kPrefetchValues < n_keys)
                prefetch_kv_row<kRowBytes>(vbase + offs[j + kPrefetchValues]);
            const unsigned char* vr = vbase + offs[j];
            __m512 vv[NV];
            LLMWB_UNROLL for (int c = 0; c < NV; ++c) vv[c] = load16<T>(vr, 16 * c);
            LLMWB_UNROLL for (int h = 0; h < NH; ++h) {
                const __m512 pj = _mm512_set1_ps(s[h][j]);
                LLMWB_UNROLL for (int c = 0; c < NV; ++c) acc[h][c] =
                    _mm512_fmadd_ps(pj, vv[c], acc[h][c]);
            }
        }
        // The pass's later pairs (a next row) may have a few more keys in this chunk.
        for (int32_t j = common; j < end[NH - 1]; ++j) {
            const unsigned char* vr = vbase + offs[j];
            __m512 vv[NV];
            LLMWB_UNROLL for (int c = 0; c < NV; ++c) vv[c] = load16<T>(vr, 16 * c);
            LLMWB_UNROLL for (int h = 1; h < NH; ++h) {
                if (j < end[h]) {
                    const __m512 pj = _mm512_set1_ps(s[h][j]);
                    LLMWB_UNROLL for (int c = 0; c < NV; ++c) acc[h][c] =
                        _mm512_fmadd_ps(pj, vv[c], acc[h][c]);
                }
            }
        }
        LLMWB_UNROLL for (int h = 0; h < NH; ++h) {
            const bool last = end[h] == pkeys[p0 + h];
            const __m512 f = _mm512_set1_ps(inv[p0 + h]);
            LLMWB_UNROLL for (int c = 0; c < NV; ++c) _mm512_storeu_ps(
                pout[p0 + h] + 16 * c, last ? _mm512_mul_ps(acc[h][c], f) : acc[h][c]);
        }
    };
    int first = 0; // pairs before it have all their keys summed
    for (int32_t j0 = 0; j0 < n_keys; j0 += kVChunk) {
        const int32_t j1 = std::min(n_keys, j0 + kVChunk);
        while (first < n_pairs && pkeys[first] <= j0)
            ++first;
        for (int p0 = first; p0 < n_pairs; p0 += kHeadsPerPass) {
            const bool prefetch = p0 == first;
            const int nh = std::min(kHeadsPerPass, n_pairs - p0);
            if (nh == kHeadsPerPass)
                pass(std::integral_constant<int, kHeadsPerPass>{}, j0, j1, p0, prefetch);
            else if constexpr (kHeadsPerPass >= 4)
                if (nh == 3)
                    pass(std::integral_constant<int, 3>{}, j0, j1, p0, prefetch);
                else if (nh == 2)
                    pass(std::integral_constant<int, 2>{}, j0, j1, p0, prefetch);
                else
                    pass(std::integral_constant<int, 1>{}, j0, j1, p0, prefetch);
            else
                pass(std::integral_constant<int, 1>{}, j0, j1, p0, prefetch);
        }
    }
}

} // namespace

bool attend_group_avx512_supported(int head_dim, KvDtype t) {
    (void)t; // every element type
    return attention_simd_head_dim(head_dim);
}

int64_t attend_group_avx512_scratch(int n_heads, int32_t n_keys) {
    return attend_rows_avx512_scratch(1, n_heads, n_keys);
}

int64_t attend_rows_avx512_scratch(int n_rows, int n_heads, int32_t n_keys0) {
    return (static_cast<int64_t>(n_rows) * n_heads + 4) * round16(n_keys0 + n_rows - 1);
}

void attend_group_avx512(float* out, const float* q, int n_heads, int head_dim, int32_t n_keys,
                         float scale, const PagedKvView& kv, float* scratch) {
    attend_group_chunks<16>(out, q, n_heads, head_dim, n_keys, kv.layout.dtype,
                            [&](auto cols, auto type, float* o, const float* qq, int nh) {
                                attend<decltype(cols)::value, decltype(type)::value>(
                                    o, 0, qq, 0, 1, nh, n_keys, scale, kv, scratch);
                            });
}

void attend_rows_avx512(float* out, int64_t out_stride, const float* q, int64_t q_stride,
                        int n_rows, int n_heads, int head_dim, int32_t n_keys0, float scale,
                        const PagedKvView& kv, float* scratch) {
    if (n_rows <= 0 || n_rows > kAttendMaxRows || n_heads > 64)
        return; // (attention_multi_row said no: the caller goes row by row)
    attend_group_chunks<16>(out, q, n_heads, head_dim, n_keys0, kv.layout.dtype,
                            [&](auto cols, auto type, float*, const float*, int) {
                                attend<decltype(cols)::value, decltype(type)::value>(
                                    out, out_stride, q, q_stride, n_rows, n_heads, n_keys0, scale,
                                    kv, scratch);
                            });
}

} // namespace llmwb::kernels
