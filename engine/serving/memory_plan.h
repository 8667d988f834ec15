// MemoryPlan: how many KV blocks fit. Either an explicit KV budget, or
//   utilization x device memory (RAM on the CPU backend) - weights - activation workspace,
// divided by the bytes of one block (2 x layers x kv_heads x head_dim x block_size x bytes per
// element: 4 for the CPU's fp32 cache, 2 for the CUDA backend's f16 cache). The device memory is
// the backend's (RAM on the CPU, cudaMemGetInfo's total on CUDA). The plan is a value the UI
// shows as a memory breakdown.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/model/model_config.h"
#include "engine/util/result.h"

namespace llmwb {

struct MemoryBudget {
    double utilization = 0.9;        // (0, 1]: fraction of device memory the engine may use
    int64_t device_bytes = 0;        // 0: physical RAM of this machine (the Engine fills in its
                                     // backend's device memory)
    std::optional<int64_t> kv_bytes; // explicit KV budget: overrides utilization
};

struct MemoryPlan {
    int64_t device_bytes = 0; // total device memory (RAM)
    int64_t budget_bytes = 0; // utilization x device memory (or weights+workspace+kv)
    int64_t weight_bytes = 0;
    int64_t workspace_bytes = 0; // activations of the largest step (estimate)
    int64_t kv_bytes = 0;        // num_blocks x bytes_per_block
    int64_t free_bytes = 0;      // device memory left outside the engine's budget use
    int64_t bytes_per_block = 0;
    int32_t num_blocks = 0;
    int32_t block_size = 0;
};

// Physical memory of this machine in bytes (0 if unknown).
int64_t physical_memory_bytes();

// Activation workspace of a forward over max_tokens token rows and max_logits logits rows.
int64_t estimate_workspace_bytes(const ModelConfig& config, int32_t max_tokens, int32_t max_logits);

// Errors: bad utilization, or a budget that leaves room for fewer than min_blocks blocks.
// kv_elem_bytes: bytes of one K/V element (4: fp32, 2: f16).
Result<MemoryPlan> plan_memory(const ModelConfig& config, int64_t weight_bytes, int32_t block_size,
                               int64_t workspace_bytes, const MemoryBudget& budget,
                               int32_t min_blocks = 1, int32_t kv_elem_bytes = 4);

} // namespace llmwb
