#include "engine/serving/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "engine/runtime/model_executor.h"

namespace llmwb {

namespace {

// "12", or "0.38" below 10 MiB (a block of a small model is a fraction of a MiB: "need at least
// 0 MiB" said nothing).
std::string mib(int64_t bytes) {
    bytes = std::max<int64_t>(0, bytes);
    if (bytes >= (int64_t{10} << 20))
        return std::to_string(bytes >> 20);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(bytes) / (1 << 20));
    return buf;
}

// The memory utilization multiplies (see memory_plan.h).
int64_t utilization_base(const KvPoolShape& shape, const MemoryBudget& budget,
                         int64_t device_bytes) {
    if (shape.device == DeviceKind::Cpu && budget.device_bytes <= 0 && shape.available_bytes > 0)
        return shape.available_bytes + shape.weight_bytes;
    return device_bytes;
}

int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

// A fresh bf16 weight cache (memory_plan.h): the largest candidates first while they fit in
// `room` bytes. Fills p.weight_cache, p.weight_cache_bytes and p.weight_cache_matrices.
void choose_weight_cache(const std::vector<int64_t>& candidates, int64_t room, MemoryPlan& p) {
    std::vector<int32_t> order;
    for (size_t i = 0; i < candidates.size(); ++i)
        if (candidates[i] > 0)
            order.push_back(static_cast<int32_t>(i));
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        return candidates[static_cast<size_t>(a)] > candidates[static_cast<size_t>(b)];
    });
    for (int32_t i : order) {
        const int64_t bytes = candidates[static_cast<size_t>(i)];
        if (bytes > room)
            continue;
        room -= bytes;
        p.weight_cache.push_back(i);
        p.weight_cache_bytes += bytes;
        ++p.weight_cache_matrices;
    }
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
    p.kv_dtype = shape.kv_dtype;
    p.kv_elem_bytes = kv_dtype_elem_bytes(shape.kv_dtype);
    p.bytes_per_block = kv_bytes_per_block(config, shape.block_size, shape.kv_dtype);
    if (p.bytes_per_block <= 0)
        return make_error("memory plan: the model has no KV cache");
    p.device_bytes = budget.device_bytes > 0 ? budget.device_bytes
                     : shape.total_bytes > 0 ? shape.total_bytes
                                             : physical_memory_bytes();
    p.weight_bytes = shape.weight_bytes;
    p.workspace_bytes = shape.workspace_bytes;
    const int64_t context = config.max_position > 0 ? config.max_position : kFallbackPoolTokens;
    const int64_t per_seq = ceil_div(context, shape.block_size);
    p.device = shape.device;
    p.cap_seqs = std::max(1, shape.max_num_seqs);
    if (shape.device == DeviceKind::Cpu)
        p.cap_seqs = std::min(p.cap_seqs, kCpuContextSeqs);
    p.cap_blocks =
        static_cast<int32_t>(std::clamp<int64_t>(per_seq * p.cap_seqs, 1, int64_t{1} << 30));
    min_blocks = std::max(1, min_blocks);
    p.weight_cache_candidates = static_cast<int32_t>(
        std::count_if(shape.weight_cache_candidates.begin(), shape.weight_cache_candidates.end(),
                      [](int64_t b) { return b > 0; }));
    p.weight_cache_bytes = std::max<int64_t>(0, shape.weight_cache_bytes);
    p.weight_cache_matrices = p.weight_cache_bytes > 0 ? shape.weight_cache_matrices : 0;
    p.panel_matrices = shape.panel_matrices;
    p.panel_bytes = shape.panel_bytes;

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
        // An explicit budget the machine cannot give is refused, not trimmed: the user asked
        // for that much (the engine's current pool is given back first).
        if (shape.available_bytes > 0) {
            const int64_t avail =
                shape.available_bytes + shape.reusable_bytes - shape.workspace_bytes;
            if (*budget.kv_bytes > avail)
                return make_error("memory plan: a KV budget of " + mib(*budget.kv_bytes) +
                                  " MiB is more than the " + mib(std::max<int64_t>(0, avail)) +
                                  " MiB available (free memory now, less the workspace of " +
                                  mib(shape.workspace_bytes) + " MiB)");
        }
        blocks = *budget.kv_bytes / p.bytes_per_block;
        p.limit = KvPoolLimit::KvBytes;
        // Never more blocks than can be used: max_num_seqs sequences of the full context.
        const int64_t usable = per_seq * std::max(1, shape.max_num_seqs);
        if (blocks > usable && usable >= min_blocks)
            blocks = usable;
    } else {
        if (!(budget.utilization > 0.0 && budget.utilization <= 1.0))
            return make_error("memory plan: gpu_memory_utilization must be in (0, 1], got " +
                              std::to_string(budget.utilization));
        if (p.device_bytes <= 0)
            return make_error("memory plan: device memory is unknown");
        p.base_bytes = utilization_base(shape, budget, p.device_bytes);
        p.utilization = budget.utilization;
        const auto usable = static_cast<int64_t>(
            std::floor(budget.utilization * static_cast<double>(p.base_bytes)));
        int64_t kv_budget =
            usable - shape.weight_bytes - shape.workspace_bytes - p.weight_cache_bytes;
        if (shape.choose_weight_cache && p.weight_cache_bytes == 0 && budget.weight_cache) {
            // The KV reserve first, then the cache out of what is left (and available now).
            const int64_t reserve_blocks = std::max<int64_t>(
                min_blocks,
                std::min<int64_t>(ceil_div(kWeightCacheKvReserveTokens, shape.block_size),
                                  p.cap_blocks));
            int64_t room = kv_budget - reserve_blocks * p.bytes_per_block;
            if (shape.available_bytes > 0)
                room =
                    std::min(room, shape.available_bytes + shape.reusable_bytes -
                                       shape.workspace_bytes - reserve_blocks * p.bytes_per_block);
            choose_weight_cache(shape.weight_cache_candidates, room, p);
            kv_budget -= p.weight_cache_bytes;
        }
        blocks = std::max<int64_t>(0, kv_budget) / p.bytes_per_block;
        p.limit = KvPoolLimit::Utilization;
        if (blocks < min_blocks) {
            char u[32];
            std::snprintf(u, sizeof u, "%g", budget.utilization);
            std::string why = "memory plan: gpu_memory_utilization " + std::string(u) + " x " +
                              mib(p.base_bytes) + " MiB leaves " + mib(kv_budget) +
                              " MiB for the KV cache after weights (" + mib(shape.weight_bytes) +
                              " MiB) and workspace (" + mib(shape.workspace_bytes) + " MiB); " +
                              std::to_string(min_blocks) + " block(s) need " +
                              mib(p.bytes_per_block * min_blocks) + " MiB";
            if (auto least = min_utilization(shape, budget, min_blocks)) {
                std::snprintf(u, sizeof u, "%g", *least);
                why += "; the smallest utilization that works is " + std::string(u);
            }
            if (!budget.fallback_when_short)
                return make_error(std::move(why));
            p.note = std::move(why);
            p.limit = KvPoolLimit::Fallback;
            blocks = std::min({per_seq, ceil_div(kFallbackPoolTokens, shape.block_size),
                               static_cast<int64_t>(p.cap_blocks)});
        } else {
            // Never more than the machine has now (the current pool is given back first).
            if (shape.available_bytes > 0) {
                // A cache chosen now is not allocated yet; a resident one is not free.
                const int64_t fresh = p.weight_cache.empty() ? 0 : p.weight_cache_bytes;
                const int64_t avail =
                    (shape.available_bytes + shape.reusable_bytes - shape.workspace_bytes - fresh) /
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
            ? static_cast<int64_t>(budget.utilization * static_cast<double>(p.base_bytes))
            : shape.weight_bytes + shape.workspace_bytes + p.weight_cache_bytes + p.kv_bytes;
    p.free_bytes =
        std::max<int64_t>(0, p.device_bytes - shape.weight_bytes - shape.workspace_bytes -
                                 p.weight_cache_bytes - p.kv_bytes);
    return p;
}

std::optional<double> min_utilization(const KvPoolShape& shape, const MemoryBudget& budget,
                                      int32_t min_blocks) {
    const int64_t per_block = kv_bytes_per_block(*shape.model, shape.block_size, shape.kv_dtype);
    const int64_t device = budget.device_bytes > 0 ? budget.device_bytes
                           : shape.total_bytes > 0 ? shape.total_bytes
                                                   : physical_memory_bytes();
    const int64_t base = utilization_base(shape, budget, device);
    if (per_block <= 0 || base <= 0)
        return std::nullopt;
    const double need = static_cast<double>(shape.weight_bytes + shape.workspace_bytes +
                                            std::max<int64_t>(0, shape.weight_cache_bytes) +
                                            per_block * std::max(1, min_blocks));
    // Rounded up to 1e-4, then nudged up while the floor() in plan_memory still falls short.
    double u = std::ceil(need / static_cast<double>(base) * 1e4) / 1e4;
    while (u <= 1.0 && static_cast<int64_t>(std::floor(u * static_cast<double>(base))) <
                           static_cast<int64_t>(need))
        u = std::round((u + 1e-4) * 1e4) / 1e4;
    if (u > 1.0)
        return std::nullopt;
    return u;
}

} // namespace llmwb
