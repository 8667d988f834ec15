#include "engine/serving/memory_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/runtime/model_executor.h"

namespace llmwb {

int64_t physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0)
        return 0;
    return static_cast<int64_t>(pages) * page;
}

int64_t estimate_workspace_bytes(const ModelConfig& c, int32_t max_tokens, int32_t max_logits) {
    const int64_t hd =
        c.head_dim > 0 ? c.head_dim : (c.num_heads ? c.hidden_size / c.num_heads : 0);
    // Per token row: residual + normed input, q, k, v, attention output, gate + up, cos + sin.
    const int64_t per_token = 2LL * c.hidden_size + 2LL * c.num_heads * hd +
                              2LL * c.num_kv_heads * hd + 2LL * c.intermediate_size + hd;
    // Per logits row: the normed hidden row and the logits row.
    const int64_t per_logit = static_cast<int64_t>(c.hidden_size) + c.vocab_size;
    return 4 * (per_token * std::max(1, max_tokens) + per_logit * std::max(1, max_logits));
}

Result<MemoryPlan> plan_memory(const ModelConfig& config, int64_t weight_bytes, int32_t block_size,
                               int64_t workspace_bytes, const MemoryBudget& budget,
                               int32_t min_blocks, int32_t kv_elem_bytes) {
    MemoryPlan p;
    p.block_size = block_size;
    p.bytes_per_block = kv_bytes_per_block(config, block_size, kv_elem_bytes);
    if (p.bytes_per_block <= 0)
        return make_error("memory plan: the model has no KV cache");
    p.device_bytes = budget.device_bytes > 0 ? budget.device_bytes : physical_memory_bytes();
    p.weight_bytes = weight_bytes;
    p.workspace_bytes = workspace_bytes;
    int64_t kv_budget = 0;
    if (budget.kv_bytes) {
        if (*budget.kv_bytes <= 0)
            return make_error("memory plan: the KV budget must be > 0");
        kv_budget = *budget.kv_bytes;
    } else {
        if (!(budget.utilization > 0.0 && budget.utilization <= 1.0))
            return make_error("memory plan: gpu_memory_utilization must be in (0, 1], got " +
                              std::to_string(budget.utilization));
        if (p.device_bytes <= 0)
            return make_error("memory plan: device memory is unknown");
        const auto usable = static_cast<int64_t>(
            std::floor(budget.utilization * static_cast<double>(p.device_bytes)));
        kv_budget = usable - weight_bytes - workspace_bytes;
        if (kv_budget < p.bytes_per_block * min_blocks)
            return make_error("memory plan: " + std::to_string(budget.utilization) + " x " +
                              std::to_string(p.device_bytes >> 20) + " MiB leaves " +
                              std::to_string(std::max<int64_t>(0, kv_budget) >> 20) +
                              " MiB for the KV cache after weights and workspace; need at least " +
                              std::to_string((p.bytes_per_block * min_blocks) >> 20) + " MiB");
    }
    const int64_t blocks = std::min<int64_t>(kv_budget / p.bytes_per_block, 1 << 30);
    if (blocks < min_blocks)
        return make_error("memory plan: a KV budget of " + std::to_string(kv_budget) +
                          " bytes holds " + std::to_string(blocks) + " blocks of " +
                          std::to_string(p.bytes_per_block) + " bytes; need at least " +
                          std::to_string(min_blocks));
    p.num_blocks = static_cast<int32_t>(blocks);
    p.kv_bytes = blocks * p.bytes_per_block;
    p.budget_bytes =
        budget.kv_bytes
            ? weight_bytes + workspace_bytes + p.kv_bytes
            : static_cast<int64_t>(budget.utilization * static_cast<double>(p.device_bytes));
    p.free_bytes =
        std::max<int64_t>(0, p.device_bytes - weight_bytes - workspace_bytes - p.kv_bytes);
    return p;
}

} // namespace llmwb
