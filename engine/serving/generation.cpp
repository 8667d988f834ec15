#include "engine/serving/generation.h"

namespace llmwb {

Result<GenerationResult> generate(Engine& engine, std::vector<int32_t> prompt_ids,
                                  const SamplingParams& params,
                                  const std::function<bool(const TokenEvent&)>& on_token) {
    const auto t0 = EngineClock::now();
    GenerationResult res;
    res.prompt_tokens = static_cast<int32_t>(prompt_ids.size());
    auto added = engine.add_request(std::move(prompt_ids), params);
    if (!added)
        return added.error();
    const RequestId id = *added;
    EngineClock::time_point t_first{};
    StepOutputs out;
    while (res.finish == FinishReason::None) {
        engine.step(out);
        if (out.step_index < 0 && !engine.has_unfinished())
            return make_error("generate: the engine lost request " + std::to_string(id));
        for (RequestOutput& o : out.outputs) {
            if (o.id != id)
                continue;
            if (o.new_token_ids.empty()) { // finished without a token: a backend failure
                res.finish = o.finish;
                if (!engine.last_error().empty())
                    return make_error(engine.last_error());
                break;
            }
            // One event per token (a step that verified speculative drafts yields several);
            // the step's text arrives with its last token.
            const size_t n = o.new_token_ids.size();
            for (size_t t = 0; t < n && !res.cancelled; ++t) {
                TokenEvent ev;
                ev.index = static_cast<int32_t>(res.ids.size());
                ev.id = o.new_token_ids[t];
                const bool last_of_step = t + 1 == n;
                if (last_of_step)
                    ev.text = std::move(o.text);
                ev.last = o.finished && last_of_step;
                res.ids.push_back(ev.id);
                if (ev.index == 0) {
                    t_first = out.time;
                    res.ttft_ms = ms_between(t0, t_first);
                }
                if (t < o.logprobs.size()) {
                    ev.logprob = o.logprobs[t].logprob;
                    ev.top = o.logprobs[t].top;
                    res.logprobs.push_back(std::move(o.logprobs[t]));
                }
                res.text += ev.text;
                if (ev.last) {
                    res.finish = o.finish;
                    res.stop_matched = o.stop_matched;
                    res.stop_token = o.stop_token;
                }
                if (on_token && !on_token(ev) && !ev.last) {
                    engine.abort(id);
                    res.finish = FinishReason::Aborted;
                    res.cancelled = true;
                }
            }
        }
    }
    const auto t_end = EngineClock::now();
    res.total_ms = ms_between(t0, t_end);
    if (res.ttft_ms > 0)
        res.prefill_tokens_per_s = res.prompt_tokens / (res.ttft_ms / 1000.0);
    const double decode_ms = ms_between(t_first, t_end);
    if (res.ids.size() > 1 && decode_ms > 0)
        res.decode_tokens_per_s = static_cast<double>(res.ids.size() - 1) / (decode_ms / 1000.0);
    return res;
}

} // namespace llmwb
