// ModelRunner: the whole-model forward pass on one CUDA device (llama / qwen2 / qwen3 / mistral,
// gemma2 / gemma3, phi3), built from the ops of kernels/cuda/ops/cuda_ops.h on one stream:
//
//   embedding (x scale) -> per layer: [add_]rmsnorm, q/k/v matmuls (+bias), q/k norm, rope
//   (partial, per-layer base, LongRoPE factor), kv_write, paged_attention (window, soft-cap),
//   o-proj (post norm), add_rmsnorm, gate/up matmuls, silu_mul | gelu_tanh_mul, down matmul
//   (post norm) -> add, gather the rows that need logits, final rmsnorm, lm_head (soft-cap)
//   -> pinned host logits.
//
// Weights are uploaded once with cudaMalloc in their stored dtype (quantized types stay
// quantized). The paged KV cache lives on the device: 2 x layers pools (K, V of each layer) of
// num_blocks blocks in kernels/cpu/kv_format.h's KvLayout, in any KvDtype (F16 by default; the
// type can be switched, which drops the pool).  Decode-only steps (every sequence one query token,
// every token a logits row) run through CUDA graphs captured per batch-size bucket (1, 2, 4, ...,
// 256) with the batch metadata padded to the bucket; everything else runs eagerly.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/plugin/plugin_api.h"
#include "kernels/cuda/runner/device_buffer.h"

namespace llmwb::cuda {

// LLMWB_KV_* (plugin_api.h) as a KvDtype; nullopt for an unknown id.
inline std::optional<KvDtype> kv_dtype_from_abi(int32_t id) {
    switch (id) {
    case LLMWB_KV_F16:
        return KvDtype::F16;
    case LLMWB_KV_F32:
        return KvDtype::F32;
    case LLMWB_KV_BF16:
        return KvDtype::BF16;
    case LLMWB_KV_FP8_E4M3:
        return KvDtype::Fp8E4M3;
    case LLMWB_KV_FP8_E5M2:
        return KvDtype::Fp8E5M2;
    case LLMWB_KV_INT8:
        return KvDtype::Int8;
    default:
        return std::nullopt;
    }
}

class ModelRunner {
  public:
    // Null on failure (err says why). Copies everything it needs from `model`.
    static std::unique_ptr<ModelRunner> create(const LlmwbModel& model,
                                               const LlmwbRunnerOptions& options, std::string& err);
    ~ModelRunner();
    ModelRunner(const ModelRunner&) = delete;
    ModelRunner& operator=(const ModelRunner&) = delete;

    bool resize_kv(int32_t num_blocks, int32_t block_size, const int32_t* keep_src,
                   const int32_t* keep_dst, int32_t n_keep, std::string& err);
    bool copy_block(int32_t src, int32_t dst, std::string& err);
    // Switches the KV type at the next resize_kv, which creates the pool in type t and keeps
    // nothing (until then the pool stays in its type; if that resize fails, the old type stays
    // and the switch stays pending), with per-layer fp8 scales (stored value = x / scale):
    // n_layers entries each, or null for 1.0; entries that are not finite and positive count as
    // 1.0.
    bool set_kv_dtype(KvDtype t, const float* k_scales, const float* v_scales, int32_t n_layers,
                      std::string& err);
    // fp8 calibration: runs tokens[0..n) as one sequence from position 0 through a scratch F32
    // pool (the engine's pool is set aside and restored, contents intact) and writes each layer's
    // largest |K| and |V| to k_out[layer], v_out[layer].
    bool kv_absmax(const int32_t* tokens, int32_t n, float* k_out, float* v_out, std::string& err);
    // logits: host [batch.n_logits][vocab], or (logits null) ids: host [batch.n_logits], the
    // argmax of every logits row computed on the device. Synchronous.
    bool forward(const LlmwbBatch& batch, float* logits, int32_t* ids, std::string& err);
    bool memory_info(int64_t& total, int64_t& free, std::string& err) const;
    // The bf16 weight cache: bf16 copies of the quantized matrices at the given slots
    // (plugin_api.h: 7 x layer + {q, k, v, o, gate, up, down}, 7 x layers = lm_head), made now;
    // copies of other slots are freed first. Steps of more than 8 token rows run cuBLAS on a
    // cached copy instead of dequantizing the matrix in the workspace; decode keeps reading the
    // quantized bytes. A slot whose matrix is not quantized, out of range or repeated fails; on
    // an allocation failure no cache is left.
    bool set_weight_cache(const int32_t* slots, int32_t n, std::string& err);
    int64_t weight_cache_bytes() const { return cache_bytes_; }
    int32_t weight_cache_count() const { return cache_count_; }
    int64_t cached_matmuls() const { return cached_matmuls_; } // enqueued on a cached copy
    // Grows the step buffers and workspaces for forwards of up to max_tokens token rows and
    // max_seqs sequences now (a forward beyond them grows them itself); never shrinks.
    bool reserve(int32_t max_tokens, int32_t max_seqs, std::string& err);
    // Device bytes of the step buffers and workspaces now.
    int64_t step_buffer_bytes() const;

