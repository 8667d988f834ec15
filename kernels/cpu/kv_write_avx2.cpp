// AVX2 (+F16C) KV write rows (kv_write_simd.h): 8 elements per step, the tail through the
// scalar reference; byte-identical to kv_store_row_ref for every type.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/kv_write_simd.h"

namespace llmwb::kernels {

namespace {

// The low byte of each 32-bit lane, packed into 8 bytes.
inline void store_low_bytes(uint8_t* d, __m256i v) {
    const __m256i idx =
        _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12,
                         -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i t = _mm256_shuffle_epi8(v, idx);
    const __m128i b = _mm_unpacklo_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d), b);
}

// The low 16 bits of each 32-bit lane, packed into 8 halves.
inline void store_low_halves(uint16_t* d, __m256i v) {
    const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    const __m128i m = _mm_set1_epi32(0xFFFF);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d),
                     _mm_packus_epi32(_mm_and_si128(lo, m), _mm_and_si128(hi, m)));
}

inline __m256i bf16_bits(__m256 v) {
    const __m256i x = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    const __m256i r = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7FFF)), lsb), 16);
    // |x| > inf as signed compare (|x| < 2^31).
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7FFFFFFF)),
                                           _mm256_set1_epi32(0x7F800000));
    const __m256i q = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
    return _mm256_blendv_epi8(r, q, nan);
}

inline __m256i fp8_codes(__m256 v, const Fp8Params& p) {
    const __m256i x = _mm256_castps_si256(v);
    const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(x, 24), _mm256_set1_epi32(0x80));
    const __m256i a = _mm256_and_si256(x, _mm256_set1_epi32(0x7FFFFFFF));
    const int shift = 23 - p.mant;
    const __m256i lsb =
        _mm256_and_si256(_mm256_srl_epi32(a, _mm_cvtsi32_si128(shift)), _mm256_set1_epi32(1));
    const __m256i rn = _mm256_srl_epi32(
        _mm256_add_epi32(_mm256_add_epi32(a, _mm256_set1_epi32((1 << (shift - 1)) - 1)), lsb),
        _mm_cvtsi32_si128(shift));
    const __m256i normal = _mm256_sub_epi32(rn, _mm256_set1_epi32(static_cast<int>(p.rebias)));
    const __m256i magic = _mm256_set1_epi32(static_cast<int>(p.magic));
    const __m256i sub = _mm256_sub_epi32(
        _mm256_castps_si256(_mm256_add_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(magic))),
        magic);
    // a < min_normal (both < 2^31: signed compare is fine).
    const __m256i is_sub = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(p.min_normal)), a);
    __m256i code = _mm256_blendv_epi8(normal, sub, is_sub);
    code = _mm256_min_epu32(code, _mm256_set1_epi32(static_cast<int>(p.max_code)));
    code = _mm256_or_si256(code, sign);
    const __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7F800000));
    return _mm256_blendv_epi8(code, _mm256_set1_epi32(0x7F), nan);
}

void store_int8(const float* x, int32_t n, int8_t* q, float* scale_dst) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 mx = _mm256_setzero_ps();
    int32_t i = 0;
    for (; i + 8 <= n; i += 8)
        mx = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + i), abs_mask), mx);
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    float amax = _mm_cvtss_f32(m4);
    for (int32_t t = i; t < n; ++t)
        amax = std::max(amax, std::fabs(x[t]));
    const float inv = 127.0f / amax;
    if (!(amax > 0) || !std::isfinite(amax) || !std::isfinite(inv)) {
        std::memset(q, 0, static_cast<size_t>(n));
        *scale_dst = 0.0f;
        return;
    }
    const __m256 vinv = _mm256_set1_ps(inv);
    const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
    for (i = 0; i + 8 <= n; i += 8) {
        // cvtps rounds by MXCSR: nearest even, as std::nearbyint in the default mode.
        __m256i r = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i), vinv));
        r = _mm256_min_epi32(_mm256_max_epi32(r, lo), hi);
        store_low_bytes(reinterpret_cast<uint8_t*>(q + i), r);
    }
    for (; i < n; ++i)
        q[i] = static_cast<int8_t>(std::clamp(std::nearbyint(x[i] * inv), -127.0f, 127.0f));
    *scale_dst = amax / 127.0f;
}

} // namespace

void kv_store_row_avx2(KvDtype dtype, const float* x, int32_t n, void* dst, float* scale_dst,
                       float inv_scale) {
    const int32_t n8 = n & ~7;
    switch (dtype) {
    case KvDtype::F32:
        std::memcpy(dst, x, sizeof(float) * static_cast<size_t>(n));
        return;
    case KvDtype::F16: {
        auto* d = static_cast<uint16_t*>(dst);
        for (int32_t i = 0; i < n8; i += 8)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                             _mm256_cvtps_ph(_mm256_loadu_ps(x + i),
                                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        break;
    }
    case KvDtype::BF16: {
        auto* d = static_cast<uint16_t*>(dst);
        for (int32_t i = 0; i < n8; i += 8)
            store_low_halves(d + i, bf16_bits(_mm256_loadu_ps(x + i)));
        break;
    }
    case KvDtype::Fp8E4M3:
    case KvDtype::Fp8E5M2: {
        const Fp8Params p = fp8_params(dtype);
        const __m256 s = _mm256_set1_ps(inv_scale);
        auto* d = static_cast<uint8_t*>(dst);
        for (int32_t i = 0; i < n8; i += 8)
            store_low_bytes(d + i, fp8_codes(_mm256_mul_ps(_mm256_loadu_ps(x + i), s), p));
        break;
    }
    case KvDtype::Int8:
        store_int8(x, n, static_cast<int8_t*>(dst), scale_dst);
        return;
    }
    // Element-wise types: the last n % 8 elements through the reference.
    if (n8 < n)
        kv_store_row_ref(dtype, x + n8, n - n8,
                         static_cast<unsigned char*>(dst) + n8 * kv_dtype_elem_bytes(dtype),
                         scale_dst, inv_scale);
}

} // namespace llmwb::kernels
