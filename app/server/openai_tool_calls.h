// Tool calls in a chat model's output, as OpenAI's `tool_calls`: Qwen's
// <tool_call>{"name": ..., "arguments": {...}}</tool_call> blocks (any number, text before them
// is the message content) and Llama 3.1's JSON {"name": ..., "parameters": {...}} as the whole
// output (optionally after <|python_tag|>). Model output is untrusted: malformed or deep JSON is
// not a tool call (the text stays content).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace llmwb {

struct ParsedToolCalls {
    std::string content;               // text outside the calls (trimmed; may be empty)
    nlohmann::ordered_json tool_calls; // [{"id", "type": "function", "function": {"name",
                                       //   "arguments": "<JSON text>"}}]
};

// nullopt: no tool call in `text`. Call ids are call_<prefix><n> (n = 0, 1, ...).
std::optional<ParsedToolCalls> parse_tool_calls(std::string_view text, const std::string& prefix);

} // namespace llmwb
