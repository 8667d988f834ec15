// Greedy runs compared "up to a near tie": with speculation a token's logits come from the
// k + 1-row kernels instead of the 1-row ones, which round differently, so two greedy runs are
// compared token by token only while the reference's top-1 / top-2 logprob margin is at least
// `margin` (the first near tie, or the first difference, ends a request's comparison).
#pragma once

#include <map>
#include <vector>

#include "engine/serving/engine.h"
#include "support/mini_test.h"

namespace llmwb::test {

struct GreedyOut {
    std::vector<int32_t> ids;
    std::vector<float> margins; // top-1 minus top-2 logprob per token (runs with margins)
};

// Every prompt greedy to max_tokens (EOS ignored), consistency checked after each step.
inline std::map<RequestId, GreedyOut> run_greedy(Engine& e,
                                                 const std::vector<std::vector<int32_t>>& prompts,
                                                 int max_tokens, bool margins) {
    for (const auto& p : prompts) {
        SamplingParams sp;
        sp.temperature = 0;
        sp.max_tokens = max_tokens;
        sp.ignore_eos = true;
        sp.logprobs = margins ? 2 : 0;
        MT_REQUIRE(e.add_request(p, sp).ok());
    }
    std::map<RequestId, GreedyOut> out;
    StepOutputs so;
    for (int i = 0; e.has_unfinished() && i < 20000; ++i) {
        e.step(so);
        for (const RequestOutput& o : so.outputs) {
            GreedyOut& r = out[o.id];
            r.ids.insert(r.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
            for (const SampledToken& t : o.logprobs)
                r.margins.push_back(t.top.size() >= 2 ? t.top[0].logprob - t.top[1].logprob : 1.0f);
        }
        const Status st = e.check_consistency();
        MT_REQUIRE_MSG(st.ok(), "%s", st.ok() ? "" : st.message().c_str());
    }
    MT_REQUIRE(!e.has_unfinished());
    return out;
}

// Checks got == want token by token up to each request's first near tie; returns the number of
// tokens compared.
inline int compare_up_to_near_tie(const std::map<RequestId, GreedyOut>& got,
                                  const std::map<RequestId, GreedyOut>& want, float margin) {
    int compared = 0;
    for (const auto& [id, w] : want) {
        const GreedyOut& g = got.at(id);
        MT_REQUIRE_COMPARE(g.ids.size(), w.ids.size());
        for (size_t i = 0; i < w.ids.size() && w.margins[i] >= margin; ++i) {
            MT_CHECK_MSG(g.ids[i] == w.ids[i], "request %lld token %zu: %d vs %d (margin %.2e)",
                         static_cast<long long>(id), i, g.ids[i], w.ids[i], w.margins[i]);
            ++compared;
            if (g.ids[i] != w.ids[i])
                break; // reported once; what follows continues from another token
        }
    }
    return compared;
}

} // namespace llmwb::test
