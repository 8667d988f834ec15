#include "engine/serving/bench_session.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmwb {

namespace {

double seconds(EngineClock::duration d) {
    return std::chrono::duration<double>(d).count();
}

} // namespace

struct BenchSession::Track {
    RequestId id = -1;
    bool submitted = false, finished = false;
    int32_t wanted = 0;  // the requested output tokens (padded rows generate more)
    int32_t outputs = 0; // requested tokens sampled so far
    EngineClock::time_point submit{}, first{}, last{};
    std::vector<double> token_s; // when each requested token was sampled, from the run start
};

BenchSession::BenchSession(Engine& engine, std::vector<BenchRequest> requests,
                           BenchRunOptions options)
    : engine_(engine), requests_(std::move(requests)), opt_(std::move(options)) {
    const auto n = static_cast<int32_t>(requests_.size());
    arrivals_ = make_arrival_times(n, opt_.request_rate, opt_.seed, opt_.burstiness);
    track_.resize(requests_.size());
    rows_.resize(requests_.size());
    for (int32_t i = 0; i < n; ++i) {
        track_[i].wanted = std::max(1, requests_[i].output_len);
        BenchRequestRow& row = rows_[i];
        row.index = i;
        row.arrival_s = -1; // not submitted yet
        row.input_tokens = static_cast<int32_t>(requests_[i].prompt.size());
    }
}

BenchSession::~BenchSession() = default;

bool BenchSession::done() const {
    return cancelled_ || failed_ || done_ == total();
}

double BenchSession::elapsed_s() const {
    if (!started_)
        return 0;
    if (done())
        return seconds(t_end_ - t0_);
    return seconds(EngineClock::now() - t0_);
}

Status BenchSession::submit(int32_t i, size_t pad_prompt_to, int32_t pad_output_to) {
    const BenchRequest& req = requests_[i];
    Track& t = track_[i];
    SamplingParams p;
    p.temperature = 0;
    p.ignore_eos = true;
    p.max_tokens = std::max(t.wanted, pad_output_to);
    p.max_tokens_set = true; // the length asked for, or the engine's length-rule error
    std::vector<int32_t> prompt;
    if (pad_prompt_to > req.prompt.size())
        prompt.assign(pad_prompt_to - req.prompt.size(), opt_.pad_token_id);
    prompt.insert(prompt.end(), req.prompt.begin(), req.prompt.end());
    auto id = engine_.add_request(std::move(prompt), p);
    if (!id)
        return make_error("request " + std::to_string(i) + ": " + id.message());
    index_[*id] = i;
    t.id = *id;
    t.submitted = true;
    t.submit = EngineClock::now();
    rows_[i].arrival_s = seconds(t.submit - t0_);
    ++in_flight_;
    return ok_status();
}

void BenchSession::record(const StepOutputs& so) {
    const double now_s = seconds(so.time - t0_);
    for (const RequestOutput& o : so.outputs) {
        auto it = index_.find(o.id);
        if (it == index_.end())
            continue; // not ours (the engine should have none of its own while the run goes)
        const int32_t i = it->second;
        Track& t = track_[i];
        BenchRequestRow& row = rows_[i];
        for (size_t k = 0; k < o.new_token_ids.size(); ++k) {
            t.last = so.time;
            if (t.outputs >= t.wanted)
                continue; // a padded row: computed, thrown away
            if (t.outputs == 0) {
                t.first = so.time;
                row.first_token_s = now_s;
            }
            t.token_s.push_back(now_s);
            ++t.outputs;
        }
        row.output_tokens = t.outputs;
        row.preemptions = o.metrics.preemptions;
        row.prefix_hit_tokens = o.metrics.cached_tokens;
        if (!o.finished)
            continue;
        t.finished = true;
        --in_flight_;
        index_.erase(it);
        if (o.finish == FinishReason::Aborted) {
            // A backend failure finishes what the step scheduled (advance() ends the run).
            row.error = engine_.last_error().empty() ? "aborted" : engine_.last_error();
            continue;
        }
        row.finish_s = seconds(t.last - t0_);
        ++done_;
        // The inter-token latencies of a completed request (vLLM counts successful ones only).
        for (size_t k = 1; k < t.token_s.size(); ++k)
            itls_ms_.push_back((t.token_s[k] - t.token_s[k - 1]) * 1000.0);
    }
}

