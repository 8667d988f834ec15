// Single-request generation for the CLI: prefill the prompt in chunks, then decode token by
// token with the sampler, streaming text through StreamingDecoder and StopStringMatcher.
// (The engine's scheduler runs many requests through the same Transformer::forward.)
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/sampler.h"
#include "engine/runtime/model_executor.h"
#include "engine/runtime/transformer.h"
#include "engine/util/result.h"

namespace llmwb {

class Tokenizer;

// One generated token, delivered as soon as it is sampled.
struct TokenEvent {
    int32_t index = 0;  // 0-based index among the generated tokens
    int32_t id = -1;
    std::string text;   // text now safe to show (may be empty: held back or a stop token)
    bool last = false;  // the final event; text then also holds everything released at the end
    float logprob = 0.0f;            // when params.logprobs > 0
    std::vector<TokenLogprob> top;  // when params.logprobs > 0
};

struct GenerationResult {
    std::vector<int32_t> ids;  // generated ids, including a final stop token id
    std::string text;          // == concatenation of every event's text; excludes stop strings
                               // and the text of stop tokens
    std::string finish_reason;        // "stop" | "length" | "cancelled"
    std::string stop_matched;         // the stop string found, if any
    std::optional<int32_t> stop_token;  // the stop token id (eos/eot/stop_token_ids), if any
    int32_t prompt_tokens = 0;
    double ttft_ms = 0;                 // start -> first token sampled
    double prefill_tokens_per_s = 0;    // prompt tokens / prefill time
    double decode_tokens_per_s = 0;     // tokens after the first / time after the first
    double total_ms = 0;
    std::vector<SampledToken> logprobs;  // per generated token, when params.logprobs > 0
};

struct GeneratorOptions {
    int32_t prefill_chunk = 512;  // prompt tokens per forward
    bool skip_special_tokens = true;  // leave special tokens out of the text (vLLM default)
};

// Errors: invalid params, empty prompt, ids outside the vocabulary, a prompt that does not fit
// the context (min(max_position, KV slots)). Generation uses KV blocks 0.. of `kv` in order.
// on_token returning false cancels (finish_reason "cancelled").
Result<GenerationResult> generate(Transformer& model, KvCacheStorage& kv,
                                  const Tokenizer& tokenizer, std::vector<int32_t> prompt_ids,
                                  const SamplingParams& params,
                                  const std::function<bool(const TokenEvent&)>& on_token,
                                  const GeneratorOptions& options = {});
// The same on any backend: uses KV blocks 0.. of the executor's pool (sized by the caller with
// resize_kv). Errors also: backend failures.
Result<GenerationResult> generate(ModelExecutor& exec, const Tokenizer& tokenizer,
                                  std::vector<int32_t> prompt_ids, const SamplingParams& params,
                                  const std::function<bool(const TokenEvent&)>& on_token,
                                  const GeneratorOptions& options = {});

}  // namespace llmwb
