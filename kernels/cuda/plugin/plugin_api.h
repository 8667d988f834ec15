/* The C ABI between the engine and the CUDA plugin (libllmwb_cuda.so), loaded at run time with
 * dlopen so that nothing but the plugin links the CUDA runtime. Both sides include this header.
 *
 * Versioning: the engine calls llmwb_cuda_plugin_api(LLMWB_CUDA_ABI_VERSION); the plugin returns
 * its function table only when it implements exactly that version (else NULL). Structs are only
 * extended by bumping the version.
 *
 * Conventions: plain C, no exceptions cross the boundary. Functions returning int return 0 on
 * success and -1 on failure; the failure's text is last_error() (thread-local in the plugin).
 * Every pointer in these structs is a HOST pointer; the plugin copies what it needs. */
#ifndef LLMWB_CUDA_PLUGIN_API_H
#define LLMWB_CUDA_PLUGIN_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LLMWB_CUDA_ABI_VERSION 4u
#define LLMWB_CUDA_PLUGIN_SYMBOL "llmwb_cuda_plugin_api"

/* A weight tensor as stored: row-major [rows][cols], dtype = llmwb::DType's numeric value (GGML
 * type ids; every type of kAllDTypes: F32 0, F16 1, Q4_0 2, Q4_1 3, Q5_0 6, Q5_1 7, Q8_0 8,
 * Q2_K 10, Q3_K 11, Q4_K 12, Q5_K 13, Q6_K 14, IQ4_NL 20, IQ4_XS 23, BF16 30; any other id fails
 * create_runner with a message naming the tensor). data == NULL: absent.
 * bytes = rows * row bytes. */
typedef struct LlmwbTensor {
    const void* data;
    uint32_t dtype;
    int64_t rows;
    int64_t cols;
    int64_t bytes;
} LlmwbTensor;

/* One layer. Norm weights and biases are given as fp32 vectors (NULL: absent). Gemma's norms
 * arrive as the multipliers (1 + w), as the loaders give them. Fused projections (phi3's qkv and
 * gate_up) are passed as the row ranges of the stored tensor (wq / wk / wv, w_gate / w_up point
 * into it). */
typedef struct LlmwbLayer {
    const float* attn_norm;      /* [hidden] */
    const float* ffn_norm;       /* [hidden] */
    const float* q_norm;         /* [head_dim] (qwen3, gemma3) */
    const float* k_norm;         /* [head_dim] (qwen3, gemma3) */
    const float* bq;             /* [heads * head_dim] (qwen2) */
    const float* bk;             /* [kv_heads * head_dim] */
    const float* bv;             /* [kv_heads * head_dim] */
    const float* post_attn_norm; /* (ABI 4) [hidden] gemma2/3: norm of the attention output */
    const float* post_ffn_norm;  /* (ABI 4) [hidden] gemma2/3: norm of the MLP output */
    int32_t sliding_window;      /* (ABI 4) keys (pos - window, pos]; 0 = every key */
    int32_t rope_local;          /* (ABI 4) 1: RoPE with LlmwbModel::inv_freq_local (gemma3) */
    LlmwbTensor wq, wk, wv, wo, w_gate, w_up, w_down; /* w_gate/up/down absent in MoE layers */
    /* (ABI 4) Mixture of experts (LlmwbModel::num_experts > 0): the router [n_expert][hidden]
     * and the experts as stored, [n_expert][3] tensors: gate [expert_inter][hidden], up (same),
     * down [hidden][expert_inter] (views of GGUF's stacked tensors, or one tensor each). */
    LlmwbTensor router;
    const LlmwbTensor* experts;
} LlmwbLayer;

/* (ABI 4) The MLP's gate activation. */
#define LLMWB_ACT_SILU 0
#define LLMWB_ACT_GELU_TANH 1

