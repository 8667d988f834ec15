// AVX2 grouped-query attention of one query row, or of several consecutive rows of one
// sequence (see attention_avx2.h), any KV element type.
//   scores: per 8-key tile, the K rows are converted once into a stack buffer (f32 rows are
//           read in place); per head, 8 dot-product vectors (q chunk loaded once per column,
//           8 accumulators) are reduced to 8 scores with an hadd tree. Several rows: the tile is
//           converted and transposed once for every (row, head) pair, and each pair's 8 scores
//           are summed as vectors over the keys (q broadcast, each K vector loaded once for 2 or
//           4 pairs) in the hadd tree's order: the same bits, no horizontal sums;
//   softmax: vector exp (range reduction, degree-6 polynomial, 2^n built in the exponent);
//           int8's V row scales multiply the weights (p_j * s_j), the 1 / sum and the layer
//           multiplier are applied to the outputs at the end; the same code for every pair;
//   values: 32 output columns of up to 3 pairs in 12 accumulators (the 3 weights broadcast
//           first, then the V vectors converted one at a time: 16 registers); each V row chunk
//           converted in registers once per 3 pairs; chunk by chunk of kVChunk keys, so that
//           the passes over a chunk's columns and pairs re-read its rows from L1, not from
//           memory (the partial sums wait in `out` between chunks: the same additions in the
//           same order); a pass may hold pairs of two rows, whose key counts differ.
// The K and V rows of a paged cache are scattered block by block, which the hardware prefetcher
// follows badly: each is prefetched from the gathered offsets kPrefetchKeys (K) and
// kPrefetchValues (V) keys ahead.
#include "kernels/cpu/attention_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

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

