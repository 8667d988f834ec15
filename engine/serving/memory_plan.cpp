#include "engine/serving/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/runtime/model_executor.h"

namespace llmwb {

namespace {

std::string mib(int64_t bytes) {
    return std::to_string(std::max<int64_t>(0, bytes) >> 20);
}

int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

} // namespace

const char* kv_pool_limit_name(KvPoolLimit l) {
    switch (l) {
    case KvPoolLimit::Blocks:
        return "blocks";
    case KvPoolLimit::KvBytes:
        return "kv_bytes";
    case KvPoolLimit::Utilization:
        return "utilization";
    case KvPoolLimit::Available:
        return "available";
    case KvPoolLimit::Need:
        return "need";
    case KvPoolLimit::Context:
        return "context";
    case KvPoolLimit::Fallback:
        return "fallback";
    case KvPoolLimit::Live:
        return "live";
    }
    return "";
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

Result<MemoryPlan> plan_memory(const KvPoolShape& shape, const MemoryBudget& budget,
                               int32_t min_blocks) {
    const ModelConfig& config = *shape.model;
    MemoryPlan p;
    p.block_size = shape.block_size;
    p.kv_elem_bytes = shape.kv_elem_bytes;
    p.bytes_per_block = kv_bytes_per_block(config, shape.block_size, shape.kv_elem_bytes);
    if (p.bytes_per_block <= 0)
        return make_error("memory plan: the model has no KV cache");
    p.device_bytes = budget.device_bytes > 0 ? budget.device_bytes
                     : shape.total_bytes > 0 ? shape.total_bytes
                                             : physical_memory_bytes();
    p.weight_bytes = shape.weight_bytes;
    p.workspace_bytes = shape.workspace_bytes;
    const int64_t context = config.max_position > 0 ? config.max_position : kFallbackPoolTokens;
    const int64_t per_seq = ceil_div(context, shape.block_size);
    p.cap_blocks = static_cast<int32_t>(
        std::clamp<int64_t>(per_seq * std::max(1, shape.max_num_seqs), 1, int64_t{1} << 30));
    min_blocks = std::max(1, min_blocks);

    int64_t blocks = 0;
    if (budget.num_blocks) {
        if (*budget.num_blocks < 1)
            return make_error("memory plan: the pool needs at least one block, got " +
                              std::to_string(*budget.num_blocks));
        blocks = *budget.num_blocks;
        p.limit = KvPoolLimit::Blocks;
    } else if (budget.kv_bytes) {
        if (*budget.kv_bytes <= 0)
            return make_error("memory plan: the KV budget must be > 0");
        blocks = *budget.kv_bytes / p.bytes_per_block;
        p.limit = KvPoolLimit::KvBytes;
    } else {
        if (!(budget.utilization > 0.0 && budget.utilization <= 1.0))
            return make_error("memory plan: gpu_memory_utilization must be in (0, 1], got " +
                              std::to_string(budget.utilization));
        if (p.device_bytes <= 0)
            return make_error("memory plan: device memory is unknown");
        const auto usable = static_cast<int64_t>(
            std::floor(budget.utilization * static_cast<double>(p.device_bytes)));
        const int64_t kv_budget = usable - shape.weight_bytes - shape.workspace_bytes;
        blocks = std::max<int64_t>(0, kv_budget) / p.bytes_per_block;
        p.limit = KvPoolLimit::Utilization;
        if (blocks < min_blocks) {
            std::string why =
                "memory plan: " + std::to_string(budget.utilization) + " x " + mib(p.device_bytes) +
                " MiB leaves " + mib(kv_budget) + " MiB for the KV cache after weights (" +
                mib(shape.weight_bytes) + " MiB) and workspace (" + mib(shape.workspace_bytes) +
                " MiB); need at least " + mib(p.bytes_per_block * min_blocks) + " MiB";
            if (!budget.fallback_when_short)
                return make_error(std::move(why));
            p.note = std::move(why);
            p.limit = KvPoolLimit::Fallback;
            blocks = std::min({per_seq, ceil_div(kFallbackPoolTokens, shape.block_size),
                               static_cast<int64_t>(p.cap_blocks)});
        } else {
            // Never more than the machine has now (the current pool is given back first).
            if (shape.available_bytes > 0) {
                const int64_t avail =
                    (shape.available_bytes + shape.reusable_bytes - shape.workspace_bytes) /
                    p.bytes_per_block;
                if (avail < blocks) {
                    blocks = std::max<int64_t>(avail, min_blocks);
                    p.limit = KvPoolLimit::Available;
                }
            }
            if (budget.need_tokens) {
                const int64_t need =
                    ceil_div(std::max<int64_t>(1, *budget.need_tokens), shape.block_size) +
                    std::max(1, budget.need_seqs) + 1;
                if (need < blocks) {
                    blocks = std::max<int64_t>(need, min_blocks);
                    p.limit = KvPoolLimit::Need;
                }
            }
            if (blocks > p.cap_blocks && p.cap_blocks >= min_blocks) {
                blocks = p.cap_blocks;
                p.limit = KvPoolLimit::Context;
            }
        }
    }
    blocks = std::min<int64_t>(blocks, int64_t{1} << 30);
    if (blocks < min_blocks)
        return make_error("memory plan: a KV budget of " + std::to_string(blocks) + " blocks of " +
                          std::to_string(p.bytes_per_block) +
                          " bytes is too small; need at least " + std::to_string(min_blocks));
    p.num_blocks = static_cast<int32_t>(blocks);
    p.kv_bytes = blocks * p.bytes_per_block;
    p.budget_bytes =
        p.limit == KvPoolLimit::Utilization || p.limit == KvPoolLimit::Available ||
                p.limit == KvPoolLimit::Need || p.limit == KvPoolLimit::Context
            ? static_cast<int64_t>(budget.utilization * static_cast<double>(p.device_bytes))
            : shape.weight_bytes + shape.workspace_bytes + p.kv_bytes;
    p.free_bytes = std::max<int64_t>(0, p.device_bytes - shape.weight_bytes -
                                            shape.workspace_bytes - p.kv_bytes);
    return p;
}

} // namespace llmwb
