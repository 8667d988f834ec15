// Request: one sequence as the scheduler and the KV cache manager see it — its tokens (prompt
// followed by generated tokens), how many of them have K/V in the cache, its status and its
// timings. Plain token ids and sampling limits only: the sampler, the streaming detokenizer and
// the stop-string matcher of a request live in the OutputProcessor, so scheduler and block-pool
// tests build requests without a model or a tokenizer. Owned by the Engine.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "engine/runtime/sampler.h"
#include "engine/serving/speculative_tuner.h"

namespace llmwb {

using RequestId = int64_t;
using EngineClock = std::chrono::steady_clock;

// Milliseconds from a to b (the engine's figures are kept in ms).
inline double ms_between(EngineClock::time_point a, EngineClock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

enum class RequestStatus : uint8_t { Waiting, Running, Finished };
// Why a request ended, as OpenAI's and vLLM's finish_reason: "stop" (a stop token or string),
// "length" (max_tokens or the context), "abort" (aborted, cancelled or a backend failure).
// The engine reports those four. The app refines "length" into what the user sees: Context (the
// sequence filled the model's context) or KvPool (it filled the whole KV pool, which is smaller
// than the context), and records a backend failure as Error (with its message).
enum class FinishReason : uint8_t { None, Stop, Length, Aborted, Context, KvPool, Error };

// "", "stop", "length", "abort", "context", "kv_pool", "error"
const char* finish_reason_name(FinishReason r);

struct Request {
    Request(RequestId id_, std::vector<int32_t> prompt, const SamplingParams& p)
        : id(id_), tokens(std::move(prompt)),
          num_prompt_tokens(static_cast<int32_t>(tokens.size())), params(p) {}

    RequestId id;
    // Every token of the sequence: the prompt, then the generated tokens. After a preemption
    // the generated tokens are recomputed as part of the prompt (they are never re-sampled).
    std::vector<int32_t> tokens;
    int32_t num_prompt_tokens;
    int32_t num_computed = 0;      // tokens whose K/V are in the cache
    int32_t prefill_end = 0;       // tokens.size() at the last admission: below it = prefill
    int32_t num_cached_tokens = 0; // served by the prefix cache at the last admission
    RequestStatus status = RequestStatus::Waiting;
    FinishReason finish = FinishReason::None;
    int32_t num_preemptions = 0;
    SamplingParams params;
    // Speculative decoding: tokens proposed for the next step (not part of `tokens` until the
    // target accepts them).
    std::vector<int32_t> draft_tokens;
    SpecTrack spec; // its acceptance so far (num_speculative_tokens auto)
    // > 0: a scoring request (beam search): each time its next token's logits are computed it
    // reports their top score_top_k logprobs and appends nothing; its caller appends the chosen
    // token (Engine::append_token) or aborts it before the next step.
    int32_t score_top_k = 0;
    int32_t num_draft_verified = 0, num_draft_accepted = 0;

    // scheduled: the first time the scheduler admitted it (a preemption does not move it), so
    // queue time = arrival -> scheduled, prefill time = scheduled -> first token, decode time =
    // first token -> last token (vLLM's request phases).
    EngineClock::time_point arrival{}, scheduled{}, first_token{}, last_token{};
    double itl_sum_ms = 0, itl_last_ms = 0, itl_max_ms = 0;
    // Last token of its latest step output -> last token of the output before it (0 for the
    // first output): the gap between consecutive outputs (vllm:inter_token_latency_seconds),
    // one per step even when accepted drafts bring several tokens.
    double output_gap_ms = 0;

    int32_t num_tokens() const { return static_cast<int32_t>(tokens.size()); }
    int32_t num_output() const { return num_tokens() - num_prompt_tokens; }
    bool is_prefill() const { return num_computed < prefill_end; }
};

} // namespace llmwb
