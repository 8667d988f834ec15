#include "engine/serving/scheduler.h"

#include <algorithm>
#include <cassert>
#include <cstdint>

namespace llmwb {

const char* scheduler_policy_name(SchedulerPolicy p) {
    switch (p) {
    case SchedulerPolicy::Continuous:
        return "continuous";
    case SchedulerPolicy::Static:
        return "static";
    case SchedulerPolicy::Sequential:
        return "sequential";
    }
    return "?";
}

void Scheduler::add(Request* r) {
    r->status = RequestStatus::Waiting;
    waiting_.push_back(r);
}

void Scheduler::add_running(Request* r) {
    r->status = RequestStatus::Running;
    running_.push_back(r);
}

void Scheduler::remove(Request* r) {
    if (auto it = std::find(running_.begin(), running_.end(), r); it != running_.end())
        running_.erase(it);
    if (auto it = std::find(waiting_.begin(), waiting_.end(), r); it != waiting_.end())
        waiting_.erase(it);
    kv_->free(r->id);
}

int32_t Scheduler::max_seqs() const {
    return config_.policy == SchedulerPolicy::Sequential ? 1 : std::max(1, config_.max_num_seqs);
}

int64_t Scheduler::reserve_tokens(const Request& r, int64_t scheduled_end) const {
    if (config_.policy != SchedulerPolicy::Static)
        return scheduled_end;
    const int64_t remaining = std::max(0, r.params.max_tokens - r.num_output());
    const int64_t whole = std::min<int64_t>(config_.context_limit, r.num_tokens() + remaining);
    return std::max(scheduled_end, whole);
}

void Scheduler::preempt(Request* r, std::vector<RequestId>* preempted) {
    auto it = std::find(running_.begin(), running_.end(), r);
    assert(it != running_.end());
    running_.erase(it);
    kv_->free(r->id);
    r->num_computed = 0;
    r->draft_tokens.clear();
    r->status = RequestStatus::Waiting;
    ++r->num_preemptions;
    ++total_preemptions_;
    waiting_.push_front(r);
    if (preempted)
        preempted->push_back(r->id);
}

bool Scheduler::preempt_newest(std::vector<RequestId>* preempted) {
    if (running_.empty())
        return false;
    preempt(running_.back(), preempted);
    return true;
}

void Scheduler::schedule(StepPlan& plan) {
    plan.clear();
    int64_t budget = std::max(1, config_.max_num_batched_tokens);
    auto push = [&](const Request& r, int32_t n, int32_t drafts = 0) {
        ScheduledRequest s;
        s.id = r.id;
        s.num_computed = r.num_computed;
        s.num_scheduled = n + drafts;
        s.num_total = r.num_tokens();
        s.prefill = r.is_prefill();
        s.num_draft = drafts;
        plan.scheduled.push_back(s);
        (s.prefill ? plan.num_prefill_tokens : plan.num_decode_tokens) += n + drafts;
        budget -= n + drafts;
    };

    // Sliding window: a chunk small enough that one request fits the pool whatever its length
    // (its blocks outside the window are released as it advances).
    const int64_t chunk_cap = kv_->window_chunk_limit() > 0 ? kv_->window_chunk_limit() : INT64_MAX;

    // 1. Running requests, oldest first; preempt the newest when the pool is exhausted.
    for (size_t i = 0; i < running_.size() && budget > 0;) {
        Request* r = running_[i];
        const auto n = static_cast<int32_t>(
            std::min<int64_t>({r->num_tokens() - r->num_computed, budget, chunk_cap}));
        if (n <= 0) {
            ++i;
            continue;
        }
        // Speculative drafts ride along a decode token, within the token budget and the context.
        int32_t drafts = 0;
        if (n == 1 && !r->draft_tokens.empty()) {
            const int64_t room =
                std::min<int64_t>(budget - 1, config_.context_limit - r->num_tokens());
            drafts = static_cast<int32_t>(
                std::clamp<int64_t>(room, 0, static_cast<int64_t>(r->draft_tokens.size())));
            r->draft_tokens.resize(static_cast<size_t>(drafts));
        }
        bool scheduled = false;
        for (;;) {
            if (kv_->allocate_slots(r->id, r->num_computed + n + drafts, r->num_computed, nullptr,
                                    &plan.copies)) {
                push(*r, n, drafts);
                scheduled = true;
                break;
            }
            if (drafts > 0) { // no room for the drafts: decode without them first
                drafts = 0;
                r->draft_tokens.clear();
                continue;
            }
            Request* victim = running_.back();
            preempt(victim, &plan.preempted);
            if (victim == r)
                break;
        }
        if (scheduled)
            ++i;
    }

    // 2. Admissions, first come first served. Static batching admits its whole batch at once
    // (whole-length reservations); its prefill chunks then follow the token budget.
    if (!plan.preempted.empty())
        return;
    const bool batch = config_.policy == SchedulerPolicy::Static;
    if (batch && !running_.empty())
        return;
    while (!waiting_.empty() && (budget > 0 || batch) &&
           static_cast<int32_t>(running_.size()) < max_seqs()) {
        Request* r = waiting_.front();
        assert(r->num_computed == 0);
        PrefixHit hit = kv_->find_cached_prefix(r->tokens);
        const auto n = static_cast<int32_t>(std::min<int64_t>(
            {r->num_tokens() - hit.num_tokens, std::max<int64_t>(budget, 0), chunk_cap}));
        const int64_t need = reserve_tokens(*r, hit.num_tokens + n);
        if (!kv_->allocate_slots(r->id, need, hit.num_tokens, &hit, &plan.copies))
            break;
        kv_->record_prefix_query(r->num_tokens(), hit.num_tokens);
        waiting_.pop_front();
        r->status = RequestStatus::Running;
        r->num_computed = hit.num_tokens;
        r->num_cached_tokens = hit.num_tokens;
        r->prefill_end = r->num_tokens();
        running_.push_back(r);
        plan.admitted.push_back(r->id);
        if (n > 0)
            push(*r, n);
    }
}

} // namespace llmwb
