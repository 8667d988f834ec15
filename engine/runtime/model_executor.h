// ModelExecutor: the backend interface of the serving engine. An executor owns the model's
// weights on its device and the paged KV memory, and runs one varlen forward step (DESIGN.md
// "Backends", "One engine step"). The CPU executor wraps CpuTransformer + KvCacheStorage; the CUDA
// executor (engine/backend/cuda_executor.h) drives the run-time loaded CUDA plugin.
//
// Block ids and slots are those of the engine's BlockPool: the executor only stores K/V where the
// batch's slot_mapping says and reads it back through its block tables.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/runtime/device_types.h"
#include "engine/runtime/forward_batch.h"
#include "engine/util/result.h"

namespace llmwb {

struct DeviceMemory {
    int64_t total_bytes = 0; // 0: unknown
    int64_t free_bytes = 0;  // free now (after the weights were loaded)
};

// A KV block copy (every layer, K and V): copy-on-write before a forward (src -> dst in one
// pool), or a block that keeps its contents across a KV resize (old id -> new id).
struct BlockCopy {
    int32_t src = 0;
    int32_t dst = 0;
};

// Bytes of one KV block over all layers, K and V, in `dtype` (with int8's row scales).
int64_t kv_bytes_per_block(const ModelConfig& config, int32_t block_size, KvDtype dtype);

// fp8 KV scales per layer (stored value = x / scale): k[l], v[l]. Empty: 1.0 for every layer.
struct KvScales {
    std::vector<float> k, v;
};

class ModelExecutor {
  public:
    virtual ~ModelExecutor() = default;

    virtual DeviceKind kind() const = 0;
    virtual std::string device_name() const = 0;
    virtual const ModelConfig& config() const = 0;
    virtual int32_t vocab_size() const = 0;   // length of a logits row
    virtual int64_t weight_bytes() const = 0; // bytes of the weights as stored on the device
    virtual KvDtype kv_dtype() const = 0;
    // Whether the backend can store its KV cache in `t`.
    virtual bool supports_kv_dtype(KvDtype t) const = 0;
    // The element type (and fp8 scales) of the pool the next resize_kv() creates; that resize
    // must keep no blocks (the old contents are in another type). Errors: an unsupported type.
    virtual Status set_kv_dtype(KvDtype t, const KvScales& scales) = 0;
    virtual const KvScales& kv_scales() const = 0;
    // fp8 calibration (kv_calibration.h): runs `tokens` as one sequence from position 0 in a
    // scratch pool of full precision, outside the engine's pool (call between steps), and
    // returns each layer's largest |K| and |V| (in KvScales' k / v). Errors: a backend that
    // cannot (the default), or a device failure.
    virtual Result<KvScales> kv_absmax(std::span<const int32_t> tokens) {
        return make_error("this backend cannot measure K/V ranges");
    }
    // Device memory for the memory plan (CPU: physical RAM; CUDA: cudaMemGetInfo).
    virtual DeviceMemory memory() const = 0;

    // The KV pool. Until the first resize_kv() there is none (num_blocks() == 0).
    virtual int32_t num_blocks() const = 0;
    virtual int32_t block_size() const = 0;
    // Replaces the pool by one of num_blocks blocks of block_size slots (8, 16 or 32); the blocks
    // in `keep` are copied from the old pool (old id src) to the new one (new id dst) first; all
    // other contents are undefined. On error the executor still has a pool of the old size
    // (with its contents when `keep` is non-empty; a backend may free the old pool before
    // allocating the new one when there is nothing to keep).
    virtual Status resize_kv(int32_t num_blocks, int32_t block_size,
                             std::span<const BlockCopy> keep) = 0;
    // Copies block src to block dst (every layer, K and V): copy-on-write. src != dst, both in
    // range (asserted).
    virtual void copy_block(int32_t src, int32_t dst) = 0;

    // Runs the batch: writes K/V through batch.slot_mapping, attends through the block tables
    // and writes logits [batch.logits_rows.size()][vocab_size()] to host memory.
    // Preconditions (asserted on the CPU): batch.validate(block_size(), num_blocks()) is ok and
    // token ids < vocab_size(). Errors: device failures (CUDA), never bad input.
    virtual Status forward(const ForwardBatch& batch, float* logits) = 0;

    // Whether the weights the forwards read are still the ones loaded. The CPU reads weights
    // from the model file's mapping: when the file shrank under it (mapped_file.h), forwards
    // since then computed with zeros and this names the file. Backends that copied the weights
    // at load (CUDA) no longer read the file: Ok. The engine checks after every forward.
    virtual Status check_weights() const { return ok_status(); }

    // Greedy decoding on the device (CUDA: without copying the logits back; CPU: the rows'
    // argmaxes in parallel): ids[i] = argmax of logits row i (lowest id on ties). Only when
    // device_greedy() is true.
    virtual bool device_greedy() const { return false; }
    virtual Status forward_greedy(const ForwardBatch& batch, int32_t* ids) {
        return make_error("this backend has no device-side greedy decoding");
    }

    // The bf16 weight cache (CUDA; memory_plan.h): bytes of a bf16 copy of each matrix slot (0:
    // no copy possible; empty: the backend has no such cache), the copies made now for the
    // given matrix slots (others freed; errors: device memory, or slots the backend refuses — then
    // no cache is left), and the resident cache.
    virtual std::vector<int64_t> weight_cache_candidates() const { return {}; }
    virtual Status set_weight_cache(std::span<const int32_t> matrices) {
        return matrices.empty() ? ok_status() : make_error("this backend has no bf16 weight cache");
    }
    virtual int64_t weight_cache_bytes() const { return 0; }
    virtual int32_t weight_cache_matrices() const { return 0; }
    // The CPU's panel layout (engine/runtime/panel_weights.h): matrices rearranged at load and
    // their bytes (the same bytes as stored, not a copy); 0 elsewhere.
    virtual int32_t panel_matrices() const { return 0; }
    virtual int64_t panel_bytes() const { return 0; }
    // Raised step limits (Tuning): buffers for steps of up to max_tokens token rows and max_seqs
    // sequences are made now where the backend sizes them ahead (CUDA); a step beyond them still
    // grows them itself. Errors: device memory.
    virtual Status reserve_step(int32_t /*max_tokens*/, int32_t /*max_seqs*/) {
        return ok_status();
    }
    // Device bytes the backend holds now for step buffers and workspaces (0: not known; the
    // memory plan then counts its estimate_workspace_bytes alone).
    virtual int64_t workspace_bytes() const { return 0; }
};

} // namespace llmwb
