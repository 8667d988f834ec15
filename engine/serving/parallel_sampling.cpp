// Engine: parallel sampling (n > 1). A group is an internal prefill request plus the choices
// forked from it when the prompt's last token has its logits (engine.h, add_request_group).
#include "engine/serving/parallel_sampling.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>

#include "engine/serving/engine.h"

namespace llmwb {

std::vector<SamplingParams> parallel_sampling_choices(const SamplingParams& params, int n) {
    std::vector<SamplingParams> choices(static_cast<size_t>(std::max(1, n)), params);
    if (params.seed)
        for (size_t i = 0; i < choices.size(); ++i)
            choices[i].seed = *params.seed + i;
    return choices;
}

Result<std::vector<GenerationResult>> generate_choices(Engine& engine,
                                                       std::vector<int32_t> prompt_ids,
                                                       std::span<const SamplingParams> choices) {
    const auto t0 = EngineClock::now();
    const auto prompt_tokens = static_cast<int32_t>(prompt_ids.size());
    auto ids = engine.add_request_group(std::move(prompt_ids), choices);
    if (!ids)
        return ids.error();
    std::vector<GenerationResult> res(ids->size());
    std::unordered_map<RequestId, size_t> index;
    for (size_t i = 0; i < ids->size(); ++i) {
        index.emplace((*ids)[i], i);
        res[i].prompt_tokens = prompt_tokens;
    }
    size_t left = ids->size();
    StepOutputs out;
    while (left > 0) {
        engine.step(out);
        if (out.step_index < 0 && !engine.has_unfinished())
            return make_error("generate: the engine lost a choice of the group");
        for (RequestOutput& o : out.outputs) {
            auto it = index.find(o.id);
            if (it == index.end())
                continue;
            GenerationResult& r = res[it->second];
            if (r.ids.empty() && !o.new_token_ids.empty())
                r.ttft_ms = ms_between(t0, out.time);
            r.ids.insert(r.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
            r.text += o.text;
            for (SampledToken& t : o.logprobs)
                r.logprobs.push_back(std::move(t));
            if (o.finished) {
                if (o.new_token_ids.empty() && !engine.last_error().empty())
                    return make_error(engine.last_error());
                r.finish = o.finish;
                r.stop_matched = o.stop_matched;
                r.stop_token = o.stop_token;
                r.total_ms = ms_between(t0, EngineClock::now());
                --left;
            }
        }
    }
    return res;
}

double cumulative_logprob(const GenerationResult& r) {
    double sum = 0;
    for (const SampledToken& t : r.logprobs)
        sum += t.logprob;
    return sum;
}

const char* best_of_rank_name(BestOfRank r) {
    return r == BestOfRank::MeanLogprob ? "mean-logprob" : "logprob";
}

double best_of_score(const GenerationResult& r, BestOfRank rank) {
    const double sum = cumulative_logprob(r);
    if (rank == BestOfRank::MeanLogprob)
        return r.logprobs.empty() ? 0.0 : sum / static_cast<double>(r.logprobs.size());
    return sum;
}

std::vector<size_t> best_of_order(std::span<const GenerationResult> results, size_t n,
                                  BestOfRank rank) {
    std::vector<size_t> order(results.size());
    std::vector<double> score(results.size());
    for (size_t i = 0; i < results.size(); ++i) {
        order[i] = i;
        score[i] = best_of_score(results[i], rank);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return score[a] > score[b]; });
    order.resize(std::min(n, order.size()));
    return order;
}

Result<std::vector<RequestId>> Engine::add_request_group(std::vector<int32_t> prompt_ids,
                                                         std::span<const SamplingParams> choices) {
    if (choices.empty())
        return make_error("add_request: no choices (n must be >= 1)");
    if (choices.size() == 1) {
        auto id = add_request(std::move(prompt_ids), choices[0]);
        if (!id)
            return id.error();
        return std::vector<RequestId>{*id};
    }
    std::vector<GroupChoice> group;
    group.reserve(choices.size());
    for (size_t i = 0; i < choices.size(); ++i) {
        auto resolved = check_request(prompt_ids, choices[i]);
        if (!resolved) {
            if (i == 0)
                return resolved.error();
            return make_error("choice " + std::to_string(i) + ": " + resolved.message());
        }
        group.push_back({-1, *resolved});
    }
    // The prefill request samples nothing; it holds the longest choice's length (the pool is
    // never re-planned below what a live request needs).
    SamplingParams prefill_params = group[0].params;
    for (const GroupChoice& c : group)
        prefill_params.max_tokens = std::max(prefill_params.max_tokens, c.params.max_tokens);
    const RequestId prefill_id = next_id_++;
    std::vector<RequestId> ids;
    for (GroupChoice& c : group) {
        c.id = next_id_++;
        ids.push_back(c.id);
    }
    auto r = std::make_unique<Request>(prefill_id, std::move(prompt_ids), prefill_params);
    r->arrival = EngineClock::now();
    outputs_.add(*r);
    scheduler_->add(r.get());
    requests_.emplace(prefill_id, std::move(r));
    groups_.emplace(prefill_id, std::move(group));
    return ids;
}

bool Engine::group_is_plain_greedy(RequestId prefill) const {
    const auto it = groups_.find(prefill);
    assert(it != groups_.end());
    return std::all_of(it->second.begin(), it->second.end(),
                       [](const GroupChoice& c) { return c.params.is_plain_greedy(); });
}

void Engine::fork_group(Request& prefill, const float* logits, int32_t device_id,
                        StepOutputs& out) {
    auto it = groups_.find(prefill.id);
    assert(it != groups_.end());
    const std::vector<GroupChoice> choices = std::move(it->second);
    groups_.erase(it);
    const int32_t vocab = exec_.vocab_size();
    const int64_t limit = context_limit();
    for (const GroupChoice& c : choices) {
        Request& child = fork_as(prefill, c.id, c.params);
        // The choice's clock is the prompt's: it waited and prefilled as the group.
        child.arrival = prefill.arrival;
        child.scheduled = prefill.scheduled;
        child.num_preemptions = prefill.num_preemptions;
        RequestOutput& o = out.outputs.emplace_back();
        o.id = child.id;
        outputs_.append_token(child, logits, vocab, device_id, limit, o);
        total_generated_ += static_cast<int64_t>(o.new_token_ids.size());
        if (o.finished) {
            finish_request(child, o.finish); // child is gone
            o.metrics = finished_.back();
        } else {
            o.metrics = metrics_of(child, out.time);
            to_propose_.push_back(child.id);
        }
    }
    // The prompt's blocks now belong to the choices.
    scheduler_->remove(&prefill);
    outputs_.remove(prefill.id);
    requests_.erase(prefill.id); // prefill is gone
}

int32_t Engine::num_waiting_sequences() const {
    int32_t n = 0;
    for (const Request* r : scheduler_->waiting()) {
        const auto g = groups_.find(r->id);
        n += g == groups_.end() ? 1 : static_cast<int32_t>(g->second.size());
    }
    return n;
}

bool Engine::abort_group_choice(RequestId id) {
    for (auto& [prefill_id, choices] : groups_) {
        auto c = std::find_if(choices.begin(), choices.end(),
                              [&](const GroupChoice& g) { return g.id == id; });
        if (c == choices.end())
            continue;
        // Its record: the group's so far, under its own id.
        SnapshotRequest m = metrics_of(*find(prefill_id), EngineClock::now());
        m.id = id;
        m.status = RequestStatus::Finished;
        m.finish = FinishReason::Aborted;
        m.max_tokens = c->params.max_tokens;
        finished_.push_back(m);
        aborted_.push_back(m);
        choices.erase(c);
        if (choices.empty())
            drop_group(prefill_id, FinishReason::Aborted, nullptr);
        return true;
    }
    return false;
}

void Engine::drop_group(RequestId prefill_id, FinishReason why, StepOutputs* out) {
    auto it = groups_.find(prefill_id);
    assert(it != groups_.end());
    Request& prefill = *find(prefill_id);
    if (out) {
        for (const GroupChoice& c : it->second) {
            RequestOutput& o = out->outputs.emplace_back();
            o.id = c.id;
            o.finished = true;
            o.finish = why;
            o.metrics = metrics_of(prefill, EngineClock::now());
            o.metrics.id = c.id;
            o.metrics.status = RequestStatus::Finished;
            o.metrics.finish = why;
            finished_.push_back(o.metrics);
        }
    }
    groups_.erase(it);
    if (custom_proposer_)
        custom_proposer_->release(prefill_id);
    scheduler_->remove(&prefill);
    outputs_.remove(prefill_id);
    requests_.erase(prefill_id);
}

} // namespace llmwb
