// CpuTransformer: the CPU forward pass of a decoder-only model (every Architecture; the
// families differ by ModelConfig's feature fields)
// over a paged KV cache. One call runs one varlen batch (prefill chunks and decode tokens
// together); all token rows go through each weight matrix as one matrix product.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine/model/loaded_model.h"
#include "engine/runtime/attention.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"

namespace llmwb {

namespace kernels {
class ThreadPool;
}

class CpuMoe;
class PanelWeights;

// The attention shape of layer `layer` of a model whose KV cache has this head size and block
// size (heads, scale, sliding window, soft-cap), as the forward pass uses it.
AttentionShape attention_shape(const ModelConfig& c, int32_t head_dim, int32_t block_size,
                               int32_t layer);

class CpuTransformer {
  public:
    // The model must outlive the CpuTransformer. Preconditions (guaranteed by load_model):
    // every tensor present with the shape the config implies.
    // cast_floats: PanelWeights' cast of the F32 / F16 matrices (DType::BF16: --dtype bfloat16).
    CpuTransformer(const LoadedModel& model, kernels::ThreadPool& pool,
                   std::optional<DType> cast_floats = std::nullopt);
    ~CpuTransformer();
    CpuTransformer(const CpuTransformer&) = delete;
    CpuTransformer& operator=(const CpuTransformer&) = delete;

    const ModelConfig& config() const { return model_.config; }
    const LoadedModel& model() const { return model_; }
    kernels::ThreadPool& pool() { return pool_; }
    int32_t vocab_size() const { return vocab_; } // length of a logits row

    // Bytes of weight matrices a decode step reads once per token (all layers + lm_head; for
    // mixture-of-experts layers the router and num_experts_used of the experts).
    int64_t weight_bytes_per_token() const;

    // The weights the products read: the loaded views, or this runtime's copy in the panel
    // layout (engine/runtime/panel_weights.h) — never the loaded views' pages afterwards.
    const PanelWeights& panel_weights() const { return *panels_; }

    // Runs the batch: writes this step's K/V through batch.slot_mapping, attends through the
    // block tables and writes logits [batch.logits_rows.size()][vocab_size()].
    // Preconditions (asserted): batch.validate(kv.block_size(), kv.num_blocks()) is ok, token
    // ids < vocab_size(), kv was created for this model's config.
    void forward(const ForwardBatch& batch, KvCacheStorage& kv, float* logits);

    // Observer of the input of every weight matrix product (importance matrices for
    // `llmwb quantize --calibration`): called with the weight and its input rows
    // x[n_tokens][weight.cols] just before the product; not called for the lm_head (as the common
    // imatrix tool skips the output by default). Unset: one untaken branch per product.
    using MatmulObserver =
        std::function<void(const TensorView& weight, const float* x, int32_t n_tokens)>;
    void set_matmul_observer(MatmulObserver fn) { observer_ = std::move(fn); }

  private:
    struct Norms; // per-layer norm vectors and biases as fp32
    void reserve(int32_t n_tokens, int32_t n_logits);
    void attention_block(int32_t layer, const ForwardBatch& batch, KvCacheStorage& kv);
    void mlp_block(int32_t layer, int32_t n);

    const LoadedModel& model_;
    kernels::ThreadPool& pool_;
    int32_t vocab_ = 0;
    std::vector<double> inv_freq_;       // [rotary_dim/2]
    std::vector<double> inv_freq_local_; // [rotary_dim/2] sliding layers' RoPE (gemma3) or empty
    float rope_scale_ = 1.0f;            // cos/sin multiplier (LongRoPE attention factor)
    std::unique_ptr<Norms> norms_;
    std::unique_ptr<PanelWeights> panels_;

    // Workspace, grown to the largest batch seen and reused ("n" = tokens of the batch).
    int32_t cap_tokens_ = 0, cap_logits_ = 0;
    std::vector<float> x_;     // [n][hidden]       residual stream
    std::vector<float> xb_;    // [n][hidden]       normed input of a block / block output
    std::vector<float> q_;     // [n][heads * hd]
    std::vector<float> k_;     // [n][kv_heads * hd]
    std::vector<float> v_;     // [n][kv_heads * hd]
    std::vector<float> att_;   // [n][heads * hd]   attention output before wo
    std::vector<float> gate_;  // [n][inter]        gate, then silu(gate) * up
    std::vector<float> up_;    // [n][inter]
    std::vector<float> fused_; // [n][max(q + 2 kv, 2 inter)] output of a fused projection
    std::vector<float> cos_;   // [n][hd/2]
    std::vector<float> sin_;   // [n][hd/2]
    std::vector<float> cos_local_, sin_local_; // [n][hd/2] with inv_freq_local_ (gemma3)
    std::vector<float> xl_;                    // [n_logits][hidden] normed rows that need logits
    AttentionScratch att_scratch_;
    std::unique_ptr<CpuMoe> moe_; // MoE layers' router, experts and workspace (is_moe() only)
    MatmulObserver observer_;
};

} // namespace llmwb
