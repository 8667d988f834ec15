// CpuExecutor: the CPU backend behind the ModelExecutor interface — the CpuTransformer over a
// KvCacheStorage (fp32 by default; every KvDtype). Behaviour is exactly CpuTransformer::forward's.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/model_executor.h"

namespace llmwb {

class CpuExecutor final : public ModelExecutor {
  public:
    // `model` must outlive the executor. The KV pool is created by resize_kv().
    explicit CpuExecutor(CpuTransformer& model) : model_(model) {}
    // Runs over an existing KV storage (not owned; it must outlive the executor, or until the
    // next resize_kv(), which replaces it by an owned one).
    CpuExecutor(CpuTransformer& model, KvCacheStorage& kv)
        : model_(model), kv_(&kv), kv_dtype_(kv.dtype()) {}

    DeviceKind kind() const override { return DeviceKind::Cpu; }
    std::string device_name() const override;
    const ModelConfig& config() const override { return model_.config(); }
    int32_t vocab_size() const override { return model_.vocab_size(); }
    int64_t weight_bytes() const override { return model_.model().weight_bytes; }
    int32_t panel_matrices() const override;
    int64_t panel_bytes() const override;
    KvDtype kv_dtype() const override { return kv_dtype_; }
    bool supports_kv_dtype(KvDtype) const override { return true; }
    Status set_kv_dtype(KvDtype t, const KvScales& scales) override;
    const KvScales& kv_scales() const override { return kv_scales_; }
    DeviceMemory memory() const override;

    int32_t num_blocks() const override { return kv_ ? kv_->num_blocks() : 0; }
    int32_t block_size() const override { return kv_ ? kv_->block_size() : 0; }
    Status resize_kv(int32_t num_blocks, int32_t block_size,
                     std::span<const BlockCopy> keep) override;
    void copy_block(int32_t src, int32_t dst) override;
    Status forward(const ForwardBatch& batch, float* logits) override;
    // Greedy steps (the engine asks when every request of the step is plain greedy): the
    // logits stay here and each row's argmax_first (the sampler's greedy choice, bit for bit)
    // is taken on the thread pool, rows in parallel, instead of one after the other in the
    // engine's output processing.
    bool device_greedy() const override { return true; }
    Status forward_greedy(const ForwardBatch& batch, int32_t* ids) override;
    Status check_weights() const override; // every mapping of the model unchanged
    Result<KvScales> kv_absmax(std::span<const int32_t> tokens) override;

    // Measurement hook, off by default: called after every forward with the pool and the batch
    // (e.g. to quantize-dequantize in place what the forward wrote: the int8 variants of
    // app/cli/kv_int8_experiment.h, simulated on an f32 pool). Empty: none.
    using AfterForwardHook = std::function<void(KvCacheStorage&, const ForwardBatch&)>;
    void set_after_forward_hook(AfterForwardHook hook) { after_forward_ = std::move(hook); }

    CpuTransformer& transformer() { return model_; }
    const KvCacheStorage* kv() const { return kv_; }

  private:
    CpuTransformer& model_;
    std::unique_ptr<KvCacheStorage> owned_kv_;
    KvCacheStorage* kv_ = nullptr; // owned_kv_ or a borrowed storage
    KvDtype kv_dtype_ = KvDtype::F32;
    KvScales kv_scales_;
    AfterForwardHook after_forward_;
    std::vector<float> greedy_logits_; // forward_greedy's rows
};

} // namespace llmwb