    int64_t weight_bytes() const { return weight_bytes_; }
    int64_t graph_steps() const { return graph_steps_; }
    int64_t eager_steps() const { return eager_steps_; }

  private:
    struct Layer {
        DeviceMatrix wq, wk, wv, wo, w_gate, w_up, w_down;
        const float *attn_norm = nullptr, *ffn_norm = nullptr, *q_norm = nullptr, *k_norm = nullptr,
                    *bq = nullptr, *bk = nullptr, *bv = nullptr;
        const float *post_attn_norm = nullptr, *post_ffn_norm = nullptr; // gemma2/3
        int32_t window = 0;                // sliding window (0: every key)
        bool rope_local = false;           // RoPE with inv_freq_local_ (gemma3's sliding layers)
        DeviceMatrix router;               // MoE: [n_expert][hidden]
        std::vector<DeviceMatrix> experts; // MoE: [n_expert][3] gate, up, down
    };
    // Where the batch metadata sits inside the packed metadata buffer (byte offsets).
    struct MetaLayout {
        int32_t n_tokens = 0, n_seqs = 0, n_logits = 0, blocks_width = 0;
        size_t token_ids = 0, positions = 0, slot_mapping = 0, query_start = 0, context_lens = 0,
               block_tables = 0, logits_rows = 0, total = 0;
    };
    // The launch-time shape of a forward (host values baked into a graph).
    struct StepShape {
        int32_t n_tokens = 0, n_seqs = 0, n_logits = 0, blocks_width = 0;
        int32_t max_query_len = 0, max_context_len = 0;
    };
    struct Graph {
        cudaGraphExec_t exec = nullptr;
        StepShape shape;
    };

    ModelRunner() = default;
    bool upload(const LlmwbModel& model, std::string& err);
    // Matrix `slot` (the weight cache's numbering) and out = x W^T through matmul(): with more
    // than 8 rows and a cached bf16 copy, on the copy.
    const DeviceMatrix& matrix_at(int32_t slot) const;
    bool mm(float* out, int32_t slot, const float* x, int64_t n, const char* what,
            std::string& err);
    void free_weight_cache();
    const void* upload_bytes(const void* host, size_t bytes, std::string& err);
    bool ensure_step_buffers(int32_t n_tokens, int32_t n_logits, size_t meta_bytes,
                             std::string& err);
    static MetaLayout layout_for(int32_t n_tokens, int32_t n_seqs, int32_t n_logits,
                                 int32_t blocks_width);
    void pack_eager(const LlmwbBatch& b, const MetaLayout& m);
    void pack_padded_decode(const LlmwbBatch& b, const MetaLayout& m);
    // Enqueues the forward of `shape` reading metadata at layout m. No host sync, capturable.
    bool enqueue_forward(const StepShape& shape, const MetaLayout& m, std::string& err);
    bool enqueue_layer(int32_t l, const StepShape& shape, const MetaLayout& m, std::string& err);
    bool run_graph(const LlmwbBatch& b, std::string& err);
    // The MoE MLP of layer l over xb_'s n rows into delta_ (model_runner_moe.cu; synchronises
    // the stream once for the routing, so never inside graph capture).
    bool enqueue_moe(int32_t l, int32_t n, std::string& err);
    void route_tokens(int32_t n); // host: moe_logits_host_ -> moe_index_host_, moe_start_
    void drop_graphs();
    void* k_cache(int32_t layer) const;
    void* v_cache(int32_t layer) const;

