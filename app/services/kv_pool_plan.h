// The app's KV pool size from the Tuning settings. The engine's memory plan divides
// utilization x device memory - weights - workspace by the bytes of a block; on the CPU
// backend "device memory" is RAM, which would give a 3 M-parameter demo model a pool of
// gigabytes. So the pool is capped at the blocks that max_num_seqs sequences of the full
// context length can ever use (more can never be allocated), and the UI says "capped".
#pragma once

#include <QString>
#include <cstdint>

#include "app/services/generation_types.h"
#include "engine/model/model_config.h"
#include "engine/serving/memory_plan.h"

namespace llmwb {

// The pool used when the utilization plan fails (budget below weights + workspace).
inline constexpr int32_t kFallbackTokens = 4096;

struct KvPoolChoice {
    MemoryBudget budget;      // utilization (and device size) from the tuning
    int32_t numBlocks = 0;    // the pool to use
    int32_t capBlocks = 0;    // max_num_seqs x ceil(context / block size)
    bool capped = false;      // the utilization would allow more than the cap
    bool useBudget = false;   // true: pass `budget` (set_memory_budget); false: numBlocks
    QString error;            // the utilization plan failed: numBlocks is a fallback pool
};

// contextLength <= 0: 4096. workspaceBytes: the engine's activation estimate.
KvPoolChoice choose_kv_pool(const ModelConfig& config, int64_t weightBytes,
                            int64_t workspaceBytes, int32_t blockSize, const EngineTuning& tuning);

}  // namespace llmwb
