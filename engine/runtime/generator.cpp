#include "engine/runtime/generator.h"

#include <algorithm>
#include <chrono>
#include <unordered_set>

#include "engine/runtime/cpu_executor.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/stop_matcher.h"
#include "engine/tokenizer/streaming_decoder.h"
#include "engine/tokenizer/tokenizer.h"

namespace llmwb {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

Result<GenerationResult> generate(Transformer& model, KvCacheStorage& kv,
                                  const Tokenizer& tokenizer, std::vector<int32_t> prompt_ids,
                                  const SamplingParams& params,
                                  const std::function<bool(const TokenEvent&)>& on_token,
                                  const GeneratorOptions& options) {
    CpuExecutor exec(model, kv);
    return generate(exec, tokenizer, std::move(prompt_ids), params, on_token, options);
}

Result<GenerationResult> generate(ModelExecutor& exec,
                                  const Tokenizer& tokenizer, std::vector<int32_t> prompt_ids,
                                  const SamplingParams& params,
                                  const std::function<bool(const TokenEvent&)>& on_token,
                                  const GeneratorOptions& options) {
    const auto t0 = Clock::now();
    if (Status st = params.validate(); !st) return st.error();
    if (prompt_ids.empty()) return make_error("generate: the prompt has no tokens");
    const int32_t vocab = exec.vocab_size();
    for (int32_t id : prompt_ids)
        if (id < 0 || id >= vocab)
            return make_error("generate: prompt token id " + std::to_string(id) +
                              " is outside the vocabulary (size " + std::to_string(vocab) + ")");
    int64_t ctx_limit = static_cast<int64_t>(exec.num_blocks()) * exec.block_size();
    if (exec.config().max_position > 0)
        ctx_limit = std::min<int64_t>(ctx_limit, exec.config().max_position);
    const auto n_prompt = static_cast<int64_t>(prompt_ids.size());
    if (n_prompt >= ctx_limit)
        return make_error("generate: prompt of " + std::to_string(n_prompt) +
                          " tokens leaves no room in a context of " + std::to_string(ctx_limit) +
                          " tokens");

    // Plain greedy on a backend that can: the argmax is taken on the device, only the id comes
    // back (the sampler would pick the same token: lowest id on ties).
    const bool device_greedy = exec.device_greedy() && params.temperature == 0.0f &&
                               params.repetition_penalty == 1.0f &&
                               params.presence_penalty == 0.0f &&
                               params.frequency_penalty == 0.0f && params.logprobs == 0;
    int32_t greedy_id = -1;

    std::unordered_set<int32_t> stop_ids(params.stop_token_ids.begin(),
                                         params.stop_token_ids.end());
    if (!params.ignore_eos)
        for (int32_t id : tokenizer.stop_ids()) stop_ids.insert(id);

    Sampler sampler(params);
    sampler.set_prompt(prompt_ids);
    SequenceBlocks blocks(exec.block_size(), exec.num_blocks());
    StreamingDecoder decoder(tokenizer, options.skip_special_tokens);
    StopStringMatcher matcher(params.stop);
    ForwardBatch batch;
    std::vector<float> logits(static_cast<size_t>(vocab));  // [1][vocab]

    GenerationResult res;
    res.prompt_tokens = static_cast<int32_t>(n_prompt);

    // Prefill in chunks; logits only for the prompt's last token.
    const int32_t chunk = std::max(1, options.prefill_chunk);
    for (int64_t pos = 0; pos < n_prompt; pos += chunk) {
        const int64_t len = std::min<int64_t>(chunk, n_prompt - pos);
        blocks.reserve(pos + len);  // fits: n_prompt < ctx_limit <= slots
        batch.clear();
        batch.add_sequence(std::span<const int32_t>(prompt_ids).subspan(pos, len),
                           static_cast<int32_t>(pos), blocks.table(), exec.block_size(),
                           pos + len == n_prompt ? ForwardBatch::Logits::Last
                                                 : ForwardBatch::Logits::None);
        if (Status st = device_greedy ? exec.forward_greedy(batch, &greedy_id)
                                      : exec.forward(batch, logits.data());
            !st)
            return st.error();
    }

    Clock::time_point t_first{};
    for (;;) {
        SampledToken tok;
        if (device_greedy)
            tok.id = greedy_id;
        else
            tok = sampler.sample(logits);
        sampler.accept(tok.id);
        const auto index = static_cast<int32_t>(res.ids.size());
        res.ids.push_back(tok.id);
        if (index == 0) {
            t_first = Clock::now();
            res.ttft_ms = ms_since(t0);
        }

        TokenEvent ev;
        ev.index = index;
        ev.id = tok.id;
        ev.logprob = tok.logprob;
        ev.top = tok.top;
        if (params.logprobs > 0) res.logprobs.push_back(std::move(tok));

        const int64_t n_ctx = n_prompt + static_cast<int64_t>(res.ids.size());
        if (stop_ids.count(ev.id)) {
            res.finish_reason = "stop";
            res.stop_token = ev.id;
            ev.text = matcher.push(decoder.flush()).text;  // a stop string can still end here
            if (!matcher.stopped()) ev.text += matcher.flush();
        } else {
            StopStringMatcher::Step step = matcher.push(decoder.push(ev.id));
            ev.text = std::move(step.text);
            if (step.stopped) {
                res.finish_reason = "stop";
                res.stop_matched = step.matched;
            } else if (static_cast<int64_t>(res.ids.size()) >= params.max_tokens ||
                       n_ctx >= ctx_limit) {
                res.finish_reason = "length";
                StopStringMatcher::Step end = matcher.push(decoder.flush());
                ev.text += end.text;
                if (end.stopped) {
                    res.finish_reason = "stop";
                    res.stop_matched = end.matched;
                } else {
                    ev.text += matcher.flush();
                }
            }
        }
        ev.last = !res.finish_reason.empty();
        if (on_token && !on_token(ev)) {
            if (res.finish_reason.empty()) res.finish_reason = "cancelled";
            break;
        }
        if (ev.last) break;

        // Decode step: the new token at position n_ctx - 1.
        blocks.reserve(n_ctx);
        batch.clear();
        batch.add_sequence(std::span<const int32_t>(&res.ids.back(), 1),
                           static_cast<int32_t>(n_ctx - 1), blocks.table(), exec.block_size(),
                           ForwardBatch::Logits::Last);
        if (Status st = device_greedy ? exec.forward_greedy(batch, &greedy_id)
                                      : exec.forward(batch, logits.data());
            !st)
            return st.error();
    }

    res.text = std::string(matcher.emitted());
    res.total_ms = ms_since(t0);
    const double prefill_ms = res.ttft_ms;
    if (prefill_ms > 0) res.prefill_tokens_per_s = n_prompt / (prefill_ms / 1000.0);
    const double decode_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_first).count();
    if (res.ids.size() > 1 && decode_ms > 0)
        res.decode_tokens_per_s = static_cast<double>(res.ids.size() - 1) / (decode_ms / 1000.0);
    return res;
}

}  // namespace llmwb