Result<double> BenchSession::advance() {
    if (done())
        return 0.0;
    const auto n = total();
    if (!started_) {
        started_ = true;
        t0_ = EngineClock::now();
        acc0_ = engine_.kv_accounting();
        hits0_ = engine_.kv_manager().prefix_hits();
        queries0_ = engine_.kv_manager().prefix_queries();
        preempt0_ = engine_.scheduler().total_preemptions();
        steps0_ = engine_.steps();
        spec0_ = engine_.speculative_stats();
        spec_drafted_ = spec0_.num_draft_tokens;
        spec_accepted_ = spec0_.num_accepted_tokens;
    }
    auto fail = [&](const std::string& message) -> Result<double> {
        cancel(message);
        cancelled_ = false;
        failed_ = true;
        return make_error(message);
    };

    // What is due.
    const double elapsed = seconds(EngineClock::now() - t0_);
    double due_at = -1; // the next arrival that matters when nothing runs
    if (opt_.static_batches) {
        if (in_flight_ == 0 && next_ < n) {
            const int32_t want = std::min(n - next_, opt_.batch_size > 0 ? opt_.batch_size : n);
            if (arrivals_[next_ + want - 1] <= elapsed) {
                size_t max_prompt = 0;
                int32_t max_output = 0;
                if (opt_.static_padding)
                    for (int32_t k = next_; k < next_ + want; ++k) {
                        max_prompt = std::max(max_prompt, requests_[k].prompt.size());
                        max_output = std::max(max_output, requests_[k].output_len);
                    }
                for (int32_t k = 0; k < want; ++k) {
                    const int32_t i = next_++;
                    if (Status st = submit(i, max_prompt, max_output); !st)
                        return fail(st.message());
                }
            } else {
                due_at = arrivals_[next_ + want - 1];
            }
        }
    } else {
        while (next_ < n && arrivals_[next_] <= elapsed &&
               (opt_.max_concurrency <= 0 || in_flight_ < opt_.max_concurrency)) {
            const int32_t i = next_++;
            if (Status st = submit(i, 0, 0); !st)
                return fail(st.message());
        }
        if (next_ < n)
            due_at = arrivals_[next_];
    }
    if (in_flight_ == 0) {
        if (next_ < n && due_at >= 0) {
            const double wait = due_at - seconds(EngineClock::now() - t0_);
            return std::max(wait, 0.0);
        }
        // Nothing in flight and nothing left to submit: every request has ended.
        if (done_ < n)
            return fail("the engine ended requests without finishing them");
        t_end_ = EngineClock::now();
        return 0.0;
    }

    engine_.step(so_);
    if (so_.step_index >= 0) {
        batch_sum_ += so_.batch_size;
        BenchStepRow s;
        s.time_s = seconds(so_.time - t0_);
        s.step_ms = so_.step_ms;
        s.prefill_tokens = so_.num_prefill_tokens;
        s.decode_tokens = so_.num_decode_tokens;
        s.running = static_cast<int32_t>(engine_.scheduler().running().size());
        s.waiting = static_cast<int32_t>(engine_.scheduler().waiting().size());
        s.preempted = static_cast<int32_t>(so_.preempted.size());
        const BlockPool& pool = engine_.kv_manager().pool();
        s.kv_usage = pool.num_blocks() > 0 ? static_cast<double>(pool.num_used()) /
                                                 static_cast<double>(pool.num_blocks())
                                           : 0;
        const SpeculativeStats& sp = engine_.speculative_stats();
        s.draft_tokens = static_cast<int32_t>(sp.num_draft_tokens - spec_drafted_);
        s.accepted_tokens = static_cast<int32_t>(sp.num_accepted_tokens - spec_accepted_);
        spec_drafted_ = sp.num_draft_tokens;
        spec_accepted_ = sp.num_accepted_tokens;
        steps_.push_back(s);
    }
    bool backend_failed = false;
    for (const RequestOutput& o : so_.outputs)
        if (o.finished && o.finish == FinishReason::Aborted && index_.count(o.id))
            backend_failed = true;
    record(so_);
    if (opt_.on_step)
        opt_.on_step(so_, done_, n);
    if (backend_failed)
        return fail(engine_.last_error().empty() ? std::string("a request was aborted")
                                                 : engine_.last_error());
    if (done_ == n)
        t_end_ = EngineClock::now();
    return 0.0;
}

