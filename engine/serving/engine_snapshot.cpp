// Engine::snapshot and the per-request metrics; Engine::check_consistency.
#include <algorithm>

#include "engine/serving/engine.h"

namespace llmwb {

SnapshotRequest Engine::metrics_of(const Request& r, EngineClock::time_point now) const {
    SnapshotRequest m;
    m.id = r.id;
    m.status = r.status;
    m.finish = r.finish;
    m.prompt_tokens = r.num_prompt_tokens;
    m.output_tokens = r.num_output();
    m.computed_tokens = r.num_computed;
    m.cached_tokens = r.num_cached_tokens;
    m.num_blocks = static_cast<int32_t>(kv_mgr_->live_blocks(r.id).size()); // window: held only
    m.preemptions = r.num_preemptions;
    m.draft_tokens = r.num_draft_verified;
    m.accepted_tokens = r.num_draft_accepted;
    if (r.num_output() > 0) {
        m.ttft_ms = ms_between(r.arrival, r.first_token);
        m.itl_ms = r.itl_last_ms;
        if (r.num_output() > 1)
            m.tpot_ms = ms_between(r.first_token, r.last_token) / (r.num_output() - 1);
    }
    const bool done = r.status == RequestStatus::Finished && r.num_output() > 0;
    m.e2e_ms = ms_between(r.arrival, done ? r.last_token : now);
    const bool scheduled = r.scheduled != EngineClock::time_point{};
    m.queue_ms = ms_between(r.arrival, scheduled ? r.scheduled : now);
    if (scheduled && r.num_output() > 0) {
        m.prefill_ms = ms_between(r.scheduled, r.first_token);
        m.decode_ms = ms_between(r.first_token, r.last_token);
    }
    m.output_gap_ms = r.output_gap_ms;
    m.max_tokens = r.params.max_tokens;
    return m;
}

void Engine::snapshot(EngineSnapshot& s) const {
    const auto now = EngineClock::now();
    s.step_index = step_index_;
    s.step_ms = last_step_ms_;
    s.scheduled.resize(last_scheduled_.size());
    for (size_t i = 0; i < last_scheduled_.size(); ++i) {
        const SnapshotScheduled& src = last_scheduled_[i];
        SnapshotScheduled& dst = s.scheduled[i];
        dst.id = src.id;
        dst.prefill = src.prefill;
        dst.num_scheduled = src.num_scheduled;
        dst.num_computed = src.num_computed;
        dst.num_total = src.num_total;
        dst.num_draft = src.num_draft;
        dst.num_accepted = src.num_accepted;
        dst.blocks.assign(src.blocks.begin(), src.blocks.end());
    }
    s.prefill_tokens = step_plan_.num_prefill_tokens;
    s.decode_tokens = step_plan_.num_decode_tokens;
    s.batch_size = static_cast<int32_t>(step_plan_.scheduled.size());
    s.num_running = static_cast<int32_t>(scheduler_->running().size());
    s.num_waiting = static_cast<int32_t>(scheduler_->waiting().size());
    s.num_preempted = static_cast<int32_t>(step_plan_.preempted.size());
    s.total_preemptions = scheduler_->total_preemptions();
    s.total_prompt_tokens_computed = total_prompt_computed_;
    s.total_generated_tokens = total_generated_;

    const BlockPool& pool = kv_mgr_->pool();
    s.block_size = pool.block_size();
    s.blocks.resize(static_cast<size_t>(pool.num_blocks()));
    int32_t cached_free = 0;
    for (int32_t b = 0; b < pool.num_blocks(); ++b) {
        SnapshotBlock& blk = s.blocks[b];
        blk.ref_count = pool.ref_count(b);
        blk.hash = pool.has_hash(b) ? pool.block_hash(b) : 0;
        blk.owner = -1;
        if (blk.ref_count > 0) {
            blk.state = BlockState::Used;
        } else if (pool.has_hash(b)) {
            blk.state = BlockState::CachedFree;
            ++cached_free;
        } else {
            blk.state = BlockState::Free;
        }
    }
    for (const Request* r : scheduler_->running())    // oldest first: the first holder owns
        for (int32_t b : kv_mgr_->live_blocks(r->id)) // blocks released by a window are not its
            if (s.blocks[b].owner < 0)
                s.blocks[b].owner = r->id;
    s.num_used_blocks = pool.num_used();
    s.num_free_blocks = pool.num_free() - cached_free;
    s.num_cached_free_blocks = cached_free;
    s.kv_usage = static_cast<double>(pool.num_used()) / pool.num_blocks();
    s.prefix_cache_queries = kv_mgr_->prefix_queries();
    s.prefix_cache_hits = kv_mgr_->prefix_hits();

    s.requests.clear();
    for (const Request* r : scheduler_->running())
        s.requests.push_back(metrics_of(*r, now));
    for (const Request* r : scheduler_->waiting())
        s.requests.push_back(metrics_of(*r, now));
    s.requests.insert(s.requests.end(), finished_.begin(), finished_.end());
    s.memory = memory_plan_;
    s.speculative = spec_stats_;
}

EngineSnapshot Engine::snapshot() const {
    EngineSnapshot s;
    snapshot(s);
    return s;
}

Status Engine::check_consistency() const {
    if (Status st = kv_mgr_->check_consistency(); !st)
        return st;
    const auto& running = scheduler_->running();
    if (kv_mgr_->num_requests() != static_cast<int32_t>(running.size()))
        return make_error("engine: " + std::to_string(kv_mgr_->num_requests()) +
                          " block tables for " + std::to_string(running.size()) +
                          " running requests");
    for (const Request* r : running) {
        if (!kv_mgr_->has_table(r->id))
            return make_error("engine: running request " + std::to_string(r->id) +
                              " has no block table");
        const int64_t slots =
            static_cast<int64_t>(kv_mgr_->blocks(r->id).size()) * config_.block_size;
        if (slots < r->num_computed)
            return make_error("engine: request " + std::to_string(r->id) + " computed " +
                              std::to_string(r->num_computed) + " tokens in " +
                              std::to_string(slots) + " slots");
    }
    for (const Request* r : scheduler_->waiting())
        if (kv_mgr_->has_table(r->id) || r->num_computed != 0)
            return make_error("engine: waiting request " + std::to_string(r->id) +
                              " holds blocks or computed tokens");
    const size_t live = running.size() + scheduler_->waiting().size();
    if (live != requests_.size())
        return make_error("engine: " + std::to_string(requests_.size()) + " requests but " +
                          std::to_string(live) + " queued");
    return ok_status();
}

} // namespace llmwb
