// Device-side decoding of every weight dtype (layouts of kernels/cpu/quant_blocks.h, GGML's), per
// element and per chunk of 32 consecutive elements of a row.
//
// Alignment: a weight matrix starts 16-byte aligned and its rows are whole blocks, so a block
// starts at a multiple of gcd(16, block bytes) and every load below uses at most that alignment
// (dtype_load_align): Q4_K/Q5_K (144/176 bytes) 16, Q5_1/IQ4_XS (24/136) 8, Q4_1/Q2_K (20/84) 4,
// Q4_0/Q5_0/Q8_0/Q3_K/Q6_K/IQ4_NL (18/22/34/110/210/18) 2.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/dtype.h"
#include "kernels/cpu/quant_blocks.h"

namespace llmwb::cuda::detail {

// The largest power-of-two alignment (<= 16) every block of t is guaranteed when the matrix
// starts 16-byte aligned; the decoders below never load wider than this.
constexpr int dtype_load_align(DType t) {
    const int64_t b = dtype_block_bytes(t);
    int a = 16;
    while (a > 1 && b % a != 0)
        a /= 2;
    return a;
}
static_assert(dtype_load_align(DType::Q4_K) == 16 && dtype_load_align(DType::Q5_K) == 16);
static_assert(dtype_load_align(DType::Q5_1) == 8 && dtype_load_align(DType::IQ4_XS) == 8);
static_assert(dtype_load_align(DType::Q4_1) == 4 && dtype_load_align(DType::Q2_K) == 4);
static_assert(dtype_load_align(DType::Q3_K) == 2 && dtype_load_align(DType::Q5_0) == 2);

__device__ __forceinline__ float half_bits_to_float(uint16_t h) {
    return __half2float(__ushort_as_half(h));
}
__device__ __forceinline__ float bf16_bits_to_float(uint16_t b) {
    return __uint_as_float(static_cast<uint32_t>(b) << 16);
}
__device__ __forceinline__ uint16_t load_u16(const uint8_t* p) {
    return *reinterpret_cast<const uint16_t*>(p); // every u16 field is 2-byte aligned
}
// A little-endian u32 at a 2-byte aligned address (Q5_0's qh).
__device__ __forceinline__ uint32_t load_u32_a2(const uint8_t* p) {
    return static_cast<uint32_t>(load_u16(p)) | (static_cast<uint32_t>(load_u16(p + 2)) << 16);
}

// N bytes from an A-byte aligned address (A = 2, 4, 8 or 16; N a multiple of A), read A bytes
// at a time.
template <int A, int N> __device__ __forceinline__ void load_bytes(const uint8_t* p, uint8_t* out) {
    static_assert(N % A == 0, "whole words");
    if constexpr (A == 16) {
#pragma unroll
        for (int i = 0; i < N / 16; ++i) {
            const uint4 v = reinterpret_cast<const uint4*>(p)[i];
            const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int k = 0; k < 16; ++k)
                out[16 * i + k] = static_cast<uint8_t>(words[k / 4] >> (8 * (k % 4)));
        }
    } else if constexpr (A == 8) {
#pragma unroll
        for (int i = 0; i < N / 8; ++i) {
            const uint2 v = reinterpret_cast<const uint2*>(p)[i];
#pragma unroll
            for (int k = 0; k < 8; ++k)
                out[8 * i + k] = static_cast<uint8_t>((k < 4 ? v.x : v.y) >> (8 * (k % 4)));
        }
    } else if constexpr (A == 4) {
#pragma unroll
        for (int i = 0; i < N / 4; ++i) {
            const uint32_t v = reinterpret_cast<const uint32_t*>(p)[i];
#pragma unroll
            for (int k = 0; k < 4; ++k)
                out[4 * i + k] = static_cast<uint8_t>(v >> (8 * k));
        }
    } else {
        static_assert(A == 2, "alignment 2, 4, 8 or 16");
        const uint16_t* w = reinterpret_cast<const uint16_t*>(p);
#pragma unroll
        for (int i = 0; i < N / 2; ++i) {
            const uint16_t v = w[i];
            out[2 * i] = static_cast<uint8_t>(v & 0xFF);
            out[2 * i + 1] = static_cast<uint8_t>(v >> 8);
        }
    }
}

