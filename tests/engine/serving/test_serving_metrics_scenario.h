// One engine run that exercises every metric ServingMetrics writes, shared by the C++ test and
// the program that writes an exposition for the Node parser check: a real Engine on the serving
// tests' model with a small pool (preemptions), prompt lookup (speculative drafts), greedy
// requests that end at max_tokens, one that ends at a stop token, one aborted mid-decode and one
// aborted while it waits. What happened is counted here from the engine's outputs, independently
// of ServingMetrics, so that a test can compare the two.
#pragma once

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/serving/engine.h"
#include "engine/serving/generation.h"
#include "engine/serving/serving_metrics.h"
#include "serving_test_engine.h"

namespace llmwb::test {

struct MetricsScenario {
    std::string exposition;     // after the run (and an idle step)
    std::string mid_exposition; // after the first step that left requests waiting
    int32_t mid_running = -1, mid_waiting = -1;
    double mid_kv_usage = -1;

    int32_t requests = 0;
    int64_t prompt_tokens_all = 0;          // every request's prompt
    int64_t prompt_tokens_first_output = 0; // requests that produced a token
    int64_t max_tokens_sum = 0;
    int64_t generated = 0;
    int64_t first_outputs = 0, later_outputs = 0; // outputs carrying tokens
    int64_t preemptions = 0;
    int64_t steps_run = 0, step_tokens = 0; // steps that scheduled something, their tokens
    std::map<std::string, int> finished;    // by vLLM reason, aborts included
    int aborted_waiting = 0, aborted_decoding = 0;
    int64_t multi_token_outputs = 0; // outputs with accepted drafts (more than one token)

