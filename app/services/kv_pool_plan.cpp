#include "app/services/kv_pool_plan.h"

#include <algorithm>

namespace llmwb {

KvPoolChoice choose_kv_pool(const ModelConfig& config, int64_t weightBytes,
                            int64_t workspaceBytes, int32_t blockSize, const EngineTuning& tuning) {
    const EngineTuning t = tuning.clamped();
    KvPoolChoice c;
    c.budget.utilization = t.gpuMemoryUtilization;
    c.budget.device_bytes = t.deviceBytes;
    const int64_t context = config.max_position > 0 ? config.max_position : 4096;
    const int64_t perSeq = (context + blockSize - 1) / std::max(1, blockSize);
    c.capBlocks = int32_t(std::clamp<int64_t>(perSeq * t.maxNumSeqs, 1, int64_t(1) << 30));
    auto plan = plan_memory(config, weightBytes, blockSize, workspaceBytes, c.budget);
    if (!plan) {
        // The budget does not even hold the weights: fall back to a small pool (one sequence
        // of at most kFallbackTokens) so that the model stays usable, and say why.
        c.error = QString::fromStdString(plan.message());
        const int64_t fallback = (kFallbackTokens + blockSize - 1) / std::max(1, blockSize);
        c.numBlocks = int32_t(std::min({perSeq, fallback, int64_t(c.capBlocks)}));
        return c;
    }
    if (plan->num_blocks > c.capBlocks) {
        c.capped = true;
        c.numBlocks = c.capBlocks;
        return c;
    }
    c.useBudget = true;
    c.numBlocks = plan->num_blocks;
    return c;
}

}  // namespace llmwb
