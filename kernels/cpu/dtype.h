// Tensor element types. Numeric values equal GGML's type ids so GGUF files map directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace llmwb {

enum class DType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    IQ4_NL = 20,
    IQ4_XS = 23,
    BF16 = 30,
};

// Every supported type, in GGML id order (for tests, benchmarks and tables).
inline constexpr DType kAllDTypes[] = {DType::F32,    DType::F16,    DType::Q4_0, DType::Q4_1,
                                       DType::Q5_0,   DType::Q5_1,   DType::Q8_0, DType::Q2_K,
                                       DType::Q3_K,   DType::Q4_K,   DType::Q5_K, DType::Q6_K,
                                       DType::IQ4_NL, DType::IQ4_XS, DType::BF16};

// Elements per block (1 for float types, 32 for the legacy quants and IQ4_NL, 256 for K-quants
// and IQ4_XS).
constexpr int64_t dtype_block_elems(DType t) {
    switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
        return 1;
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0:
    case DType::IQ4_NL:
        return 32;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::IQ4_XS:
        return 256;
    }
    return 0;
}

// Bytes per block (GGML's block structs; see kernels/cpu/quant_blocks.h).
constexpr int64_t dtype_block_bytes(DType t) {
    switch (t) {
    case DType::F32:
        return 4;
    case DType::F16:
    case DType::BF16:
        return 2;
    case DType::Q4_0:
        return 18; // fp16 d + 16 bytes of nibbles
    case DType::Q4_1:
        return 20; // fp16 d, m + 16 bytes of nibbles
    case DType::Q5_0:
        return 22; // fp16 d + 4 bytes of high bits + 16 bytes of nibbles
    case DType::Q5_1:
        return 24; // fp16 d, m + 4 bytes of high bits + 16 bytes of nibbles
    case DType::Q8_0:
        return 34; // fp16 d + 32 int8
    case DType::Q2_K:
        return 84; // 16 scale/min bytes + 64 bytes of 2-bit codes + fp16 d, dmin
    case DType::Q3_K:
        return 110; // 32 hmask + 64 low bits + 12 bytes of 6-bit scales + fp16 d
    case DType::Q4_K:
        return 144; // fp16 d, dmin + 12 bytes scales + 128 bytes nibbles
    case DType::Q5_K:
        return 176; // fp16 d, dmin + 12 bytes scales + 32 high bits + 128 bytes nibbles
    case DType::Q6_K:
        return 210; // 128 ql + 64 qh + 16 int8 scales + fp16 d
    case DType::IQ4_NL:
        return 18; // fp16 d + 16 bytes of table indices
    case DType::IQ4_XS:
        return 136; // fp16 d + u16 scales_h + 4 scales_l + 128 bytes of table indices
    }
    return 0;
}

// Bits per weight of the type (block bytes * 8 / block elements).
constexpr double dtype_bits_per_weight(DType t) {
    return static_cast<double>(dtype_block_bytes(t)) * 8.0 /
           static_cast<double>(dtype_block_elems(t));
}

constexpr bool dtype_is_float(DType t) {
    return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

constexpr const char* dtype_name(DType t) {
    switch (t) {
    case DType::F32:
        return "F32";
    case DType::F16:
        return "F16";
    case DType::BF16:
        return "BF16";
    case DType::Q4_0:
        return "Q4_0";
    case DType::Q4_1:
        return "Q4_1";
    case DType::Q5_0:
        return "Q5_0";
    case DType::Q5_1:
        return "Q5_1";
    case DType::Q8_0:
        return "Q8_0";
    case DType::Q2_K:
        return "Q2_K";
    case DType::Q3_K:
        return "Q3_K";
    case DType::Q4_K:
        return "Q4_K";
    case DType::Q5_K:
        return "Q5_K";
    case DType::Q6_K:
        return "Q6_K";
    case DType::IQ4_NL:
        return "IQ4_NL";
    case DType::IQ4_XS:
        return "IQ4_XS";
    }
    return "?";
}

// Maps a raw GGML type id to a supported DType; nullopt for unknown/unsupported ids.
constexpr std::optional<DType> dtype_from_ggml(uint32_t id) {
    for (DType t : kAllDTypes)
        if (static_cast<uint32_t>(t) == id)
            return t;
    return std::nullopt;
}

// Bytes of a row of n elements; n must be a multiple of dtype_block_elems(t).
constexpr int64_t dtype_row_bytes(DType t, int64_t n) {
    return n / dtype_block_elems(t) * dtype_block_bytes(t);
}

} // namespace llmwb