    int64_t prefix_queries = 0, prefix_hits = 0;
    SpeculativeStats speculative;
    int32_t num_used_blocks = -1;
};

inline SamplingParams scenario_greedy(int max_tokens) {
    SamplingParams p;
    p.temperature = 0;
    p.max_tokens = max_tokens;
    p.ignore_eos = true;
    return p;
}

// Prompts that repeat themselves (so that prompt lookup finds matches).
inline std::vector<std::vector<int32_t>> scenario_prompts(int32_t vocab) {
    std::mt19937 rng(11);
    std::vector<std::vector<int32_t>> out;
    for (int n : {6, 9, 13, 4, 11, 7, 5, 8}) {
        std::vector<int32_t> unit;
        for (int i = 0; i < n; ++i)
            unit.push_back(static_cast<int32_t>(rng() % static_cast<uint32_t>(vocab)));
        std::vector<int32_t> p;
        for (int r = 0; r < 4; ++r)
            p.insert(p.end(), unit.begin(), unit.end());
        out.push_back(p);
    }
    return out;
}

// Runs the scenario with `metrics` observing. Fails the current test (MT_REQUIRE) when the
// engine refuses a request or does not finish.
inline MetricsScenario run_metrics_scenario(ServingMetrics& metrics) {
    MetricsScenario s;
    const auto prompts = scenario_prompts(shared_serving_model().transformer->vocab_size());

    // The stop request's stop token: the 4th token of its greedy continuation alone.
    std::vector<int32_t> stop_ids;
    {
        EngineConfig c;
        c.block_size = 8;
        c.memory.num_blocks = 64;
        auto alone = serving_engine(c);
        auto ref = generate(*alone, prompts[5], scenario_greedy(12));
        MT_REQUIRE_MSG(ref.ok(), "%s", ref.ok() ? "" : ref.message().c_str());
        MT_REQUIRE(ref->ids.size() == 12);
        stop_ids.push_back(ref->ids[3]);
    }

    EngineConfig c;
    c.block_size = 8;
    c.max_num_seqs = 4;
    c.max_num_batched_tokens = 24;
    c.memory.num_blocks = 20; // 160 slots: four growing requests do not fit together
    c.speculative.method = SpeculativeMethod::Ngram;
    c.speculative.num_speculative_tokens = 3;
    c.speculative.prompt_lookup_min = 1;
    c.speculative.prompt_lookup_max = 4;
    auto e = serving_engine(c);

    std::map<RequestId, int32_t> prompt_len;
    std::map<RequestId, int32_t> outputs_of;
    auto add = [&](const std::vector<int32_t>& prompt, const SamplingParams& p) {
        auto id = e->add_request(prompt, p);
        MT_REQUIRE_MSG(id.ok(), "%s", id.ok() ? "" : id.message().c_str());
        prompt_len[*id] = static_cast<int32_t>(prompt.size());
        ++s.requests;
        s.prompt_tokens_all += static_cast<int64_t>(prompt.size());
        s.max_tokens_sum += p.max_tokens;
        return *id;
    };
    for (int i = 0; i < 5; ++i)
        add(prompts[i], scenario_greedy(20 + i)); // max_tokens -> "length"
    SamplingParams stop = scenario_greedy(12);
    stop.stop_token_ids = stop_ids;
    add(prompts[5], stop); // a stop token -> "stop"
    const RequestId abort_decoding = add(prompts[6], scenario_greedy(30));
    const RequestId abort_waiting = add(prompts[7], scenario_greedy(30));

    StepOutputs out;
    auto count = [&](const StepOutputs& o) {
        s.preemptions += static_cast<int64_t>(o.preempted.size());
        if (o.step_index >= 0) {
            ++s.steps_run;
            s.step_tokens += o.num_prefill_tokens + o.num_decode_tokens;
        }
        for (const RequestOutput& r : o.outputs) {
            const auto n = static_cast<int64_t>(r.new_token_ids.size());
            if (n > 0) {
                s.generated += n;
                if (outputs_of[r.id]++ == 0) {
                    ++s.first_outputs;
                    s.prompt_tokens_first_output += prompt_len[r.id];
                } else {
                    ++s.later_outputs;
                }
                s.multi_token_outputs += n > 1;
            }
            if (r.finished)
                ++s.finished[finish_reason_name(r.finish)];
        }
    };
    for (int64_t step = 0; e->has_unfinished() && step < 5000; ++step) {
        e->step(out);
        metrics.observe_step(out, *e);
        count(out);
        if (s.mid_running < 0 && !e->scheduler().waiting().empty() &&
            !e->scheduler().running().empty()) {
            s.mid_exposition = metrics.render_prometheus();
            s.mid_running = static_cast<int32_t>(e->scheduler().running().size());
            s.mid_waiting = static_cast<int32_t>(e->scheduler().waiting().size());
            s.mid_kv_usage = static_cast<double>(e->kv_manager().pool().num_used()) /
                             e->kv_manager().pool().num_blocks();
        }
        if (step == 0) { // the last request is still waiting (max_num_seqs 4)
            MT_REQUIRE(e->abort(abort_waiting));
            metrics.observe_aborted(abort_waiting);
            ++s.finished["abort"];
            ++s.aborted_waiting;
        }
        if (outputs_of[abort_decoding] >= 2 && s.aborted_decoding == 0) {
            MT_REQUIRE(e->abort(abort_decoding));
            metrics.observe_aborted(abort_decoding);
            ++s.finished["abort"];
            ++s.aborted_decoding;
        }
    }
    MT_REQUIRE(!e->has_unfinished());
    e->step(out); // idle: nothing scheduled; the gauges read the empty engine
    MT_REQUIRE(out.step_index < 0);
    metrics.observe_step(out, *e);
    count(out);
    s.exposition = metrics.render_prometheus();
    s.prefix_queries = e->kv_manager().prefix_queries();
    s.prefix_hits = e->kv_manager().prefix_hits();
    s.speculative = e->speculative_stats();
    s.num_used_blocks = e->kv_manager().pool().num_used();
    return s;
}

} // namespace llmwb::test
