// EngineSnapshot: everything the UI draws about the engine after a step, as a plain copyable
// value. Engine::snapshot(EngineSnapshot&) refills an existing value in place so that a caller
// that keeps one snapshot around pays no allocation per step (only the copy of the state).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/serving/memory_plan.h"
#include "engine/serving/request.h"
#include "engine/serving/speculative.h"

namespace llmwb {

// One request scheduled in the step.
struct SnapshotScheduled {
    RequestId id = -1;
    bool prefill = false;        // prompt (or recompute) chunk; false: a decode token
    int32_t num_scheduled = 0;   // tokens computed this step
    int32_t num_computed = 0;    // tokens in the cache after the step
    int32_t num_total = 0;       // tokens of the sequence after the step
    int32_t num_draft = 0;       // speculative draft tokens verified this step
    int32_t num_accepted = 0;    // of which the target accepted
    std::vector<int32_t> blocks; // its block table
};

enum class BlockState : uint8_t { Free, Used, CachedFree };

struct SnapshotBlock {
    BlockState state = BlockState::Free;
    int32_t ref_count = 0;
    RequestId owner = -1; // first (oldest) request holding it; -1 when free
    uint64_t hash = 0;    // prefix-cache hash (0: none)
};

struct SnapshotRequest {
    RequestId id = -1;
    RequestStatus status = RequestStatus::Waiting;
    FinishReason finish = FinishReason::None;
    int32_t prompt_tokens = 0;
    int32_t output_tokens = 0;
    int32_t computed_tokens = 0;
    int32_t cached_tokens = 0; // served by the prefix cache at the last admission
    int32_t num_blocks = 0;
    int32_t preemptions = 0;
    int32_t draft_tokens = 0;    // speculative draft tokens verified for this request
    int32_t accepted_tokens = 0; // of them accepted ("accepted a/b")
    double ttft_ms = 0;          // arrival -> first token (0 until then)
    double tpot_ms = 0;          // (last token - first token) / (output tokens - 1)
    double itl_ms = 0;           // latest inter-token latency
    double e2e_ms = 0;           // arrival -> last token (or now while it runs)
    double queue_ms = 0;         // arrival -> first scheduled (or now while it waits)
    double prefill_ms = 0;       // first scheduled -> first token (0 until then)
    double decode_ms = 0;        // first token -> last token
    double output_gap_ms = 0;    // Request::output_gap_ms of its latest output
    int32_t max_tokens = 0;      // the resolved max_tokens parameter
};

struct EngineSnapshot {
    int64_t step_index = 0; // steps executed so far; the step described is step_index - 1
    double step_ms = 0;

    std::vector<SnapshotScheduled> scheduled;
    int32_t prefill_tokens = 0, decode_tokens = 0, batch_size = 0;
    int32_t num_running = 0, num_waiting = 0, num_preempted = 0; // preempted this step
    int64_t total_preemptions = 0;
    int64_t total_prompt_tokens_computed = 0, total_generated_tokens = 0;

    int32_t block_size = 0;
    std::vector<SnapshotBlock> blocks; // [num_blocks]
    int32_t num_free_blocks = 0, num_used_blocks = 0, num_cached_free_blocks = 0;
    double kv_usage = 0; // used blocks / blocks (vllm:kv_cache_usage_perc)

    int64_t prefix_cache_queries = 0, prefix_cache_hits = 0; // tokens

    // Live requests, then those that finished in this step.
    std::vector<SnapshotRequest> requests;

    MemoryPlan memory;
    SpeculativeStats speculative; // totals since the engine was created
};

} // namespace llmwb