// 8x8 transpose: t[8 * c + i] = r[i][c] (r: 8 rows of 8 floats).
inline void transpose8(const __m256 r[8], float* t) {
    __m256 a[8], b[8];
    LLMWB_UNROLL for (int i = 0; i < 4; ++i) {
        a[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // b[4i + k], per 128-bit half H: column 4H + k of rows 4i .. 4i + 3.
    LLMWB_UNROLL for (int i = 0; i < 2; ++i) {
        b[4 * i] = _mm256_shuffle_ps(a[4 * i], a[4 * i + 2], 0x44);
        b[4 * i + 1] = _mm256_shuffle_ps(a[4 * i], a[4 * i + 2], 0xEE);
        b[4 * i + 2] = _mm256_shuffle_ps(a[4 * i + 1], a[4 * i + 3], 0x44);
        b[4 * i + 3] = _mm256_shuffle_ps(a[4 * i + 1], a[4 * i + 3], 0xEE);
    }
    LLMWB_UNROLL for (int k = 0; k < 4; ++k) {
        _mm256_store_ps(t + 8 * k, _mm256_permute2f128_ps(b[k], b[4 + k], 0x20));
        _mm256_store_ps(t + 8 * (4 + k), _mm256_permute2f128_ps(b[k], b[4 + k], 0x31));
    }
}

// The 8 scores of M query vectors against a transposed tile kt (kt[8 * e + i] = element e of
// key i), bit for bit what the row-wise path computes: per key, lane l of the column-by-column
// products is P_l = q_l k_l + q_{8 + l} k_{8 + l} + ... (a mul, then fmas in column order), and
// reduce8's hadd tree adds them as ((P0 + P1) + (P2 + P3)) + ((P4 + P5) + (P6 + P7)). Here P_l
// is a vector over the 8 keys (q broadcast), so no shuffles are needed; each K vector is loaded
// once for the M queries.
template <int NV, int M>
__attribute__((always_inline)) inline void scores_transposed(const float* kt,
                                                             const float* const* qs, __m256* res) {
    auto P = [&](int l, __m256* p) __attribute__((always_inline)) {
        const __m256 k0 = _mm256_load_ps(kt + 8 * l);
        LLMWB_UNROLL for (int m = 0; m < M; ++m) p[m] =
            _mm256_mul_ps(_mm256_broadcast_ss(qs[m] + l), k0);
        LLMWB_UNROLL for (int c = 1; c < NV; ++c) {
            const __m256 kc = _mm256_load_ps(kt + 8 * (8 * c + l));
            LLMWB_UNROLL for (int m = 0; m < M; ++m) p[m] =
                _mm256_fmadd_ps(_mm256_broadcast_ss(qs[m] + 8 * c + l), kc, p[m]);
        }
    };
    __m256 a[M], b[M], x[M], y[M];
    P(0, a);
    P(1, x);
    LLMWB_UNROLL for (int m = 0; m < M; ++m) a[m] = _mm256_add_ps(a[m], x[m]);
    P(2, b);
    P(3, x);
    LLMWB_UNROLL for (int m = 0; m < M; ++m) a[m] = _mm256_add_ps(a[m], _mm256_add_ps(b[m], x[m]));
    P(4, b);
    P(5, x);
    LLMWB_UNROLL for (int m = 0; m < M; ++m) b[m] = _mm256_add_ps(b[m], x[m]);
    P(6, x);
    P(7, y);
    LLMWB_UNROLL for (int m = 0; m < M; ++m) res[m] =
        _mm256_add_ps(a[m], _mm256_add_ps(b[m], _mm256_add_ps(x[m], y[m])));
}

// Softmax numerators of one score row in place (times int8's V row scales: p_j * s_j), after
// gemma2's soft-cap when cap > 0 (lanes past n_keys are scratch); returns 1 / sum times vmul.
template <bool kRowScales>
inline float softmax_row(float* s, int32_t n_keys, float cap, const float* vs, float vmul) {
    if (cap > 0.0f)
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
            _mm256_storeu_ps(s + j,
                             _mm256_mul_ps(e, _mm256_maskload_ps(vs + j, _mm256_castps_si256(k))));
        else
            _mm256_storeu_ps(s + j, e);
    }
    return vmul / hsum_ps(sum);
}

// n_rows consecutive query rows of one sequence: row r (queries q + r * q_stride, outputs
// out + r * out_stride, n_heads heads each) attends to keys [0, n_keys0 + r). Pair p = r *
// n_heads + h has its scores at sc + p * ld. One row (decode) computes the scores tile by tile
// with reduce8; several rows share a transposed tile (the same sums, see scores_transposed).
template <int NV, KvDtype T>
void attend(float* out, int64_t out_stride, const float* q, int64_t q_stride, int n_rows,
            int n_heads, int32_t n_keys0, float scale, const PagedKvView& kv, float* scratch) {
    constexpr int HD = 8 * NV;
    constexpr bool kRowScales = kv_dtype_has_row_scales(T);
    constexpr int64_t kRowBytes = HD * kv_dtype_elem_bytes(T);
    const int n_pairs = n_rows * n_heads;        // <= AttendPairs::kMax
    const int32_t n_keys = n_keys0 + n_rows - 1; // the last row's
    const int64_t ld = round8(n_keys);
    float* sc = scratch;
    auto* offs = reinterpret_cast<int64_t*>(scratch + static_cast<int64_t>(n_pairs) * ld);
    float* ks = scratch + (static_cast<int64_t>(n_pairs) + 2) * ld; // int8 row scales
    float* vs = ks + ld;
    gather_key_offsets(kv, n_keys, offs, ks, vs);
    // Per pair: its key count, query and output rows.
    const AttendPairs pairs(out, out_stride, q, q_stride, n_rows, n_heads, HD, n_keys0);
    const int32_t* pkeys = pairs.keys;
    const float* const* pq = pairs.q;
    float* const* pout = pairs.out;

    // Scores.
    const float kscale = scale * kv_layer_multiplier(T, kv.k_scale);
    alignas(32) float tile[8 * HD];
    for (int32_t j0 = 0; j0 < n_keys; j0 += 8) {
        const int n = std::min(8, n_keys - j0);
        for (int32_t j = j0 + kPrefetchKeys; j < std::min(n_keys, j0 + kPrefetchKeys + 8); ++j)
            prefetch_kv_row<kRowBytes>(kv.k + offs[j]);
        __m256 tscale = _mm256_set1_ps(kscale);
        if constexpr (kRowScales)
            tscale = _mm256_mul_ps(tscale, _mm256_maskload_ps(ks + j0, first_n(n)));
        if (n_rows == 1) {
            // Row-wise: the tile's K rows converted once for all heads (f32 rows read in place).
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
                _mm256_maskstore_ps(sc + h * ld + j0, first_n(n),
                                    _mm256_mul_ps(reduce8(p), tscale));
            }
            continue;
        }
        // Several rows: the tile transposed (tile[8 * e + i] = element e of key i; keys past n
        // are zeros), shared by every (row, head) pair whose keys reach it.
        LLMWB_UNROLL for (int c = 0; c < NV; ++c) {
            __m256 r[8];
            for (int i = 0; i < 8; ++i)
                r[i] = i < n ? load8<T>(kv.k + offs[j0 + i], 8 * c) : _mm256_setzero_ps();
            transpose8(r, tile + 64 * c);
        }
        int p = 0;
        while (p < n_pairs && pkeys[p] <= j0) // (rows whose keys end before this tile)
            ++p;
        constexpr int M = NV <= 4 ? 2 : 4; // (measured: 4 slower at head_dim 32, faster above)
        for (; p + M <= n_pairs; p += M) {
            const float* qs[M];
            __m256 res[M];
            LLMWB_UNROLL for (int m = 0; m < M; ++m) qs[m] = pq[p + m];
            scores_transposed<NV, M>(tile, qs, res);
            LLMWB_UNROLL for (int m = 0; m < M; ++m) _mm256_maskstore_ps(
                sc + (p + m) * ld + j0, first_n(pkeys[p + m] - j0), _mm256_mul_ps(res[m], tscale));
        }
        for (; p < n_pairs; ++p) {
            const float* qs[1] = {pq[p]};
            __m256 res[1];
            scores_transposed<NV, 1>(tile, qs, res);
            _mm256_maskstore_ps(sc + p * ld + j0, first_n(pkeys[p] - j0),
                                _mm256_mul_ps(res[0], tscale));
        }
    }

    // Softmax numerators in place; 1 / sum per pair, times the V layer multiplier.
    const float vmul = kv_layer_multiplier(T, kv.v_scale);
    float inv[AttendPairs::kMax];
    for (int p = 0; p < n_pairs; ++p)
        inv[p] = softmax_row<kRowScales>(sc + p * ld, pkeys[p], kv.logit_softcap, vs, vmul);

    // Weighted sum of V: 32 columns x 3 pairs at a time, chunk by chunk (a pass may span two
    // rows: the pairs' key counts never decrease with p, so finished pairs are a prefix and a
    // pass's first pair has the fewest keys).
    constexpr int kHeadsPerPass = 3, kCols = NV < 4 ? NV : 4;
    // One pass: columns c0 .. c0 + kCols - 1 of pairs p0 .. p0 + NH - 1 over keys [j0, j1).
    auto pass = [&](auto nh_c, int32_t j0, int32_t j1, int c0, int p0, bool prefetch)
        __attribute__((always_inline)) {
        constexpr int NH = decltype(nh_c)::value;
        __m256 acc[NH][kCols];
        const float* s[NH];
        int32_t end[NH];
        LLMWB_UNROLL for (int h = 0; h < NH; ++h) {
            s[h] = sc + (p0 + h) * ld;
            end[h] = std::min(j1, pkeys[p0 + h]);
            LLMWB_UNROLL for (int c = 0; c < kCols; ++c) acc[h][c] =
                j0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(pout[p0 + h] + 8 * (c0 + c));
        }
        const int32_t common = end[0]; // every pair of the pass has these keys
        for (int32_t j = j0; j < common; ++j) {
            if (prefetch && j + kPrefetchValues < n_keys)
                prefetch_kv_row<kRowBytes>(kv.v + offs[j + kPrefetchValues]);
            // The weights first, then the V vectors one by one: 12 + 3 + 1 registers.
            const unsigned char* vr = kv.v + offs[j];
            __m256 pj[NH];
            LLMWB_UNROLL for (int h = 0; h < NH; ++h) pj[h] = _mm256_broadcast_ss(s[h] + j);
            LLMWB_UNROLL for (int c = 0; c < kCols; ++c) {
                const __m256 vv = load8<T>(vr, 8 * (c0 + c));
                LLMWB_UNROLL for (int h = 0; h < NH; ++h) acc[h][c] =
                    _mm256_fmadd_ps(pj[h], vv, acc[h][c]);
            }
        }
        // The pass's later pairs may have a few more keys in this chunk.
        for (int32_t j = common; j < end[NH - 1]; ++j) {
            const unsigned char* vr = kv.v + offs[j];
            __m256 vv[kCols];
            LLMWB_UNROLL for (int c = 0; c < kCols; ++c) vv[c] = load8<T>(vr, 8 * (c0 + c));
            LLMWB_UNROLL for (int h = 1; h < NH; ++h) {
                if (j < end[h]) {
                    const __m256 pj = _mm256_broadcast_ss(s[h] + j);
                    LLMWB_UNROLL for (int c = 0; c < kCols; ++c) acc[h][c] =
                        _mm256_fmadd_ps(pj, vv[c], acc[h][c]);
                }
            }
        }
        LLMWB_UNROLL for (int h = 0; h < NH; ++h) {
            const bool last = end[h] == pkeys[p0 + h];
            const __m256 f = _mm256_set1_ps(inv[p0 + h]);
            LLMWB_UNROLL for (int c = 0; c < kCols; ++c) _mm256_storeu_ps(
                pout[p0 + h] + 8 * (c0 + c), last ? _mm256_mul_ps(acc[h][c], f) : acc[h][c]);
        }
    };
    int first = 0; // pairs before it have all their keys summed
    for (int32_t j0 = 0; j0 < n_keys; j0 += kVChunk) {
        const int32_t j1 = std::min(n_keys, j0 + kVChunk);
        while (first < n_pairs && pkeys[first] <= j0)
            ++first;
        for (int c0 = 0; c0 < NV; c0 += kCols)
            for (int p0 = first; p0 < n_pairs; p0 += kHeadsPerPass) {
                const bool prefetch = c0 == 0 && p0 == first;
                switch (std::min(kHeadsPerPass, n_pairs - p0)) {
                case 3:
                    pass(std::integral_constant<int, 3>{}, j0, j1, c0, p0, prefetch);
                    break;
                case 2:
                    pass(std::integral_constant<int, 2>{}, j0, j1, c0, p0, prefetch);
                    break;
                default:
                    pass(std::integral_constant<int, 1>{}, j0, j1, c0, p0, prefetch);
                    break;
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
    return attend_rows_avx2_scratch(1, n_heads, n_keys);
}

int64_t attend_rows_avx2_scratch(int n_rows, int n_heads, int32_t n_keys0) {
    return (static_cast<int64_t>(n_rows) * n_heads + 4) * round8(n_keys0 + n_rows - 1);
}

void attend_group_avx2(float* out, const float* q, int n_heads, int head_dim, int32_t n_keys,
                       float scale, const PagedKvView& kv, float* scratch) {
    attend_group_chunks<8>(out, q, n_heads, head_dim, n_keys, kv.layout.dtype,
                           [&](auto cols, auto type, float* o, const float* qq, int nh) {
                               attend<decltype(cols)::value, decltype(type)::value>(
                                   o, 0, qq, 0, 1, nh, n_keys, scale, kv, scratch);
                           });
}

void attend_rows_avx2(float* out, int64_t out_stride, const float* q, int64_t q_stride, int n_rows,
                      int n_heads, int head_dim, int32_t n_keys0, float scale,
                      const PagedKvView& kv, float* scratch) {
    if (n_rows <= 0 || n_rows > kAttendMaxRows || n_heads > 64)
        return; // (attention_multi_row said no: the caller goes row by row)
    attend_group_chunks<8>(out, q, n_heads, head_dim, n_keys0, kv.layout.dtype,
                           [&](auto cols, auto type, float*, const float*, int) {
                               attend<decltype(cols)::value, decltype(type)::value>(
                                   out, out_stride, q, q_stride, n_rows, n_heads, n_keys0, scale,
                                   kv, scratch);
                           });
}

} // namespace llmwb::kernels
