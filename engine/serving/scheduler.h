// Scheduler: continuous (iteration-level) batching over a KvCacheManager.
//
// Every step each running request asks for (tokens - computed tokens), in admission order,
// capped by the remaining token budget (max_num_batched_tokens): long prompts are prefilled
// in chunks, and prefill chunks and decode tokens share one batch. When the pool has no block
// for a running request, the most recently admitted running request is preempted (recompute:
// its blocks are freed and it returns to the front of the waiting queue with its generated
// tokens kept as prompt). Waiting requests are admitted first come first served while the
// budget, max_num_seqs and the pool allow, and only in steps that preempted nothing.
//
// Policies: Continuous (above); Static (a baseline: admit a batch only when nothing runs,
// reserve each request's whole length up front — contiguous-style preallocation — and admit no
// one else until the batch has finished); Sequential is Continuous with max_num_seqs = 1.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/serving/kv_cache_manager.h"
#include "engine/serving/request.h"
#include "engine/serving/step_plan.h"

namespace llmwb {

enum class SchedulerPolicy : uint8_t { Continuous, Static, Sequential };

const char* scheduler_policy_name(SchedulerPolicy p); // "continuous" | "static" | "sequential"

struct SchedulerConfig {
    int32_t max_num_seqs = 64;
    int32_t max_num_batched_tokens = 512;
    SchedulerPolicy policy = SchedulerPolicy::Continuous;
    // Longest sequence (prompt + generated) a request may reach; Static reserves up to it.
    int64_t context_limit = 4096;
};

class Scheduler {
  public:
    Scheduler(const SchedulerConfig& config, KvCacheManager& kv) : config_(config), kv_(&kv) {}

    const SchedulerConfig& config() const { return config_; }
    void set_config(const SchedulerConfig& config) { config_ = config; }

    void add(Request* r); // to the back of the waiting queue
    // A request that already holds blocks (a fork) joins the running requests as the newest.
    void add_running(Request* r);
    // Takes a request out (abort or finish); frees its blocks.
    void remove(Request* r);

    // Fills `plan` (cleared first) and updates the requests' status and admission; the caller
    // executes the plan and then advances num_computed.
    void schedule(StepPlan& plan);

    // Moves the newest running request back to the front of waiting; false when none runs.
    bool preempt_newest(std::vector<RequestId>* preempted);

    const std::deque<Request*>& waiting() const { return waiting_; }
    const std::vector<Request*>& running() const { return running_; }
    bool has_unfinished() const { return !waiting_.empty() || !running_.empty(); }
    int64_t total_preemptions() const { return total_preemptions_; }

  private:
    void preempt(Request* r, std::vector<RequestId>* preempted);
    int32_t max_seqs() const;
    // Tokens a request admitted now reserves (Static: its whole length).
    int64_t reserve_tokens(const Request& r, int64_t scheduled_end) const;

    SchedulerConfig config_;
    KvCacheManager* kv_;
    std::deque<Request*> waiting_;
    std::vector<Request*> running_; // admission order
    int64_t total_preemptions_ = 0;
};

} // namespace llmwb
