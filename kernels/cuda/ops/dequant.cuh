// Device-side decoding of every weight dtype (layouts of kernels/cpu/quant_blocks.h), per element
// and per chunk of 32 consecutive elements of a row.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cpu/dtype.h"

namespace llmwb::cuda::detail {

__device__ __forceinline__ float half_bits_to_float(uint16_t h) {
    return __half2float(__ushort_as_half(h));
}
__device__ __forceinline__ float bf16_bits_to_float(uint16_t b) {
    return __uint_as_float(static_cast<uint32_t>(b) << 16);
}
__device__ __forceinline__ uint16_t load_u16(const uint8_t* p) {
    return *reinterpret_cast<const uint16_t*>(p); // every u16 field is 2-byte aligned
}

// n bytes (n even) from a 2-byte aligned address, read 16 bits at a time (quantized blocks of
// 18, 34 and 210 bytes are only 2-byte aligned).
template <int N> __device__ __forceinline__ void load_bytes2(const uint8_t* p, uint8_t* out) {
    const uint16_t* w = reinterpret_cast<const uint16_t*>(p);
#pragma unroll
    for (int i = 0; i < N / 2; ++i) {
        const uint16_t v = w[i];
        out[2 * i] = static_cast<uint8_t>(v & 0xFF);
        out[2 * i + 1] = static_cast<uint8_t>(v >> 8);
    }
}

// Q4_K: 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes s.
__device__ __forceinline__ void q4k_scale_min_dev(const uint8_t* s, int j, int* sc, int* m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

// Block byte offsets inside the structs of quant_blocks.h.
constexpr int kQ4KScales = 4, kQ4KQs = 16;             // d, dmin, scales[12], qs[128]
constexpr int kQ6KQh = 128, kQ6KSc = 192, kQ6KD = 208; // ql[128], qh[64], scales[16], d

// Element e of a row stored at `row` in type T.
template <DType T> __device__ __forceinline__ float dequant_elem(const uint8_t* row, int64_t e) {
    if constexpr (T == DType::F32) {
        return reinterpret_cast<const float*>(row)[e];
    } else if constexpr (T == DType::F16) {
        return __half2float(reinterpret_cast<const __half*>(row)[e]);
    } else if constexpr (T == DType::BF16) {
        return bf16_bits_to_float(reinterpret_cast<const uint16_t*>(row)[e]);
    } else if constexpr (T == DType::Q8_0) {
        const uint8_t* b = row + (e / 32) * 34;
        const int j = static_cast<int>(e % 32);
        return half_bits_to_float(load_u16(b)) * static_cast<float>(static_cast<int8_t>(b[2 + j]));
    } else if constexpr (T == DType::Q4_0) {
        const uint8_t* b = row + (e / 32) * 18;
        const int j = static_cast<int>(e % 32);
        const int q = j < 16 ? (b[2 + j] & 15) : (b[2 + j - 16] >> 4);
        return half_bits_to_float(load_u16(b)) * static_cast<float>(q - 8);
    } else if constexpr (T == DType::Q4_K) {
        const uint8_t* b = row + (e / 256) * 144;
        const int r = static_cast<int>(e % 256);
        const int j = r / 32, l = r % 32, c = j / 2;
        const uint8_t byte = b[kQ4KQs + 32 * c + l];
        const int q = (j & 1) ? (byte >> 4) : (byte & 15);
        int sc, m;
        q4k_scale_min_dev(b + kQ4KScales, j, &sc, &m);
        const float d = half_bits_to_float(load_u16(b));
        const float dmin = half_bits_to_float(load_u16(b + 2));
        return d * static_cast<float>(sc) * static_cast<float>(q) - dmin * static_cast<float>(m);
    } else { // Q6_K
        const uint8_t* b = row + (e / 256) * 210;
        const int r = static_cast<int>(e % 256);
        const int h = r / 128, g = (r % 128) / 32, l = r % 32;
        const uint8_t* ql = b + 64 * h;
        const uint8_t* qh = b + kQ6KQh + 32 * h;
        const int lo = (g & 1) ? ql[l + 32] : ql[l];
        const int lo4 = (g >= 2) ? (lo >> 4) : (lo & 15);
        const int hi = (qh[l] >> (2 * g)) & 3;
        const int q = (lo4 | (hi << 4)) - 32;
        const int sc = static_cast<int8_t>(b[kQ6KSc + r / 16]);
        return half_bits_to_float(load_u16(b + kQ6KD)) * static_cast<float>(sc * q);
    }
}

// The 32 elements [32c, 32c + 32) of a row into w[0..32). For F32/F16/BF16 `vec` says the row
// is 16-byte aligned (base aligned and the row holds a multiple of 32 elements): uint4 loads.
template <DType T>
__device__ __forceinline__ void dequant_chunk32(const uint8_t* row, int64_t c, bool vec, float* w) {
    if constexpr (T == DType::F32) {
        const float* p = reinterpret_cast<const float*>(row) + c * 32;
        if (vec) {
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float4 v = reinterpret_cast<const float4*>(p)[i];
                w[4 * i] = v.x;
                w[4 * i + 1] = v.y;
                w[4 * i + 2] = v.z;
                w[4 * i + 3] = v.w;
            }
        } else {
#pragma unroll
            for (int i = 0; i < 32; ++i)
                w[i] = p[i];
        }
    } else if constexpr (T == DType::F16 || T == DType::BF16) {
        const uint16_t* p = reinterpret_cast<const uint16_t*>(row) + c * 32;
        uint16_t h[32];
        if (vec) {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const uint4 v = reinterpret_cast<const uint4*>(p)[i];
                const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    h[8 * i + 2 * k] = static_cast<uint16_t>(words[k] & 0xFFFFu);
                    h[8 * i + 2 * k + 1] = static_cast<uint16_t>(words[k] >> 16);
                }
            }
        } else {
#pragma unroll
            for (int i = 0; i < 32; ++i)
                h[i] = p[i];
        }
#pragma unroll
        for (int i = 0; i < 32; ++i)
            w[i] = T == DType::F16 ? half_bits_to_float(h[i]) : bf16_bits_to_float(h[i]);
    } else if constexpr (T == DType::Q8_0) {
        const uint8_t* b = row + c * 34;
        const float d = half_bits_to_float(load_u16(b));
        uint8_t q[32];
        load_bytes2<32>(b + 2, q);
#pragma unroll
        for (int i = 0; i < 32; ++i)
            w[i] = d * static_cast<float>(static_cast<int8_t>(q[i]));
    } else if constexpr (T == DType::Q4_0) {
        const uint8_t* b = row + c * 18;
        const float d = half_bits_to_float(load_u16(b));
        uint8_t q[16];
        load_bytes2<16>(b + 2, q);
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const int byte = q[i];
            w[i] = d * static_cast<float>((byte & 15) - 8);
            w[i + 16] = d * static_cast<float>((byte >> 4) - 8);
        }
    } else if constexpr (T == DType::Q4_K) {
        const uint8_t* b = row + (c / 8) * 144;
        const int j = static_cast<int>(c % 8); // sub-block of 32
        int sc, m;
        q4k_scale_min_dev(b + kQ4KScales, j, &sc, &m);
        const float d = half_bits_to_float(load_u16(b)) * static_cast<float>(sc);
        const float mn = half_bits_to_float(load_u16(b + 2)) * static_cast<float>(m);
        const uint4* qs = reinterpret_cast<const uint4*>(b + kQ4KQs + 32 * (j / 2)); // 16-aligned
        const int shift = (j & 1) ? 4 : 0;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const uint4 v = qs[i];
            const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int k = 0; k < 16; ++k) {
                const int q = static_cast<int>((words[k / 4] >> (8 * (k % 4) + shift)) & 15u);
                w[16 * i + k] = d * static_cast<float>(q) - mn;
            }
        }
    } else { // Q6_K
        const uint8_t* b = row + (c / 8) * 210;
        const int r0 = static_cast<int>(c % 8) * 32; // first element inside the block
        const int h = r0 / 128, g = (r0 % 128) / 32;
        const uint8_t* ql = b + 64 * h + ((g & 1) ? 32 : 0);
        const uint8_t* qh = b + kQ6KQh + 32 * h;
        const float d = half_bits_to_float(load_u16(b + kQ6KD));
        const float d0 = d * static_cast<float>(static_cast<int8_t>(b[kQ6KSc + r0 / 16]));
        const float d1 = d * static_cast<float>(static_cast<int8_t>(b[kQ6KSc + r0 / 16 + 1]));
        const int lo_shift = g >= 2 ? 4 : 0;
        uint8_t lo[32], hi[32];
        load_bytes2<32>(ql, lo);
        load_bytes2<32>(qh, hi);
#pragma unroll
        for (int l = 0; l < 32; ++l) {
            const int q = (((lo[l] >> lo_shift) & 15) | (((hi[l] >> (2 * g)) & 3) << 4)) - 32;
            w[l] = (l < 16 ? d0 : d1) * static_cast<float>(q);
        }
    }
}

} // namespace llmwb::cuda::detail
