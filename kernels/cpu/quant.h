// Element conversions and (de)quantization of rows, for every DType. Block layouts are GGML's,
// so GGUF tensors are used as they are in the file.
#pragma once

#include <cstdint>

#include "kernels/cpu/dtype.h"

namespace llmwb::kernels {

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f); // round to nearest even
float bf16_to_fp32(uint16_t b);
uint16_t fp32_to_bf16(float f); // round to nearest even

// dst[0..n) = row of n elements at src in type t. n must be a multiple of the block size.
void dequantize_row(DType t, const void* src, float* dst, int64_t n);

// Writes n elements (a multiple of the block size) of src as type t into dst
// (dtype_row_bytes(t, n) bytes). Deterministic. importance: nullptr or n per-element weights
// (>= 0; an importance matrix's mean x^2 of the matching input column) that the scale searches
// minimise the weighted squared error with; ignored by the float types and Q8_0.
// Used by the model writer, `llmwb quantize` and the tests.
void quantize_row(DType t, const float* src, void* dst, int64_t n,
                  const float* importance = nullptr);

} // namespace llmwb::kernels
