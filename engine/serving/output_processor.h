// OutputProcessor: the output half of an engine step, per request — sample (or take the token
// the device picked) -> append it -> detokenize (streaming) -> stop tokens and stop strings ->
// finish reason. It owns each live request's sampler, streaming decoder, stop-string matcher and
// stop ids; the scheduler's Request holds only token ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/runtime/sampler.h"
#include "engine/runtime/stop_matcher.h"
#include "engine/serving/engine_snapshot.h"
#include "engine/serving/request.h"
#include "engine/tokenizer/streaming_decoder.h"

namespace llmwb {

class Tokenizer;

// What one request produced in a step.
struct RequestOutput {
    RequestId id = -1;
    std::vector<int32_t> new_token_ids; // the token sampled this step (empty: none)
    std::string text;                   // text delta now safe to show
    bool finished = false;
    FinishReason finish = FinishReason::None;
    std::string stop_matched;           // the stop string found, if any
    std::optional<int32_t> stop_token;  // the stop token (eos/eot/stop_token_ids), if any
    std::vector<SampledToken> logprobs; // per new token, when params.logprobs > 0
    SnapshotRequest metrics;            // timings and counts (final when finished)
};

class OutputProcessor {
  public:
    // `tokenizer` must outlive the processor. skip_special_tokens: leave special tokens out of
    // the streamed text (vLLM's default).
    OutputProcessor(const Tokenizer& tokenizer, bool skip_special_tokens);

    // Starts r's output state: its stop ids (the tokenizer's eos/eot unless ignore_eos, plus
    // params.stop_token_ids) and a sampler primed with r's tokens (repetition penalty). A forked
    // request starts afresh from its tokens at the fork point.
    void add(const Request& r);
    // A fork of live request `src`: as add(child), but the streaming decoder continues from
    // src's (text already shown is not repeated; a character split across the fork completes).
    void fork(RequestId src, const Request& child);
    void remove(RequestId id);
    size_t size() const { return states_.size(); }

    // Appends one token to r and fills `o` (new_token_ids, logprobs, text, finish): sampled
    // from `logits` (one row of `vocab` floats) or, with logits == nullptr, `device_id` (the
    // argmax the backend took). Finishes on a stop token, a stop string, params.max_tokens or
    // `context_limit` tokens; r.finish is set then. Updates r's token timings.
    void append_token(Request& r, const float* logits, int32_t vocab, int32_t device_id,
                      int64_t context_limit, RequestOutput& o);
    // The same for a position that verifies a speculative draft token: the token is the draft
    // when the target accepts it (greedy: it equals the argmax, or the device's id; sampling:
    // rejection sampling, Sampler::verify), else the target's own. Returns whether the draft
    // was accepted.
    bool append_verified(Request& r, const float* logits, int32_t vocab, int32_t device_id,
                         int32_t draft, int64_t context_limit, RequestOutput& o);

    // Appends `token`, chosen by the caller (beam search), as append_token does for a sampled
    // one: detokenizing, stops, max_tokens and the context.
    void append_chosen(Request& r, int32_t token, int64_t context_limit, RequestOutput& o);
    // The model's <think> and </think> token ids (-1: the tokenizer has no such single token).
    int32_t think_open_id() const { return think_open_; }
    int32_t think_close_id() const { return think_close_; }
    // Whether `token` ends r (its stop ids: eos/eot unless ignore_eos, plus stop_token_ids).
    bool is_stop_token(RequestId id, int32_t token) const;

  private:
    struct State;
    void start(State& st, const Request& r);
    // Appends the chosen token: timings, detokenizing, stops and the finish reason.
    void push_token(Request& r, State& st, SampledToken tok, int64_t context_limit,
                    RequestOutput& o);

    struct State {
        State(const Tokenizer& tokenizer, bool skip_special, const SamplingParams& params)
            : sampler(params), decoder(tokenizer, skip_special), matcher(params.stop) {}
        State(const StreamingDecoder& continued, const SamplingParams& params)
            : sampler(params), decoder(continued), matcher(params.stop) {}
        Sampler sampler;
        StreamingDecoder decoder;
        StopStringMatcher matcher;
        std::vector<int32_t> stop_ids;
        // thinking_budget: inside <think> ... </think>, and the tokens generated there so far.
        bool in_think = false;
        int32_t think_tokens = 0;
    };
    // The token a thinking budget forces next (</think>), or -1.
    int32_t forced_token(const Request& r, const State& st) const;

    const Tokenizer& tokenizer_;
    bool skip_special_tokens_;
    int32_t think_open_ = -1, think_close_ = -1;
    std::unordered_map<RequestId, State> states_;
};

} // namespace llmwb
