// Tensor-core (f16 operands, fp32 accumulation) attention for prefill rows (internal).
#pragma once

#include "kernels/cuda/ops/cuda_ops.h"

namespace llmwb::cuda::detail {

// Sequences with at least this many query rows go to the tensor-core kernel.
constexpr int kTcMinQuery = 64;

// head_dim a multiple of 16 up to 128 (the shared-memory tile must fit every supported GPU).
inline bool attention_tc_supported(const AttentionParams& p) {
    return p.head_dim % 16 == 0 && p.head_dim <= 128;
}

// Computes the output rows of every sequence whose query length is >= kTcMinQuery (the others
// are left alone). Same semantics as paged_attention; arguments already validated.
OpStatus launch_attention_tc(float* out, const float* q, const void* k_cache, const void* v_cache,
                             const AttentionBatch& b, const AttentionParams& p,
                             cudaStream_t stream);

} // namespace llmwb::cuda::detail
