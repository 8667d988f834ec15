// CudaExecutor: the CUDA backend behind the ModelExecutor interface. It hands the model's weights
// (host views, uploaded once by the plugin) and each step's batch metadata to the plugin's model
// runner (kernels/cuda/runner) through the C ABI of kernels/cuda/plugin/plugin_api.h.
#pragma once

#include <memory>
#include <vector>

#include "engine/backend/cuda_plugin.h"
#include "engine/model/loaded_model.h"
#include "engine/runtime/model_executor.h"

namespace llmwb {

struct CudaExecutorOptions {
    int32_t device = 0;
    KvDtype kv_dtype = KvDtype::F16;
    bool use_graphs = true;   // capture decode-only steps into CUDA graphs
    int32_t max_tokens = 512; // largest token rows of a step (max_num_batched_tokens)
    int32_t max_seqs = 256;   // largest sequences of a step (max_num_seqs)
    int32_t max_context = 0;  // 0: the model's context length
};

// The bf16 weight cache's candidates (memory_plan.h) of a model on the CUDA backend: bytes of a
// bf16 copy of each matrix slot, 7 per layer (q, k, v, o, gate, up, down) then lm_head (the
// output matrix, or the tied embedding); 0 where the matrix is not quantized (no copy needed).
std::vector<int64_t> cuda_weight_cache_candidates(const LoadedModel& model);

class CudaExecutor final : public ModelExecutor {
  public:
    // `model` must outlive the executor only during create() (weights are copied to the device).
    static Result<std::unique_ptr<CudaExecutor>> create(std::shared_ptr<CudaPlugin> plugin,
                                                        const LoadedModel& model,
                                                        const CudaExecutorOptions& options);
    ~CudaExecutor() override;

    DeviceKind kind() const override { return DeviceKind::Cuda; }
    std::string device_name() const override { return device_name_; }
    const ModelConfig& config() const override { return config_; }
    int32_t vocab_size() const override { return vocab_; }
    int64_t weight_bytes() const override { return weight_bytes_; }
    KvDtype kv_dtype() const override { return options_.kv_dtype; }
    bool supports_kv_dtype(KvDtype t) const override;
    Status set_kv_dtype(KvDtype t, const KvScales& scales) override;
    const KvScales& kv_scales() const override { return kv_scales_; }
    // fp8 calibration on the device (a scratch F32 pool; the engine's pool is left intact).
    Result<KvScales> kv_absmax(std::span<const int32_t> tokens) override;
    DeviceMemory memory() const override;

    int32_t num_blocks() const override { return num_blocks_; }
    int32_t block_size() const override { return block_size_; }
    Status resize_kv(int32_t num_blocks, int32_t block_size,
                     std::span<const BlockCopy> keep) override;
    void copy_block(int32_t src, int32_t dst) override;
    Status forward(const ForwardBatch& batch, float* logits) override;
    bool device_greedy() const override { return true; }
    Status forward_greedy(const ForwardBatch& batch, int32_t* ids) override;

    // The bf16 weight cache (slots: plugin_api.h's set_weight_cache numbering).
    std::vector<int64_t> weight_cache_candidates() const override { return cache_candidates_; }
    Status set_weight_cache(std::span<const int32_t> matrices) override;
    int64_t weight_cache_bytes() const override;
    int32_t weight_cache_matrices() const override;
    Status reserve_step(int32_t max_tokens, int32_t max_seqs) override;
    int64_t workspace_bytes() const override;
    // Matmuls enqueued on a cached bf16 copy so far (a CUDA graph counts once, at capture).
    int64_t cached_matmuls() const;

    // Steps run through a CUDA graph / eagerly so far.
    void graph_stats(int64_t& graph_steps, int64_t& eager_steps) const;
    const CudaExecutorOptions& options() const { return options_; }

  private:
    CudaExecutor() = default;
    Status run(const ForwardBatch& batch, float* logits, int32_t* ids);
    std::shared_ptr<CudaPlugin> plugin_;
    LlmwbRunner* runner_ = nullptr;
    CudaExecutorOptions options_;
    KvScales kv_scales_;
    ModelConfig config_;
    std::string device_name_;
    int32_t vocab_ = 0;
    int64_t weight_bytes_ = 0;
    std::vector<int64_t> cache_candidates_; // bf16 bytes per matrix slot (0: not quantized)
    int32_t num_blocks_ = 0, block_size_ = 0;
    std::string pending_error_; // a copy_block failure, reported by the next forward
};

} // namespace llmwb