typedef struct LlmwbModel {
    int32_t vocab_size; /* rows of lm_head = length of a logits row */
    int32_t hidden_size;
    int32_t intermediate_size;
    int32_t num_layers;
    int32_t num_heads;
    int32_t num_kv_heads;
    int32_t head_dim;
    int32_t rope_interleaved; /* 0: rotate-half (HF), 1: interleaved pairs (llama GGUF) */
    float rms_norm_eps;
    const double* inv_freq;   /* [rotary_dim / 2], llama3 / LongRoPE / linear factors included */
    const float* output_norm; /* [hidden] */
    LlmwbTensor tok_embd;     /* [vocab][hidden] */
    LlmwbTensor lm_head;      /* [vocab][hidden]; may point at the same data as tok_embd (tied) */
    const LlmwbLayer* layers; /* [num_layers] */
    /* (ABI 4) Features of the newer families; zeros give the llama / qwen forward pass. */
    int32_t activation;           /* LLMWB_ACT_* */
    int32_t rotary_dim;           /* dims rotated per head (partial rotary); 0 = head_dim */
    float embedding_scale;        /* x = embedding * scale (gemma: sqrt(hidden)); 0 = 1 */
    float attn_scale;             /* attention score scale; 0 = 1 / sqrt(head_dim) */
    float attn_logit_softcap;     /* gemma2: scores = cap * tanh(scores / cap); 0 = none */
    float final_logit_softcap;    /* gemma2: logits = cap * tanh(logits / cap); 0 = none */
    float rope_scale;             /* cos/sin multiplier (LongRoPE attention factor); 0 = 1 */
    const double* inv_freq_local; /* [rotary_dim / 2] RoPE of layers with rope_local, or NULL */
    /* (ABI 4) Mixture of experts (qwen3moe; 0 experts = dense MLP): top num_experts_used of a
     * softmax over the router logits, renormalised to sum to 1 when expert_norm_topk. */
    int32_t num_experts;
    int32_t num_experts_used; /* 1..64 */
    int32_t expert_intermediate_size;
    int32_t expert_norm_topk;
} LlmwbModel;

/* KV cache element type (llmwb::KvDtype, kernels/cpu/kv_format.h: the same block-major layout
 * and stored bytes as the CPU backend): 0 = F16 (default), 1 = F32 (exact comparisons with the
 * CPU backend), 2 = BF16, 3 = FP8 E4M3, 4 = FP8 E5M2 (fp8: per-layer scales, set_kv_dtype),
 * 5 = INT8 (an fp32 scale per token and KV head after each block's values). */
#define LLMWB_KV_F16 0
#define LLMWB_KV_F32 1
#define LLMWB_KV_BF16 2
#define LLMWB_KV_FP8_E4M3 3
#define LLMWB_KV_FP8_E5M2 4
#define LLMWB_KV_INT8 5

typedef struct LlmwbRunnerOptions {
    int32_t device;      /* CUDA device ordinal */
    int32_t kv_dtype;    /* LLMWB_KV_* */
    int32_t use_graphs;  /* 1: capture decode-only steps per batch-size bucket */
    int32_t max_tokens;  /* largest n_tokens of a forward (workspace size) */
    int32_t max_seqs;    /* largest n_seqs / logits rows of a forward */
    int32_t max_context; /* longest context (attention workspace), 0: model default */
} LlmwbRunnerOptions;

/* One forward step: the arrays of llmwb::ForwardBatch (engine/runtime/forward_batch.h),
 * already validated by the engine. */
typedef struct LlmwbBatch {
    int32_t n_tokens;
    int32_t n_seqs;
    int32_t max_blocks_per_seq;
    int32_t n_logits;
    const int32_t* token_ids;    /* [n_tokens] */
    const int32_t* positions;    /* [n_tokens] */
    const int64_t* slot_mapping; /* [n_tokens] */
    const int32_t* query_start;  /* [n_seqs + 1] */
    const int32_t* context_lens; /* [n_seqs] */
    const int32_t* block_tables; /* [n_seqs][max_blocks_per_seq], -1 = unused */
    const int32_t* logits_rows;  /* [n_logits] */
} LlmwbBatch;

typedef struct LlmwbDeviceInfo {
    char name[256];
    int64_t total_bytes;
    int64_t free_bytes;
    int32_t cc_major, cc_minor;
    int32_t multiprocessors;
    double memory_bandwidth_gbs; /* nominal, from clock x bus width (0: unknown) */
} LlmwbDeviceInfo;

typedef struct LlmwbRunner LlmwbRunner; /* opaque */

