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
    Q8_0 = 8,
    Q4_K = 12,
    Q6_K = 14,
    BF16 = 30,
};

// Elements per block (1 for float types, 32 for Q4_0/Q8_0, 256 for K-quants).
constexpr int64_t dtype_block_elems(DType t) {
    switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
        return 1;
    case DType::Q4_0:
    case DType::Q8_0:
        return 32;
    case DType::Q4_K:
    case DType::Q6_K:
        return 256;
    }
    return 0;
}

// Bytes per block.
constexpr int64_t dtype_block_bytes(DType t) {
    switch (t) {
    case DType::F32:
        return 4;
    case DType::F16:
    case DType::BF16:
        return 2;
    case DType::Q4_0:
        return 18; // fp16 d + 16 bytes of nibbles
    case DType::Q8_0:
        return 34; // fp16 d + 32 int8
    case DType::Q4_K:
        return 144; // fp16 d, dmin + 12 bytes scales + 128 bytes nibbles
    case DType::Q6_K:
        return 210; // 128 ql + 64 qh + 16 int8 scales + fp16 d
    }
    return 0;
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
    case DType::Q8_0:
        return "Q8_0";
    case DType::Q4_K:
        return "Q4_K";
    case DType::Q6_K:
        return "Q6_K";
    }
    return "?";
}

// Maps a raw GGML type id to a supported DType; nullopt for unknown/unsupported ids.
constexpr std::optional<DType> dtype_from_ggml(uint32_t id) {
    switch (id) {
    case 0:
        return DType::F32;
    case 1:
        return DType::F16;
    case 2:
        return DType::Q4_0;
    case 8:
        return DType::Q8_0;
    case 12:
        return DType::Q4_K;
    case 14:
        return DType::Q6_K;
    case 30:
        return DType::BF16;
    default:
        return std::nullopt;
    }
}

// Bytes of a row of n elements; n must be a multiple of dtype_block_elems(t).
constexpr int64_t dtype_row_bytes(DType t, int64_t n) {
    return n / dtype_block_elems(t) * dtype_block_bytes(t);
}

} // namespace llmwb