    // Model.
    int32_t vocab_ = 0, hidden_ = 0, inter_ = 0, layers_n_ = 0, heads_ = 0, kv_heads_ = 0,
            head_dim_ = 0;
    bool interleaved_ = false;
    float eps_ = 1e-6f;
    std::vector<Layer> layers_;
    DeviceMatrix tok_embd_, lm_head_;
    const float* output_norm_ = nullptr;
    const double* inv_freq_ = nullptr;       // [rotary_dim_ / 2]
    const double* inv_freq_local_ = nullptr; // [rotary_dim_ / 2] or null
    // The newer families' features (plugin_api.h, ABI 4); defaults = llama / qwen.
    bool gelu_ = false; // GeGLU (tanh GELU) instead of SwiGLU
    int32_t rotary_dim_ = 0;
    float embedding_scale_ = 1.0f, attn_scale_ = 0.0f, attn_softcap_ = 0.0f, final_softcap_ = 0.0f,
          rope_scale_ = 1.0f;
    // Mixture of experts (0 experts: dense).
    int32_t n_experts_ = 0, experts_used_ = 0, expert_inter_ = 0;
    bool norm_topk_ = true;
    DeviceBuffer moe_logits_, moe_index_, moe_x_, moe_gate_, moe_up_, moe_y_;
    PinnedBuffer moe_logits_host_, moe_index_host_;
    std::vector<int32_t> moe_ids_, moe_start_;
    std::vector<float> moe_w_, moe_probs_;
    std::vector<void*> weight_allocs_;
    int64_t weight_bytes_ = 0;
    static constexpr int32_t kLayerMatrices = 7; // q, k, v, o, gate, up, down
    std::vector<void*> cache_;                   // [7 x layers + 1] bf16 copies (null: none)
    int64_t cache_bytes_ = 0;
    int32_t cache_count_ = 0;
    int64_t cached_matmuls_ = 0;

    // Options.
    int32_t device_ = 0;
    KvDtype kv_dtype_ = KvDtype::F16;      // the pool's type
    std::vector<float> k_scale_, v_scale_; // per layer (fp8), 1.0 unless set
    struct PendingKv {
        KvDtype dtype;
        std::vector<float> k_scale, v_scale;
    };
    std::optional<PendingKv> pending_kv_; // set_kv_dtype, applied by the next resize_kv
    void commit_kv_dtype();
    bool use_graphs_ = true;
    int32_t max_context_ = 0;

    // Execution state.
    cudaStream_t stream_ = nullptr;
    BlasContext* blas_ = nullptr;
    int32_t cap_tokens_ = 0, cap_logits_ = 0;
    DeviceBuffer x_, xb_, delta_, q_, k_, v_, att_, gate_, up_, xl_, logits_dev_;
    DeviceBuffer matmul_ws_, attn_ws_, meta_dev_, ids_dev_;
    size_t matmul_ws_bytes_ = 0, attn_ws_bytes_ = 0;
    PinnedBuffer meta_host_, logits_host_, ids_host_;
    size_t meta_cap_ = 0, logits_host_cap_ = 0;

    // KV pool: [2 * layers][num_blocks] blocks of kv_layout().block_bytes() bytes.
    KvLayout kv_layout(int32_t block_size) const {
        return KvLayout{kv_dtype_, block_size, kv_heads_, head_dim_};
    }
    DeviceBuffer kv_;
    int32_t num_blocks_ = 0, block_size_ = 0;

    std::map<std::pair<int32_t, int32_t>, Graph> graphs_; // (bucket, blocks width)
    int64_t graph_steps_ = 0, eager_steps_ = 0;
};

} // namespace llmwb::cuda