void BenchSession::cancel(const std::string& reason) {
    if (done())
        return;
    // Not started: nothing was submitted; the run stays without a start (duration 0, no
    // engine figures).
    for (size_t i = 0; i < track_.size(); ++i) {
        Track& t = track_[i];
        if (t.finished)
            continue;
        if (t.submitted) {
            engine_.abort(t.id);
            index_.erase(t.id);
            t.finished = true;
            --in_flight_;
        }
        if (rows_[i].error.empty())
            rows_[i].error = reason;
    }
    next_ = total();
    cancelled_ = true;
    if (started_)
        t_end_ = EngineClock::now();
}

BenchResult BenchSession::result(const std::vector<double>& percentiles) const {
    BenchResult res;
    res.request_rate =
        opt_.request_rate > 0 ? opt_.request_rate : std::numeric_limits<double>::infinity();
    res.burstiness = opt_.burstiness;
    res.max_concurrency = opt_.max_concurrency;
    res.completed = done_;
    for (const BenchRequestRow& row : rows_)
        res.failed += row.error.empty() ? 0 : 1;
    res.duration_s = elapsed_s();

    std::vector<std::vector<double>> token_s(track_.size());
    for (size_t i = 0; i < track_.size(); ++i)
        token_s[i] = track_[i].token_s;
    put_request_figures(res, rows_, token_s, itls_ms_, percentiles);

    if (!started_)
        return res;
    const KvAccounting& acc = engine_.kv_accounting();
    const auto allocated =
        static_cast<double>(acc.allocated_slot_steps - acc0_.allocated_slot_steps);
    const auto used = static_cast<double>(acc.used_slot_steps - acc0_.used_slot_steps);
    const auto contiguous =
        static_cast<double>(acc.contiguous_slot_steps - acc0_.contiguous_slot_steps);
    const auto steps = acc.steps - acc0_.steps;
    res.num_blocks = engine_.memory_plan().num_blocks;
    res.block_size = engine_.config().block_size;
    if (steps > 0)
        res.mean_kv_usage = (acc.usage_sum - acc0_.usage_sum) / static_cast<double>(steps);
    // The engine keeps one peak (measured when a step's blocks are allocated) over its life:
    // when the run raised it, that is the run's; otherwise the highest usage after the run's
    // steps (the engine's peak is from earlier work).
    double peak = 0;
    for (const BenchStepRow& s : steps_)
        peak = std::max(peak, s.kv_usage);
    if (acc.peak_used_blocks > acc0_.peak_used_blocks)
        peak = std::max(peak, static_cast<double>(acc.peak_used_blocks) /
                                  static_cast<double>(std::max(1, res.num_blocks)));
    res.peak_kv_usage = peak;
    if (contiguous > 0) {
        res.kv_waste_vs_contiguous = (allocated - used) / contiguous;
        res.contiguous_waste = (contiguous - used) / contiguous;
    }
    if (allocated > 0)
        res.kv_waste_vs_allocated = (allocated - used) / allocated;
    res.prefix_cache_queries = engine_.kv_manager().prefix_queries() - queries0_;
    res.prefix_cache_hits = engine_.kv_manager().prefix_hits() - hits0_;
    if (res.prefix_cache_queries > 0)
        res.prefix_cache_hit_rate = static_cast<double>(res.prefix_cache_hits) /
                                    static_cast<double>(res.prefix_cache_queries);
    res.preemptions = engine_.scheduler().total_preemptions() - preempt0_;
    res.steps = engine_.steps() - steps0_;
    const SpeculativeStats& spec1 = engine_.speculative_stats();
    res.speculative.num_drafts = spec1.num_drafts - spec0_.num_drafts;
    res.speculative.num_draft_tokens = spec1.num_draft_tokens - spec0_.num_draft_tokens;
    res.speculative.num_accepted_tokens = spec1.num_accepted_tokens - spec0_.num_accepted_tokens;
    res.speculative.accepted_per_pos = spec1.accepted_per_pos;
    for (size_t i = 0; i < spec0_.accepted_per_pos.size() && i < spec1.accepted_per_pos.size(); ++i)
        res.speculative.accepted_per_pos[i] -= spec0_.accepted_per_pos[i];
    if (res.steps > 0)
        res.mean_batch_size = static_cast<double>(batch_sum_) / static_cast<double>(res.steps);
    return res;
}

} // namespace llmwb
