// The OpenAI request bodies of /v1/completions and /v1/chat/completions (and the tokenizer
// routes), parsed and validated into plain structs. Bodies are hostile input: depth-checked
// before parsing, every field type- and range-checked; the sampling fields go through the
// SamplingParams field table (the same ranges and messages as the CLI). Unknown fields are
// ignored as vLLM does; null counts as absent. A bad field is an ApiError (400) naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/runtime/sampling_params.h"

namespace llmwb {

// An OpenAI error object: {"error": {"message", "type", "param", "code"}} with its HTTP status.
struct ApiError {
    int status = 400;
    std::string message;
    std::string param; // empty: null
    std::string type = "invalid_request_error";
    std::string code; // empty: null
};
nlohmann::json error_json(const ApiError& e);
ApiError bad_param(std::string param, std::string message);

inline constexpr int32_t kMaxChoices = 128;     // n
inline constexpr int kMaxRequestJsonDepth = 64; // tool schemas nest a few dozen levels at most

// What both generation routes share.
struct GenerationRequest {
    std::string model; // empty: not given (the served model)
    int32_t n = 1;
    // Completions' best_of: best_of sequences are sampled and the n with the highest cumulative
    // logprob returned (OpenAI's semantics: best_of >= n, not with stream). 0: not given (n).
    int32_t best_of = 0;
    bool stream = false;
    bool include_usage = false; // stream_options.include_usage
    SamplingParams params;
};

struct CompletionRequest : GenerationRequest {
    std::optional<std::string> prompt_text;
    std::optional<std::vector<int32_t>> prompt_ids;
    std::optional<int32_t> logprobs; // the top-N per token (0: the chosen token's only)
};

struct ChatRequest : GenerationRequest {
    nlohmann::ordered_json messages; // an array of objects with a string "role"
    nlohmann::ordered_json tools;    // null: none (or tool_choice "none")
    bool logprobs = false;
    int32_t top_logprobs = 0;
    bool add_generation_prompt = true;
    std::optional<bool> enable_thinking; // chat_template_kwargs.enable_thinking
};

// Parses a JSON body: malformed, too deep or not an object -> 400.
std::variant<nlohmann::ordered_json, ApiError> parse_json_body(std::string_view body);

// Completions default to 16 tokens (OpenAI's and vLLM's), chat to the room left in the context.
std::variant<CompletionRequest, ApiError> parse_completion_request(const nlohmann::ordered_json& j);
std::variant<ChatRequest, ApiError> parse_chat_request(const nlohmann::ordered_json& j);

// "prompt" of /tokenize and /v1/completions: a string, token ids, or a one-element array of
// either. Errors name `param`.
std::optional<ApiError> parse_prompt(const nlohmann::ordered_json& v, CompletionRequest& out);
// "messages": an array of message objects, each with a string "role"; content a string, null,
// or an array of text parts (joined).
std::variant<nlohmann::ordered_json, ApiError> parse_messages(const nlohmann::ordered_json& v);

} // namespace llmwb
