// generate(): one request from prompt to finish on the serving Engine — a loop over
// Engine::step() (as nano-vllm's LLM.generate()), delivering each token as it is sampled.
// `llmwb generate` and the tests use it; other requests in the same engine share its steps.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/sampler.h"
#include "engine/serving/engine.h"
#include "engine/util/result.h"

namespace llmwb {

// One generated token, delivered as soon as it is sampled.
struct TokenEvent {
    int32_t index = 0; // 0-based index among the generated tokens
    int32_t id = -1;
    std::string text;     // text now safe to show (may be empty: held back or a stop token)
    bool last = false;    // the final event; text then also holds everything released at the end
    float logprob = 0.0f; // when params.logprobs > 0
    std::vector<TokenLogprob> top; // when params.logprobs > 0
};

struct GenerationResult {
    std::vector<int32_t> ids; // generated ids, including a final stop token id
    std::string text;         // == concatenation of every event's text; excludes stop strings
                              // and the text of stop tokens
    FinishReason finish = FinishReason::None; // Aborted when cancelled
    bool cancelled = false;                   // on_token returned false
    std::string stop_matched;                 // the stop string found, if any
    std::optional<int32_t> stop_token;        // the stop token id (eos/eot/stop_token_ids)
    int32_t prompt_tokens = 0;
    double ttft_ms = 0;              // start -> first token sampled
    double prefill_tokens_per_s = 0; // prompt tokens / time to the first token
    double decode_tokens_per_s = 0;  // tokens after the first / time after the first
    double total_ms = 0;
    std::vector<SampledToken> logprobs; // per generated token, when params.logprobs > 0
};

// Errors: those of Engine::add_request (the one validation of a request), and backend
// failures (Engine::last_error()). on_token returning false cancels: the request is aborted,
// finish is Aborted and `cancelled` is set.
Result<GenerationResult> generate(Engine& engine, std::vector<int32_t> prompt_ids,
                                  const SamplingParams& params,
                                  const std::function<bool(const TokenEvent&)>& on_token = {});

} // namespace llmwb
