// The OpenAI response bodies: completions and chat completions, whole or as stream chunks,
// usage, and logprobs in OpenAI's two shapes (completions: tokens / token_logprobs /
// top_logprobs / text_offset; chat: content[] of {token, logprob, bytes, top_logprobs}).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/runtime/sampler.h"
#include "engine/serving/request.h"

namespace llmwb {

class Tokenizer;

// "stop", "length", "abort" (vLLM's names); null while not finished.
nlohmann::ordered_json finish_reason_json(bool finished, FinishReason finish);
nlohmann::ordered_json usage_json(int64_t prompt_tokens, int64_t completion_tokens);

// Completions: {"tokens", "token_logprobs", "top_logprobs", "text_offset"}; `offset` is the text
// offset of the first token and advances past these tokens. top_n: entries kept per token.
nlohmann::ordered_json completion_logprobs(const Tokenizer& tok,
                                           std::span<const SampledToken> tokens, int32_t top_n,
                                           int64_t& offset);
// Chat: the "content" array.
nlohmann::ordered_json chat_logprobs_content(const Tokenizer& tok,
                                             std::span<const SampledToken> tokens, int32_t top_n);

// "cmpl-" / "chatcmpl-" + a unique hex id.
std::string make_response_id(const char* prefix);

} // namespace llmwb
