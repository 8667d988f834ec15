// AVX-512 KV write rows (kv_write_simd.h): 16 elements per step, masked tails; byte-identical
// to kv_store_row_ref for every type.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/kv_write_simd.h"

namespace llmwb::kernels {

namespace {

inline __mmask16 tail_mask(int32_t left) {
    return static_cast<__mmask16>(left >= 16 ? 0xFFFF : (1u << left) - 1);
}

// RNE, fp32 bits -> bf16 bits in the low half of each lane (quiet NaN as fp32_to_bf16).
inline __m512i bf16_bits(__m512 v) {
    const __m512i x = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7FFF)), lsb), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(
        _mm512_and_si512(x, _mm512_set1_epi32(0x7FFFFFFF)), _mm512_set1_epi32(0x7F800000));
    return _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
}

// fp8 codes (one per 32-bit lane) of v, see Fp8Params.
inline __m512i fp8_codes(__m512 v, const Fp8Params& p) {
    const __m512i x = _mm512_castps_si512(v);
    const __m512i sign = _mm512_and_si512(_mm512_srli_epi32(x, 24), _mm512_set1_epi32(0x80));
    const __m512i a = _mm512_and_si512(x, _mm512_set1_epi32(0x7FFFFFFF));
    const int shift = 23 - p.mant;
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(a, shift), _mm512_set1_epi32(1));
    const __m512i rn = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(a, _mm512_set1_epi32((1 << (shift - 1)) - 1)), lsb),
        shift);
    const __m512i normal = _mm512_sub_epi32(rn, _mm512_set1_epi32(static_cast<int>(p.rebias)));
    const __m512i magic = _mm512_set1_epi32(static_cast<int>(p.magic));
    const __m512i sub = _mm512_sub_epi32(
        _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(magic))),
        magic);
    const __mmask16 is_sub =
        _mm512_cmplt_epu32_mask(a, _mm512_set1_epi32(static_cast<int>(p.min_normal)));
    __m512i code = _mm512_mask_mov_epi32(normal, is_sub, sub);
    code = _mm512_min_epu32(code, _mm512_set1_epi32(static_cast<int>(p.max_code)));
    code = _mm512_or_si512(code, sign);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7F800000));
    return _mm512_mask_mov_epi32(code, nan, _mm512_set1_epi32(0x7F));
}

void store_int8(const float* x, int32_t n, int8_t* q, float* scale_dst) {
    const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
    __m512 mx = _mm512_setzero_ps();
    for (int32_t i = 0; i < n; i += 16) {
        const __m512 v = _mm512_maskz_loadu_ps(tail_mask(n - i), x + i);
        mx = _mm512_max_ps(_mm512_and_ps(v, abs_mask), mx);
    }
    // Horizontal max (|x| >= 0, so the integer order of the bit patterns is the float order).
    __m256 m8 = _mm256_max_ps(_mm512_castps512_ps256(mx),
                              _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(mx), 1)));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    const float inv = 127.0f / amax;
    if (!(amax > 0) || !std::isfinite(amax) || !std::isfinite(inv)) {
        std::memset(q, 0, static_cast<size_t>(n));
        *scale_dst = 0.0f;
        return;
    }
    const __m512 vinv = _mm512_set1_ps(inv);
    const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
    for (int32_t i = 0; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
        __m512i r = _mm512_cvt_roundps_epi32(_mm512_mul_ps(v, vinv),
                                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        r = _mm512_min_epi32(_mm512_max_epi32(r, lo), hi);
        _mm512_mask_cvtepi32_storeu_epi8(q + i, k, r);
    }
    *scale_dst = amax / 127.0f;
}

} // namespace

void kv_store_row_avx512(KvDtype dtype, const float* x, int32_t n, void* dst, float* scale_dst,
                         float inv_scale) {
    switch (dtype) {
    case KvDtype::F32:
        std::memcpy(dst, x, sizeof(float) * static_cast<size_t>(n));
        return;
    case KvDtype::F16: {
        auto* d = static_cast<uint16_t*>(dst);
        for (int32_t i = 0; i < n; i += 16) {
            const __mmask16 k = tail_mask(n - i);
            const __m256i h = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(k, x + i),
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            _mm256_mask_storeu_epi16(d + i, k, h);
        }
        return;
    }
    case KvDtype::BF16: {
        auto* d = static_cast<uint16_t*>(dst);
        for (int32_t i = 0; i < n; i += 16) {
            const __mmask16 k = tail_mask(n - i);
            _mm512_mask_cvtepi32_storeu_epi16(d + i, k, bf16_bits(_mm512_maskz_loadu_ps(k, x + i)));
        }
        return;
    }
    case KvDtype::Fp8E4M3:
    case KvDtype::Fp8E5M2: {
        const Fp8Params p = fp8_params(dtype);
        const __m512 s = _mm512_set1_ps(inv_scale);
        auto* d = static_cast<uint8_t*>(dst);
        for (int32_t i = 0; i < n; i += 16) {
            const __mmask16 k = tail_mask(n - i);
            const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), s);
            _mm512_mask_cvtepi32_storeu_epi8(d + i, k, fp8_codes(v, p));
        }
        return;
    }
    case KvDtype::Int8:
        store_int8(x, n, static_cast<int8_t*>(dst), scale_dst);
        return;
    }
}

} // namespace llmwb::kernels
