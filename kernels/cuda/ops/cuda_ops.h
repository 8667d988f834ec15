// CUDA ops of the transformer forward pass (the GPU counterpart of kernels/cpu and the
// engine/runtime attention/rope ops). Plain C++ header: no CUDA C++ constructs, usable from .cpp.
//
// Conventions, for every function below:
// - Every pointer is a DEVICE pointer unless its name starts with host_.
// - Every function only enqueues work on the given stream: no allocation, no synchronisation, no
//   host reads of device memory, so all of them may be called inside CUDA graph capture
//   (blas_create/blas_destroy are the exceptions: call them outside capture).
// - Matrices are row-major. Activations are fp32.
// - Sizes are checked (bad sizes -> OpStatus::InvalidArgument before anything is enqueued);
//   device data (ids, slots, block tables) is trusted: the caller validated it on the host
//   (ForwardBatch::validate), except that token ids are clamped into the table.
// - Weight dtypes and block layouts are exactly those of kernels/cpu/dtype.h and quant_blocks.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/dtype.h"
#include "kernels/cpu/kv_format.h"

namespace llmwb::cuda {

using llmwb::DType;
using llmwb::KvDtype;
using llmwb::KvLayout;

enum class OpStatus : int {
    Ok = 0,
    InvalidArgument,   // a size/dtype the op does not support (nothing enqueued)
    WorkspaceTooSmall, // the workspace is smaller than the *_workspace_bytes() figure needs
    CudaError,         // a launch failed (cudaGetLastError); see last_error_message()
    BlasError,         // a cuBLAS / cuBLASLt call failed
};

const char* op_status_name(OpStatus s);

// Text of the last failure on this host thread (empty when none); for logs.
const char* last_error_message();

// ---------------------------------------------------------------------------------------------
// cuBLAS context: one handle bound to one stream with a caller-visible workspace (set with
// cublasSetWorkspace, so GEMMs never allocate and can be captured into a graph).
struct BlasContext;

// Creates the handle and cudaMallocs `workspace_bytes` (0 -> 32 MiB) of cuBLAS workspace.
// Not capturable. *out is null on failure.
OpStatus blas_create(BlasContext** out, cudaStream_t stream, size_t workspace_bytes = 0);
void blas_destroy(BlasContext* ctx); // null is fine; synchronises the device first

// ---------------------------------------------------------------------------------------------
// Weight matrix in device memory, same meaning as kernels::WeightMatrix: [rows][cols] in `type`
// (cols a multiple of dtype_block_elems(type)); data must be 16-byte aligned (matmul and
// dequantize_to_bf16 refuse a base with less alignment than the type's blocks get inside a
// 16-byte aligned matrix: 16 for Q4_K/Q5_K, 8 for Q5_1/IQ4_XS, 4 for F32/Q4_1/Q2_K, else 2).
struct DeviceMatrix {
    DType type = DType::F32;
    const void* data = nullptr;
    int64_t rows = 0;
    int64_t cols = 0;
};

// Bytes of scratch matmul() needs for up to max_n tokens (0 for some dtypes/sizes).
size_t matmul_workspace_bytes(int64_t rows, int64_t cols, int64_t max_n, DType type);

// out[t][r] = sum_c W[r][c] * x[t][c], t < n (out: [n][rows], x: [n][cols], no aliasing).
// n <= 8: a GEMV kernel that streams each weight row once for all n tokens (fp32 activations,
//   fp32 accumulation), any dtype.
// n > 8:  F32 -> cublasSgemm; F16/BF16 -> cublasGemmEx with x converted to f16/bf16 in the
//   workspace (fp32 accumulation); quantized -> weight rows dequantized to bf16 in the workspace
//   (whole matrix, or tiles of rows when the workspace is smaller) + bf16 GEMM.
// `workspace` may be null when matmul_workspace_bytes() is 0.
OpStatus matmul(BlasContext& blas, float* out, const DeviceMatrix& w, const float* x, int64_t n,
                void* workspace, size_t workspace_bytes, cudaStream_t stream);

// out [w.rows][w.cols] bf16 (raw 16-bit values) = the quantized matrix w (any quantized type of
// kAllDTypes) dequantized, e.g. once at load time so that large-batch products of a quantized model
// can use the bf16 GEMM without dequantizing per call (memory permitting). out 16-byte aligned.
OpStatus dequantize_to_bf16(void* out, const DeviceMatrix& w, cudaStream_t stream);

// out[t][0..hidden) = row ids[t] of table ([vocab][hidden] in table.type), dequantized to fp32.
// ids outside [0, vocab) are clamped. table.cols == hidden.
OpStatus embedding_gather(float* out, const DeviceMatrix& table, const int32_t* ids, int64_t n,
                          cudaStream_t stream);

// Per row of dim: out = x / sqrt(mean(x^2) + eps) * weight. out may alias x.
// qk_norm (qwen3) is rmsnorm with rows = n_tokens * heads and dim = head_dim.
OpStatus rmsnorm(float* out, const float* x, const float* weight, int64_t rows, int64_t dim,
                 float eps, cudaStream_t stream);

// residual += delta; out = rmsnorm(residual) (per row). out must not alias residual or delta.
OpStatus add_rmsnorm(float* residual_inout, float* out, const float* delta, const float* weight,
                     int64_t rows, int64_t dim, float eps, cudaStream_t stream);

// Rotary embedding in place on q [n][heads][head_dim] and k [n][kv_heads][head_dim] (k may be
// null) at positions[n]. inv_freq[rotary_dim/2] in DOUBLE (as engine/runtime/rope.h computes it,
// llama3 / LongRoPE / linear factors included) so that angles of long positions match the CPU
// exactly enough. Only the first rotary_dim dimensions of each head turn (0 = head_dim; partial
// rotary), the rest pass through; cos and sin are multiplied by cs_scale (LongRoPE's attention
// factor; 1 otherwise).
// interleaved = false: pairs (i, i + rotary_dim/2) (HF rotate-half); true: pairs (2i, 2i+1).
OpStatus rope(float* q, float* k, const int32_t* positions, int64_t n, int32_t heads,
              int32_t kv_heads, int32_t head_dim, const double* inv_freq, bool interleaved,
              cudaStream_t stream, int32_t rotary_dim = 0, float cs_scale = 1.0f);

// out = gelu_tanh(gate) * up (gemma's GeGLU, the tanh approximation; out may alias gate).
OpStatus gelu_tanh_mul(float* out, const float* gate, const float* up, int64_t n_elems,
                       cudaStream_t stream);
// x = cap * tanh(x / cap) (gemma2's final-logit soft-cap); cap finite and > 0.
OpStatus softcap(float* x, int64_t n_elems, float cap, cudaStream_t stream);
// x *= s (gemma's embedding scale).
OpStatus scale(float* x, float s, int64_t n_elems, cudaStream_t stream);

// out = silu(gate) * up (out may alias gate), out = a + b (out may alias a), x[t][:] += bias.
OpStatus silu_mul(float* out, const float* gate, const float* up, int64_t n_elems,
                  cudaStream_t stream);
OpStatus add(float* out, const float* a, const float* b, int64_t n_elems, cudaStream_t stream);
OpStatus bias_add(float* x, const float* bias, int64_t n, int64_t dim, cudaStream_t stream);

// Writes k[t], v[t] ([n][kv_heads * head_dim] fp32) to slot slot_mapping[t] of the caches, one
// layer's K and V pools in `layout` (kernels/cpu/kv_format.h: block-major, any KvDtype; int8
// rows get their fp32 scale after the block's values), with exactly the bytes the CPU's
// kv_store_row_ref writes: fp8 stores fp8(x * inv_scale) (k_inv_scale / v_inv_scale: 1 / the
// layer's scale), int8 quantizes each (token, kv head) row with its own scale (a warp reduction
// for the row's largest |x|). Slots < 0 are skipped (padding tokens). Pools 16-byte aligned.
OpStatus kv_write(void* k_cache, void* v_cache, const float* k, const float* v,
                  const int64_t* slot_mapping, int64_t n, const KvLayout& layout, float k_inv_scale,
                  float v_inv_scale, cudaStream_t stream);

// Batch metadata of paged_attention (device arrays, same meaning as ForwardBatch's).
struct AttentionBatch {
    const int32_t* query_start = nullptr;  // [n_seqs + 1]
    const int32_t* context_lens = nullptr; // [n_seqs], >= the sequence's query length
    const int32_t* block_tables = nullptr; // [n_seqs][max_blocks_per_seq]
    int32_t max_blocks_per_seq = 0;
    int32_t n_seqs = 0;
    int32_t n_tokens = 0; // query_start[n_seqs]
    // Host-side bounds. max_query_len must be >= every query length (rows beyond it are not
    // computed); max_context_len only sizes the key splits (a longer context is still correct,
    // its last split just does more work), so a graph captured with a smaller bound stays valid.
    int32_t max_query_len = 0;
    int32_t max_context_len = 0;
};

struct AttentionParams {
    int32_t heads = 0;
    int32_t kv_heads = 0;   // heads % kv_heads == 0
    int32_t head_dim = 0;   // multiple of 32, <= 256
    int32_t block_size = 0; // 8, 16 or 32
    float scale = 0.0f;
    // The caches' element type (any KvDtype; layout KvLayout{kv_dtype, block_size, kv_heads,
    // head_dim}). Every type is dequantized in registers as it is loaded: fp8 values times the
    // layer's k_scale / v_scale, int8 values times their row's stored scale.
    KvDtype kv_dtype = KvDtype::F32;
    // Sequences with >= 64 query rows (prefill) run on tensor cores (q, K, V, P rounded to f16,
    // fp32 accumulation) when head_dim <= 128; false keeps every row on the fp32 kernel. Every
    // KV type takes that path: its K/V tiles are dequantized into the same f16 shared-memory
    // tiles (values beyond the f16 range saturate at +-65504).
    bool tensor_cores = true;
    float k_scale = 1.0f, v_scale = 1.0f; // fp8 per-layer scales (stored value = x / scale)
    // Sliding window (mistral, gemma2/3's local layers): the query at context index pos sees keys
    // (pos - window, pos] only, and blocks wholly before pos - window + 1 are never read (the KV
    // manager may have freed them: their table entries need not be valid). 0 = every key.
    int32_t window = 0;
    // gemma2: scores = cap * tanh(scores / cap) after the scale, before the softmax. 0 = none.
    float logit_softcap = 0.0f;
};

// Scratch for splitting long contexts (flash-decoding); 0 disables splitting (still correct).
size_t paged_attention_workspace_bytes(int32_t max_tokens, int32_t heads, int32_t head_dim,
                                       int32_t max_context_len);

// Same semantics as llmwb::paged_attention (engine/runtime/attention.h): query row i of a
// sequence with query length q and context c sits at index c - q + i and attends to keys
// 0..c-q+i of the sequence's block table. out, q: [n_tokens][heads * head_dim] fp32.
// k_cache/v_cache: one layer's pools in KvLayout{kv_dtype, block_size, kv_heads, head_dim}
// (for F32/F16: [num_blocks][block_size][kv_heads][head_dim]), 16-byte aligned.
// One fp32 kernel handles prefill chunks and decode rows in the same batch (tiles of query rows
// x heads of one kv group, online softmax over key tiles); long contexts are split over the
// workspace and combined by a second kernel. With params.tensor_cores, sequences of >= 64 query
// rows go to a tensor-core kernel instead (no key splits in such a batch).
OpStatus paged_attention(float* out, const float* q, const void* k_cache, const void* v_cache,
                         const AttentionBatch& batch, const AttentionParams& params,
                         void* workspace, size_t workspace_bytes, cudaStream_t stream);

// out_ids[t] = argmax over logits[t][0..vocab) (lowest index on ties; NaN never wins).
OpStatus argmax_rows(int32_t* out_ids, const float* logits, int64_t n, int64_t vocab,
                     cudaStream_t stream);

} // namespace llmwb::cuda
