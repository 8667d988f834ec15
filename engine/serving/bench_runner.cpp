#include "engine/serving/bench_runner.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <unordered_map>

namespace llmwb {

namespace {

double percentile(const std::vector<double>& sorted, double q) { // numpy "linear"
    if (sorted.empty())
        return 0;
    const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

double seconds(EngineClock::duration d) {
    return std::chrono::duration<double>(d).count();
}

} // namespace

LatencyStats latency_stats(std::vector<double> v) {
    LatencyStats s;
    if (v.empty())
        return s;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v)
        sum += x;
    s.mean = sum / static_cast<double>(v.size());
    double var = 0;
    for (double x : v)
        var += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(var / static_cast<double>(v.size()));
    s.median = percentile(v, 50);
    s.p99 = percentile(v, 99);
    return s;
}

Result<BenchResult> run_bench(Engine& engine, const std::vector<BenchRequest>& requests,
                              const BenchRunOptions& opt) {
    struct Track {
        EngineClock::time_point submit{}, first{}, last{};
        int32_t outputs = 0;
        int32_t wanted = 0; // the requested output tokens (padded rows generate more)
        bool done = false;
    };
    const auto n = static_cast<int32_t>(requests.size());
    std::vector<Track> track(requests.size());
    std::unordered_map<RequestId, int32_t> index;
    std::vector<double> itls;
    const std::vector<double> arrivals =
        make_arrival_times(n, opt.request_rate, opt.seed, opt.burstiness);
    const KvAccounting acc0 = engine.kv_accounting();
    const int64_t hits0 = engine.kv_manager().prefix_hits();
    const SpeculativeStats spec0 = engine.speculative_stats();
    const int64_t queries0 = engine.kv_manager().prefix_queries();
    const int64_t preempt0 = engine.scheduler().total_preemptions();
    const int64_t steps0 = engine.steps();

    BenchResult res;
    int32_t next = 0, done = 0, in_flight = 0;
    int64_t batch_sum = 0;
    StepOutputs so;
    const auto t0 = EngineClock::now();

    // pad_prompt_to / pad_output_to: the padded batch shape (0: no padding).
    auto submit = [&](int32_t i, size_t pad_prompt_to = 0, int32_t pad_output_to = 0) -> Status {
        SamplingParams p;
        p.temperature = 0;
        p.ignore_eos = true;
        track[i].wanted = std::max(1, requests[i].output_len);
        p.max_tokens = std::max(track[i].wanted, pad_output_to);
        std::vector<int32_t> prompt;
        if (pad_prompt_to > requests[i].prompt.size())
            prompt.assign(pad_prompt_to - requests[i].prompt.size(), opt.pad_token_id);
        prompt.insert(prompt.end(), requests[i].prompt.begin(), requests[i].prompt.end());
        auto id = engine.add_request(prompt, p);
        if (!id)
            return make_error("request " + std::to_string(i) + ": " + id.message());
        index[*id] = i;
        track[i].submit = EngineClock::now();
        res.total_input_tokens += static_cast<int64_t>(requests[i].prompt.size());
        ++in_flight;
        return ok_status();
    };

    while (done < n) {
        const double elapsed = seconds(EngineClock::now() - t0);
        if (opt.static_batches) {
            if (!engine.has_unfinished() && next < n) {
                const int32_t want = std::min(n - next, opt.batch_size > 0 ? opt.batch_size : n);
                int32_t arrived = 0;
                while (next + arrived < n && arrivals[next + arrived] <= elapsed)
                    ++arrived;
                if (arrived >= want) {
                    size_t max_prompt = 0;
                    int32_t max_output = 0;
                    if (opt.static_padding)
                        for (int32_t k = next; k < next + want; ++k) {
                            max_prompt = std::max(max_prompt, requests[k].prompt.size());
                            max_output = std::max(max_output, requests[k].output_len);
                        }
                    for (int32_t k = 0; k < want; ++k)
                        if (Status st = submit(next++, max_prompt, max_output); !st)
                            return st.error();
                }
            }
        } else {
            while (next < n && arrivals[next] <= elapsed &&
                   (opt.max_concurrency <= 0 || in_flight < opt.max_concurrency))
                if (Status st = submit(next++); !st)
                    return st.error();
        }
        if (!engine.has_unfinished()) {
            if (next < n) { // wait for the next arrival
                const double wait = arrivals[next] - seconds(EngineClock::now() - t0);
                if (wait > 0)
                    std::this_thread::sleep_for(
                        std::chrono::duration<double>(std::min(wait, 0.05)));
                continue;
            }
            break; // nothing left (should not happen: done < n)
        }
        engine.step(so);
        if (so.step_index >= 0)
            batch_sum += so.batch_size;
        for (const RequestOutput& o : so.outputs) {
            auto it = index.find(o.id);
            if (it == index.end())
                continue;
            Track& t = track[it->second];
            for (size_t k = 0; k < o.new_token_ids.size(); ++k) {
                if (t.outputs >= t.wanted) { // a padded row: computed, thrown away
                    t.last = so.time;
                    continue;
                }
                if (t.outputs == 0)
                    t.first = so.time;
                else
                    itls.push_back(
                        std::chrono::duration<double, std::milli>(so.time - t.last).count());
                t.last = so.time;
                ++t.outputs;
            }
            if (o.finished) {
                t.done = true;
                ++done;
                --in_flight;
                res.total_output_tokens += t.outputs;
            }
        }
        if (opt.on_step)
            opt.on_step(so, done, n);
    }
    res.duration_s = seconds(EngineClock::now() - t0);
    res.completed = done;

    std::vector<double> ttft, tpot, e2el;
    for (const Track& t : track) {
        if (!t.done || t.outputs == 0)
            continue;
        const double first = std::chrono::duration<double, std::milli>(t.first - t.submit).count();
        const double e2e = std::chrono::duration<double, std::milli>(t.last - t.submit).count();
        ttft.push_back(first);
        e2el.push_back(e2e);
        if (t.outputs > 1)
            tpot.push_back((e2e - first) / (t.outputs - 1));
        res.per_request_ttft_ms.push_back(first);
    }
    res.ttft_ms = latency_stats(ttft);
    res.tpot_ms = latency_stats(tpot);
    res.itl_ms = latency_stats(itls);
    res.e2el_ms = latency_stats(e2el);
    if (res.duration_s > 0) {
        res.request_throughput = res.completed / res.duration_s;
        res.output_throughput = static_cast<double>(res.total_output_tokens) / res.duration_s;
        res.total_token_throughput =
            static_cast<double>(res.total_input_tokens + res.total_output_tokens) / res.duration_s;
    }

    const KvAccounting& acc = engine.kv_accounting();
    const auto allocated =
        static_cast<double>(acc.allocated_slot_steps - acc0.allocated_slot_steps);
    const auto used = static_cast<double>(acc.used_slot_steps - acc0.used_slot_steps);
    const auto contiguous =
        static_cast<double>(acc.contiguous_slot_steps - acc0.contiguous_slot_steps);
    const auto steps = acc.steps - acc0.steps;
    res.num_blocks = engine.memory_plan().num_blocks;
    res.block_size = engine.config().block_size;
    if (steps > 0)
        res.mean_kv_usage = (acc.usage_sum - acc0.usage_sum) / static_cast<double>(steps);
    res.peak_kv_usage = static_cast<double>(acc.peak_used_blocks) / std::max(1, res.num_blocks);
    if (contiguous > 0) {
        res.kv_waste_vs_contiguous = (allocated - used) / contiguous;
        res.contiguous_waste = (contiguous - used) / contiguous;
    }
    if (allocated > 0)
        res.kv_waste_vs_allocated = (allocated - used) / allocated;
    res.prefix_cache_queries = engine.kv_manager().prefix_queries() - queries0;
    res.prefix_cache_hits = engine.kv_manager().prefix_hits() - hits0;
    if (res.prefix_cache_queries > 0)
        res.prefix_cache_hit_rate = static_cast<double>(res.prefix_cache_hits) /
                                    static_cast<double>(res.prefix_cache_queries);
    res.preemptions = engine.scheduler().total_preemptions() - preempt0;
    res.steps = engine.steps() - steps0;
    const SpeculativeStats& spec1 = engine.speculative_stats();
    res.speculative.num_drafts = spec1.num_drafts - spec0.num_drafts;
    res.speculative.num_draft_tokens = spec1.num_draft_tokens - spec0.num_draft_tokens;
    res.speculative.num_accepted_tokens = spec1.num_accepted_tokens - spec0.num_accepted_tokens;
    res.speculative.accepted_per_pos = spec1.accepted_per_pos;
    for (size_t i = 0; i < spec0.accepted_per_pos.size(); ++i)
        res.speculative.accepted_per_pos[i] -= spec0.accepted_per_pos[i];
    if (res.steps > 0)
        res.mean_batch_size = static_cast<double>(batch_sum) / static_cast<double>(res.steps);
    return res;
}

} // namespace llmwb
