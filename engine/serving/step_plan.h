// StepPlan: what one engine step runs — a plain value produced by Scheduler::schedule().
#pragma once

#include <cstdint>
#include <vector>

#include "engine/serving/kv_cache_manager.h"

namespace llmwb {

struct ScheduledRequest {
    RequestId id = -1;
    int32_t num_computed = 0;  // tokens with K/V in the cache before this step
    int32_t num_scheduled = 0; // tokens computed this step
    int32_t num_total = 0;     // tokens of the sequence (prompt + generated so far)
    bool prefill = false;      // a prompt (or recompute) chunk rather than a decode token
    int32_t num_draft = 0;     // speculative draft tokens after the sequence's last token
                               // (included in num_scheduled; each has a logits row)
    // The step reaches the end of the sequence: its last row's logits are sampled.
    bool wants_logits() const { return num_computed + num_scheduled - num_draft == num_total; }
};

struct StepPlan {
    std::vector<ScheduledRequest> scheduled; // running order (oldest admission first)
    std::vector<BlockCopy> copies;           // copy-on-write, before the forward
    std::vector<RequestId> admitted;         // moved from waiting to running this step
    std::vector<RequestId> preempted;        // moved back to waiting this step
    int32_t num_prefill_tokens = 0;
    int32_t num_decode_tokens = 0;

    int32_t num_tokens() const { return num_prefill_tokens + num_decode_tokens; }
    bool empty() const { return scheduled.empty(); }
    void clear() {
        scheduled.clear();
        copies.clear();
        admitted.clear();
        preempted.clear();
        num_prefill_tokens = num_decode_tokens = 0;
    }
};

} // namespace llmwb