// n bytes (n even) from a 2-byte aligned address (quantized blocks of 18, 34 and 210 bytes are
// only 2-byte aligned).
template <int N> __device__ __forceinline__ void load_bytes2(const uint8_t* p, uint8_t* out) {
    load_bytes<2, N>(p, out);
}

// The IQ4_NL / IQ4_XS code book (kernels::kIQ4Values) packed 8 signed bytes per word, so that a
// lookup is a shift (no table in memory, nothing for the constant cache to serialise).
constexpr uint64_t iq4_pack(int first) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v |= static_cast<uint64_t>(static_cast<uint8_t>(kernels::kIQ4Values[first + i])) << (8 * i);
    return v;
}
constexpr uint64_t kIQ4Lo = iq4_pack(0), kIQ4Hi = iq4_pack(8);
__device__ __forceinline__ float iq4_value(int code) {
    const uint64_t w = code < 8 ? kIQ4Lo : kIQ4Hi;
    return static_cast<float>(static_cast<int8_t>(static_cast<uint8_t>(w >> (8 * (code & 7)))));
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

// Q3_K: the 6-bit scale of sub-block j (0..15) minus its bias of 32 (kernels::q3k_scale).
__device__ __forceinline__ int q3k_scale_dev(const uint8_t* s, int j) {
    int v;
    if (j < 4)
        v = (s[j] & 0xF) | ((s[j + 8] & 3) << 4);
    else if (j < 8)
        v = (s[j] & 0xF) | (((s[j + 4] >> 2) & 3) << 4);
    else if (j < 12)
        v = (s[j - 8] >> 4) | (((s[j] >> 4) & 3) << 4);
    else
        v = (s[j - 8] >> 4) | (((s[j - 4] >> 6) & 3) << 4);
    return v - 32;
}

// Block byte offsets inside the structs of quant_blocks.h.
using kernels::BlockIQ4_XS;
using kernels::BlockQ2_K;
using kernels::BlockQ3_K;
using kernels::BlockQ4_1;
using kernels::BlockQ5_0;
using kernels::BlockQ5_1;
using kernels::BlockQ5_K;
constexpr int kQ4KScales = 4, kQ4KQs = 16;             // d, dmin, scales[12], qs[128]
constexpr int kQ6KQh = 128, kQ6KSc = 192, kQ6KD = 208; // ql[128], qh[64], scales[16], d
constexpr int kQ41Qs = offsetof(BlockQ4_1, qs);        // 4
constexpr int kQ50Qh = offsetof(BlockQ5_0, qh), kQ50Qs = offsetof(BlockQ5_0, qs);     // 2, 6
constexpr int kQ51Qh = offsetof(BlockQ5_1, qh), kQ51Qs = offsetof(BlockQ5_1, qs);     // 4, 8
constexpr int kQ2KQs = offsetof(BlockQ2_K, qs), kQ2KD = offsetof(BlockQ2_K, d);       // 16, 80
constexpr int kQ3KQs = offsetof(BlockQ3_K, qs), kQ3KSc = offsetof(BlockQ3_K, scales); // 32, 96
constexpr int kQ3KD = offsetof(BlockQ3_K, d);                                         // 108
constexpr int kQ5KSc = offsetof(BlockQ5_K, scales), kQ5KQh = offsetof(BlockQ5_K, qh); // 4, 16
constexpr int kQ5KQs = offsetof(BlockQ5_K, qs);                                       // 48
constexpr int kXSScH = offsetof(BlockIQ4_XS, scales_h), kXSScL = offsetof(BlockIQ4_XS, scales_l);
constexpr int kXSQs = offsetof(BlockIQ4_XS, qs); // 8
static_assert(kQ41Qs == 4 && kQ50Qs == 6 && kQ51Qs == 8 && kQ2KD == 80 && kQ3KD == 108);
static_assert(kQ5KQs % 16 == 0 && kQ5KQh % 16 == 0 && kXSQs % 8 == 0 && kQ51Qs % 8 == 0);
static_assert(offsetof(BlockQ2_K, dmin) == kQ2KD + 2 && offsetof(BlockQ5_K, dmin) == 2);
static_assert(kXSScH == 2 && kXSScL == 4 && kQ2KQs == 16 && kQ3KQs == 32 && kQ3KSc == 96);

// IQ4_XS: the 6-bit scale of sub-block j (0..7) of the block at b minus its bias of 32
// (kernels::iq4xs_scale).
__device__ __forceinline__ int iq4xs_scale_dev(const uint8_t* b, int j) {
    const int lo = (b[kXSScL + j / 2] >> (4 * (j % 2))) & 0xF;
    const int hi = (load_u16(b + kXSScH) >> (2 * j)) & 3;
    return (lo | (hi << 4)) - 32;
}

template <DType T> inline constexpr bool kNoDecoder = false;

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
    } else if constexpr (T == DType::Q4_0 || T == DType::IQ4_NL) {
        const uint8_t* b = row + (e / 32) * 18;
        const int j = static_cast<int>(e % 32);
        const int q = j < 16 ? (b[2 + j] & 15) : (b[2 + j - 16] >> 4);
        const float d = half_bits_to_float(load_u16(b));
        return T == DType::Q4_0 ? d * static_cast<float>(q - 8) : d * iq4_value(q);
    } else if constexpr (T == DType::Q4_1) {
        const uint8_t* b = row + (e / 32) * 20;
        const int j = static_cast<int>(e % 32);
        const int q = j < 16 ? (b[kQ41Qs + j] & 15) : (b[kQ41Qs + j - 16] >> 4);
        return half_bits_to_float(load_u16(b)) * static_cast<float>(q) +
               half_bits_to_float(load_u16(b + 2));
    } else if constexpr (T == DType::Q5_0 || T == DType::Q5_1) {
        constexpr bool q51 = T == DType::Q5_1;
        const uint8_t* b = row + (e / 32) * (q51 ? 24 : 22);
        const int j = static_cast<int>(e % 32);
        const uint8_t* qs = b + (q51 ? kQ51Qs : kQ50Qs);
        const int lo = j < 16 ? (qs[j] & 15) : (qs[j - 16] >> 4);
        const int hi = (b[(q51 ? kQ51Qh : kQ50Qh) + j / 8] >> (j % 8)) & 1;
        const float d = half_bits_to_float(load_u16(b));
        if constexpr (q51)
            return d * static_cast<float>(lo | (hi << 4)) + half_bits_to_float(load_u16(b + 2));
        else
            return d * static_cast<float>((lo | (hi << 4)) - 16);
    } else if constexpr (T == DType::Q2_K) {
        const uint8_t* b = row + (e / 256) * 84;
        const int r = static_cast<int>(e % 256);
        const int h = r / 128, k = (r % 128) / 32, l = r % 32;
        const int q = (b[kQ2KQs + 32 * h + l] >> (2 * k)) & 3;
        const int sc = b[r / 16]; // sub-block 8h + 2k + l / 16 == r / 16
        return half_bits_to_float(load_u16(b + kQ2KD)) * static_cast<float>((sc & 15) * q) -
               half_bits_to_float(load_u16(b + kQ2KD + 2)) * static_cast<float>(sc >> 4);
    } else if constexpr (T == DType::Q3_K) {
        const uint8_t* b = row + (e / 256) * 110;
        const int r = static_cast<int>(e % 256);
        const int h = r / 128, k = (r % 128) / 32, l = r % 32;
        const int lo = (b[kQ3KQs + 32 * h + l] >> (2 * k)) & 3;
        const int hbit = (b[l] >> (4 * h + k)) & 1; // hmask at offset 0
        const int q = lo - (hbit ? 0 : 4);
        return half_bits_to_float(load_u16(b + kQ3KD)) *
               static_cast<float>(q3k_scale_dev(b + kQ3KSc, r / 16) * q);
    } else if constexpr (T == DType::Q4_K || T == DType::Q5_K) {
        constexpr bool q5 = T == DType::Q5_K;
        const uint8_t* b = row + (e / 256) * (q5 ? 176 : 144);
        const int r = static_cast<int>(e % 256);
        const int j = r / 32, l = r % 32, c = j / 2;
        const uint8_t byte = b[(q5 ? kQ5KQs : kQ4KQs) + 32 * c + l];
        int q = (j & 1) ? (byte >> 4) : (byte & 15);
        if constexpr (q5)
            q |= ((b[kQ5KQh + l] >> j) & 1) << 4;
        int sc, m;
        q4k_scale_min_dev(b + kQ4KScales, j, &sc, &m);
        const float d = half_bits_to_float(load_u16(b));
        const float dmin = half_bits_to_float(load_u16(b + 2));
        return d * static_cast<float>(sc) * static_cast<float>(q) - dmin * static_cast<float>(m);
    } else if constexpr (T == DType::Q6_K) {
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
    } else if constexpr (T == DType::IQ4_XS) {
        const uint8_t* b = row + (e / 256) * 136;
        const int r = static_cast<int>(e % 256);
        const int j = r / 32, l = r % 32;
        const uint8_t byte = b[kXSQs + 16 * j + (l % 16)];
        const int q = l < 16 ? (byte & 15) : (byte >> 4);
        return half_bits_to_float(load_u16(b)) * static_cast<float>(iq4xs_scale_dev(b, j)) *
               iq4_value(q);
    } else {
        static_assert(kNoDecoder<T>, "no device decoder for this dtype");
        return 0.0f;
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
    } else if constexpr (T == DType::Q4_0 || T == DType::IQ4_NL) {
        const uint8_t* b = row + c * 18;
        const float d = half_bits_to_float(load_u16(b));
        uint8_t q[16];
        load_bytes2<16>(b + 2, q);
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const int byte = q[i];
            if constexpr (T == DType::Q4_0) {
                w[i] = d * static_cast<float>((byte & 15) - 8);
                w[i + 16] = d * static_cast<float>((byte >> 4) - 8);
            } else {
                w[i] = d * iq4_value(byte & 15);
                w[i + 16] = d * iq4_value(byte >> 4);
            }
        }
    } else if constexpr (T == DType::Q4_1) {
        const uint8_t* b = row + c * 20;
        const float d = half_bits_to_float(load_u16(b));
        const float m = half_bits_to_float(load_u16(b + 2));
        uint8_t q[16];
        load_bytes<4, 16>(b + kQ41Qs, q);
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            w[i] = d * static_cast<float>(q[i] & 15) + m;
            w[i + 16] = d * static_cast<float>(q[i] >> 4) + m;
        }
    } else if constexpr (T == DType::Q5_0 || T == DType::Q5_1) {
        constexpr bool q51 = T == DType::Q5_1;
        const uint8_t* b = row + c * (q51 ? 24 : 22);
        const float d = half_bits_to_float(load_u16(b));
        const float m = q51 ? half_bits_to_float(load_u16(b + 2)) : 0.0f;
        constexpr int bias = q51 ? 0 : -16;
        uint32_t qh;
        uint8_t q[16];
        if constexpr (q51) {
            qh = *reinterpret_cast<const uint32_t*>(b + kQ51Qh); // 4-byte aligned
            load_bytes<8, 16>(b + kQ51Qs, q);
        } else {
            qh = load_u32_a2(b + kQ50Qh);
            load_bytes<2, 16>(b + kQ50Qs, q);
        }
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const int q0 = (q[i] & 15) | static_cast<int>(((qh >> i) & 1u) << 4);
            const int q1 = (q[i] >> 4) | static_cast<int>(((qh >> (i + 16)) & 1u) << 4);
            w[i] = d * static_cast<float>(q0 + bias) + m;
            w[i + 16] = d * static_cast<float>(q1 + bias) + m;
        }
    } else if constexpr (T == DType::Q2_K) {
        const uint8_t* b = row + (c / 8) * 84;
        const int j = static_cast<int>(c % 8); // elements 32j..: half j / 4, shift 2 (j % 4)
        const float d = half_bits_to_float(load_u16(b + kQ2KD));
        const float dmin = half_bits_to_float(load_u16(b + kQ2KD + 2));
        const int s0 = b[2 * j], s1 = b[2 * j + 1]; // sub-blocks 2j, 2j + 1
        const float d0 = d * static_cast<float>(s0 & 15), m0 = dmin * static_cast<float>(s0 >> 4);
        const float d1 = d * static_cast<float>(s1 & 15), m1 = dmin * static_cast<float>(s1 >> 4);
        const int shift = 2 * (j % 4);
        uint8_t q[32];
        load_bytes<4, 32>(b + kQ2KQs + 32 * (j / 4), q);
#pragma unroll
        for (int l = 0; l < 32; ++l) {
            const float v = static_cast<float>((q[l] >> shift) & 3);
            w[l] = l < 16 ? d0 * v - m0 : d1 * v - m1;
        }
    } else if constexpr (T == DType::Q3_K) {
        const uint8_t* b = row + (c / 8) * 110;
        const int j = static_cast<int>(c % 8); // as Q2_K; high bits: bit j of hmask[l]
        const float d = half_bits_to_float(load_u16(b + kQ3KD));
        const float d0 = d * static_cast<float>(q3k_scale_dev(b + kQ3KSc, 2 * j));
        const float d1 = d * static_cast<float>(q3k_scale_dev(b + kQ3KSc, 2 * j + 1));
        const int shift = 2 * (j % 4);
        uint8_t q[32], hm[32];
        load_bytes<2, 32>(b + kQ3KQs + 32 * (j / 4), q);
        load_bytes<2, 32>(b, hm);
#pragma unroll
        for (int l = 0; l < 32; ++l) {
            const int v = ((q[l] >> shift) & 3) - (((hm[l] >> j) & 1) ? 0 : 4);
            w[l] = (l < 16 ? d0 : d1) * static_cast<float>(v);
        }
    } else if constexpr (T == DType::Q4_K || T == DType::Q5_K) {
        constexpr bool q5 = T == DType::Q5_K;
        const uint8_t* b = row + (c / 8) * (q5 ? 176 : 144);
        const int j = static_cast<int>(c % 8); // sub-block of 32
        int sc, m;
        q4k_scale_min_dev(b + kQ4KScales, j, &sc, &m);
        const float d = half_bits_to_float(load_u16(b)) * static_cast<float>(sc);
        const float mn = half_bits_to_float(load_u16(b + 2)) * static_cast<float>(m);
        const int shift = (j & 1) ? 4 : 0;
        uint8_t q[32];
        load_bytes<16, 32>(b + (q5 ? kQ5KQs : kQ4KQs) + 32 * (j / 2), q); // 16-byte aligned
        if constexpr (q5) {
            uint8_t qh[32];
            load_bytes<16, 32>(b + kQ5KQh, qh);
#pragma unroll
            for (int l = 0; l < 32; ++l) {
                const int v = ((q[l] >> shift) & 15) | (((qh[l] >> j) & 1) << 4);
                w[l] = d * static_cast<float>(v) - mn;
            }
        } else {
#pragma unroll
            for (int l = 0; l < 32; ++l)
                w[l] = d * static_cast<float>((q[l] >> shift) & 15) - mn;
        }
    } else if constexpr (T == DType::Q6_K) {
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
    } else if constexpr (T == DType::IQ4_XS) {
        const uint8_t* b = row + (c / 8) * 136;
        const int j = static_cast<int>(c % 8); // sub-block of 32
        const float dl =
            half_bits_to_float(load_u16(b)) * static_cast<float>(iq4xs_scale_dev(b, j));
        uint8_t q[16];
        load_bytes<8, 16>(b + kXSQs + 16 * j, q);
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            w[i] = dl * iq4_value(q[i] & 15);
            w[i + 16] = dl * iq4_value(q[i] >> 4);
        }
    } else {
        static_assert(kNoDecoder<T>, "no device decoder for this dtype");
    }
}

} // namespace llmwb::cuda::detail
