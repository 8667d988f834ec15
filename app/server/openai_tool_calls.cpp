#include "app/server/openai_tool_calls.h"

#include "engine/util/json_depth.h"

namespace llmwb {

namespace {

using json = nlohmann::ordered_json;

std::string_view trim(std::string_view s) {
    const char* ws = " \t\r\n";
    const size_t b = s.find_first_not_of(ws);
    if (b == std::string_view::npos)
        return {};
    return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// {"name": string, <args_key>: object or string} -> one OpenAI tool call; nullopt otherwise.
std::optional<json> call_of(std::string_view text, const std::string& id) {
    if (!check_json_depth(text, 64, "tool call").ok())
        return std::nullopt;
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("name") || !j["name"].is_string())
        return std::nullopt;
    const json* args = nullptr;
    for (const char* key : {"arguments", "parameters"})
        if (j.contains(key)) {
            args = &j[key];
            break;
        }
    std::string arguments = "{}";
    if (args) {
        if (args->is_string())
            arguments = args->get<std::string>();
        else if (args->is_object())
            arguments = args->dump(-1, ' ', false, json::error_handler_t::replace);
        else
            return std::nullopt;
    }
    return json{{"id", id},
                {"type", "function"},
                {"function", {{"name", j["name"]}, {"arguments", arguments}}}};
}

} // namespace

std::optional<ParsedToolCalls> parse_tool_calls(std::string_view text, const std::string& prefix) {
    ParsedToolCalls out;
    out.tool_calls = json::array();
    auto next_id = [&] { return "call_" + prefix + std::to_string(out.tool_calls.size()); };
    const std::string_view open = "<tool_call>", close = "</tool_call>";
    size_t pos = text.find(open);
    if (pos != std::string_view::npos) { // Qwen (Hermes style)
        out.content = std::string(trim(text.substr(0, pos)));
        while (pos != std::string_view::npos) {
            const size_t body = pos + open.size();
            size_t end = text.find(close, body);
            const std::string_view inner = trim(
                text.substr(body, end == std::string_view::npos ? text.size() - body : end - body));
            auto call = call_of(inner, next_id());
            if (!call)
                return std::nullopt;
            out.tool_calls.push_back(std::move(*call));
            if (end == std::string_view::npos)
                break;
            pos = text.find(open, end + close.size());
        }
        return out;
    }
    std::string_view t = trim(text); // Llama 3.1: the whole output is one call
    const std::string_view tag = "<|python_tag|>";
    if (t.substr(0, tag.size()) == tag)
        t = trim(t.substr(tag.size()));
    if (t.size() < 2 || t.front() != '{' || t.back() != '}')
        return std::nullopt;
    auto call = call_of(t, next_id());
    if (!call)
        return std::nullopt;
    out.tool_calls.push_back(std::move(*call));
    return out;
}

} // namespace llmwb