typedef struct LlmwbCudaApi {
    uint32_t abi_version; /* LLMWB_CUDA_ABI_VERSION */
    uint32_t struct_size; /* sizeof(LlmwbCudaApi) */
    /* Number of usable devices (>= 0), or -1 when the runtime/driver fails (see last_error). */
    int (*device_count)(void);
    int (*device_info)(int32_t device, LlmwbDeviceInfo* out);
    /* Uploads the weights (cudaMalloc, quantized types kept) and prepares workspaces. The KV pool
     * is empty until resize_kv. NULL on failure. */
    LlmwbRunner* (*create_runner)(const LlmwbModel* model, const LlmwbRunnerOptions* options);
    void (*destroy_runner)(LlmwbRunner* runner);
    /* Replaces the KV pool; blocks keep_src[i] of the old pool are copied to keep_dst[i] of the
     * new one. On failure a pool of the old size remains (its contents only when n_keep > 0:
     * with nothing to keep the old pool is freed first, so that a pool of most of the device
     * can be replaced). */
    int (*resize_kv)(LlmwbRunner* runner, int32_t num_blocks, int32_t block_size,
                     const int32_t* keep_src, const int32_t* keep_dst, int32_t n_keep);
    int (*copy_block)(LlmwbRunner* runner, int32_t src, int32_t dst);
    /* logits: host [n_logits][vocab_size] fp32. Synchronous. */
    int (*forward)(LlmwbRunner* runner, const LlmwbBatch* batch, float* logits);
    /* Greedy decoding on the device: ids[i] = argmax of logits row i (lowest id on ties); only
     * the ids are copied back. Synchronous. */
    int (*forward_greedy)(LlmwbRunner* runner, const LlmwbBatch* batch, int32_t* ids);
    int (*memory_info)(LlmwbRunner* runner, int64_t* total_bytes, int64_t* free_bytes);
    int64_t (*weight_bytes)(const LlmwbRunner* runner); /* device bytes of the weights */
    /* Statistics: forwards run through a CUDA graph / eagerly. */
    int (*stats)(const LlmwbRunner* runner, int64_t* graph_steps, int64_t* eager_steps);
    const char* (*last_error)(void);
    /* (ABI 2) Switches the KV cache type at the next resize_kv, which creates the pool in
     * kv_dtype (LLMWB_KV_*) and keeps nothing (n_keep must be 0); until then the pool keeps its
     * type, and if that resize fails the old type (and pool size) stays. k_scales / v_scales:
     * n_layers per-layer fp8 scales
     * (stored value = x / scale), or NULL for 1.0; entries that are not finite and positive
     * count as 1.0. */
    int (*set_kv_dtype)(LlmwbRunner* runner, int32_t kv_dtype, const float* k_scales,
                        const float* v_scales, int32_t n_layers);
    /* (ABI 2) fp8 calibration: runs tokens[0..n) as one sequence from position 0 in a scratch
     * F32 pool (the KV pool is set aside and restored intact) and writes each layer's largest
     * |K| and |V| to k_absmax[layer], v_absmax[layer] (num_layers entries each). Synchronous. */
    int (*kv_absmax)(LlmwbRunner* runner, const int32_t* tokens, int32_t n, float* k_absmax,
                     float* v_absmax);
    /* (ABI 3) The bf16 weight cache: bf16 copies of the quantized matrices at slots[0..n) are
     * made now (copies of other slots freed first), and forwards of more than 8 token rows run
     * cuBLAS on them instead of dequantizing in the workspace on every call (decode keeps reading
     * the quantized bytes). Slots number the matrices as 7 x layer + (0 q, 1 k, 2 v, 3 o, 4 gate,
     * 5 up, 6 down), and 7 x num_layers for lm_head. A slot out of range, repeated or not
     * quantized fails; on an allocation failure no cache is left. n = 0 frees the cache. */
    int (*set_weight_cache)(LlmwbRunner* runner, const int32_t* slots, int32_t n);
    /* (ABI 3) Device bytes and matrices of the bf16 weight cache, and the matmuls enqueued on a
     * cached copy so far (a CUDA graph counts once, when captured). */
    int (*weight_cache_info)(const LlmwbRunner* runner, int64_t* bytes, int32_t* matrices,
                             int64_t* cached_matmuls);
    /* (ABI 3) Grows the step buffers and workspaces now for forwards of up to max_tokens token
     * rows and max_seqs sequences (raised Tuning limits; a larger forward grows them itself). */
    int (*reserve_step)(LlmwbRunner* runner, int32_t max_tokens, int32_t max_seqs);
    /* (ABI 3) Device bytes held now for step buffers and workspaces (activations, logits,
     * batch metadata, matmul and attention workspaces). */
    int64_t (*step_buffer_bytes)(const LlmwbRunner* runner);
} LlmwbCudaApi;

typedef const LlmwbCudaApi* (*LlmwbCudaPluginEntry)(uint32_t abi_version);

#ifdef __cplusplus
}
#endif

#endif /* LLMWB_CUDA_PLUGIN_API_H */
