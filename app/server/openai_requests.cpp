#include "app/server/openai_requests.h"

#include <climits>
#include <limits>

#include "engine/runtime/sampling_params_json.h"
#include "engine/util/json_depth.h"

namespace llmwb {

namespace {

using json = nlohmann::ordered_json;
using T = SamplingFieldType;

std::string shown(const json& v) {
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.size() > 80)
        s = s.substr(0, 77) + "...";
    return s;
}

const char* type_name(const json& v) {
    return v.type_name();
}

Status set_field(SamplingParams& p, const SamplingField& f, const json& v) {
    return set_sampling_field_json(p, f, v);
}

// An integer field outside the table (n, top_logprobs, logprobs of completions).
std::optional<ApiError> get_int(const json& v, const std::string& name, int64_t lo, int64_t hi,
                                int32_t& out) {
    const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX)) {
        const int64_t x = v.get<int64_t>();
        if (x >= lo && x <= hi) {
            out = static_cast<int32_t>(x);
            return std::nullopt;
        }
    }
    return bad_param(name, name + " must be an integer in " + range + ", got " + shown(v));
}

std::optional<ApiError> get_bool(const json& v, const std::string& name, bool& out) {
    if (!v.is_boolean())
        return bad_param(name, name + " must be true or false, got " + shown(v));
    out = v.get<bool>();
    return std::nullopt;
}

// Fields both routes read. `skip` names the keys the caller reads itself.
std::optional<ApiError> parse_common(const json& j, GenerationRequest& r,
                                     std::initializer_list<std::string_view> skip) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        const json& v = *it;
        if (v.is_null())
            continue;
        bool skipped = false;
        for (std::string_view s : skip)
            skipped |= key == s;
        if (skipped)
            continue;
        if (key == "model") {
            if (!v.is_string())
                return bad_param("model", "model must be a string, got " + shown(v));
            r.model = v.get<std::string>();
        } else if (key == "n") {
            if (auto e = get_int(v, "n", 1, kMaxChoices, r.n))
                return e;
        } else if (key == "best_of") {
            if (auto e = get_int(v, "best_of", 1, kMaxChoices, r.best_of))
                return e;
        } else if (key == "stream") {
            if (auto e = get_bool(v, "stream", r.stream))
                return e;
        } else if (key == "stream_options") {
            if (!v.is_object())
                return bad_param("stream_options", "stream_options must be an object");
            if (v.contains("include_usage") && !v["include_usage"].is_null())
                if (auto e = get_bool(v["include_usage"], "stream_options.include_usage",
                                      r.include_usage))
                    return e;
        } else if (key == "response_format") {
            if (!(v.is_object() && v.contains("type") && v["type"] == "text"))
                return bad_param("response_format",
                                 "response_format is not supported yet (no constrained decoding)");
        } else if (key == "logit_bias") {
            if (!(v.is_object() && v.empty()))
                return bad_param("logit_bias", "logit_bias is not supported yet");
        } else if (const SamplingField* f = find_sampling_field(key); f && key != "logprobs") {
            if (Status st = set_field(r.params, *f, v); !st)
                return bad_param(key, st.message());
        }
    }
    if (!r.stream && j.contains("stream_options") && !j["stream_options"].is_null())
        return bad_param("stream_options", "stream_options is only allowed with stream: true");
    if (r.best_of > 0) { // the keys come in any order: checked once all are read
        if (r.best_of < r.n)
            return bad_param("best_of", "best_of must be greater than or equal to n, got best_of " +
                                            std::to_string(r.best_of) + " and n " +
                                            std::to_string(r.n));
        if (r.best_of > r.n && r.stream)
            return bad_param("best_of", "best_of cannot be used with stream: true (the best are "
                                        "known only at the end)");
        if (r.best_of == r.n)
            r.best_of = 0; // every sample is returned: plain n
    }
    return std::nullopt;
}

} // namespace

nlohmann::json error_json(const ApiError& e) {
    nlohmann::json err;
    err["message"] = e.message;
    err["type"] = e.type;
    err["param"] = e.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.param);
    err["code"] = e.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.code);
    return nlohmann::json{{"error", err}};
}

ApiError bad_param(std::string param, std::string message) {
    ApiError e;
    e.status = 400;
    e.param = std::move(param);
    e.message = std::move(message);
    return e;
}

std::variant<nlohmann::ordered_json, ApiError> parse_json_body(std::string_view body) {
    if (Status st = check_json_depth(body, kMaxRequestJsonDepth, "request body"); !st)
        return bad_param("", st.message());
    json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded())
        return bad_param("", "the request body is not valid JSON");
    if (!j.is_object())
        return bad_param("", std::string("the request body must be a JSON object, got ") +
                                 type_name(j));
    return j;
}

std::optional<ApiError> parse_prompt(const json& v, CompletionRequest& out) {
    auto ids_of = [](const json& a) -> std::optional<std::vector<int32_t>> {
        std::vector<int32_t> ids;
        for (const json& e : a) {
            if (!e.is_number_integer() ||
                (e.is_number_unsigned() && e.get<uint64_t>() > INT32_MAX) || e.get<int64_t>() < 0 ||
                e.get<int64_t>() > INT32_MAX)
                return std::nullopt;
            ids.push_back(static_cast<int32_t>(e.get<int64_t>()));
        }
        return ids;
    };
    const json* p = &v;
    if (v.is_array() && v.size() == 1 && (v[0].is_string() || v[0].is_array()))
        p = &v[0]; // a batch of one prompt
    if (p->is_string()) {
        out.prompt_text = p->get<std::string>();
        if (out.prompt_text->empty())
            return bad_param("prompt", "prompt must not be empty");
        return std::nullopt;
    }
    if (p->is_array() && !p->empty() && (*p)[0].is_number()) {
        auto ids = ids_of(*p);
        if (!ids)
            return bad_param("prompt", "prompt token ids must be integers in [0, 2147483647]");
        out.prompt_ids = std::move(*ids);
        return std::nullopt;
    }
    if (p->is_array() && p->size() > 1)
        return bad_param("prompt", "a batch of several prompts is not supported; send one "
                                   "prompt per request (or use n)");
    return bad_param("prompt",
                     "prompt must be a non-empty string or array of token ids, got " + shown(v));
}

std::variant<nlohmann::ordered_json, ApiError> parse_messages(const json& v) {
    if (!v.is_array() || v.empty())
        return bad_param("messages", "messages must be a non-empty array of message objects");
    json out = json::array();
    for (size_t i = 0; i < v.size(); ++i) {
        const json& m = v[i];
        const std::string where = "messages[" + std::to_string(i) + "]";
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
            return bad_param(where, where + " must be an object with a string \"role\"");
        json msg = m;
        if (m.contains("content")) {
            const json& c = m["content"];
            if (c.is_array()) { // parts: only text parts, joined
                std::string text;
                for (const json& part : c) {
                    if (!part.is_object() || part.value("type", json()) != "text" ||
                        !part.contains("text") || !part["text"].is_string())
                        return bad_param(where + ".content",
                                         "only text content parts are supported");
                    if (!text.empty())
                        text += "\n";
                    text += part["text"].get<std::string>();
                }
                msg["content"] = text;
            } else if (!c.is_string() && !c.is_null()) {
                return bad_param(where + ".content",
                                 where + ".content must be a string, an array of text parts or "
                                         "null");
            }
        }
        out.push_back(std::move(msg));
    }
    return out;
}

std::variant<CompletionRequest, ApiError> parse_completion_request(const json& j) {
    CompletionRequest r;
    r.params.max_tokens = 16; // OpenAI's and vLLM's default for completions (a cap)
    if (auto e = parse_common(j, r, {"prompt", "logprobs", "echo", "suffix"}))
        return *e;
    if (!j.contains("prompt") || j["prompt"].is_null())
        return bad_param("prompt", "prompt is required");
    if (auto e = parse_prompt(j["prompt"], r))
        return *e;
    if (j.contains("logprobs") && !j["logprobs"].is_null()) {
        int32_t lp = 0;
        if (auto e = get_int(j["logprobs"], "logprobs", 0, 20, lp))
            return *e;
        r.logprobs = lp;
        r.params.logprobs = std::max(lp, 1);
    }
    if (j.contains("echo") && !j["echo"].is_null() && j["echo"] != false)
        return bad_param("echo", "echo is not supported yet");
    if (j.contains("suffix") && !j["suffix"].is_null())
        return bad_param("suffix", "suffix is not supported");
    if (Status st = r.params.validate(); !st)
        return bad_param("", st.message());
    return r;
}

std::variant<ChatRequest, ApiError> parse_chat_request(const json& j) {
    ChatRequest r;
    r.params.max_tokens = INT_MAX; // absent: up to the context (vLLM)
    if (auto e =
            parse_common(j, r,
                         {"messages", "logprobs", "top_logprobs", "max_completion_tokens", "tools",
                          "tool_choice", "chat_template_kwargs", "add_generation_prompt"}))
        return *e;
    if (r.best_of > 0)
        return bad_param("best_of", "best_of other than n is only supported by /v1/completions");
    if (!j.contains("messages"))
        return bad_param("messages", "messages is required");
    auto msgs = parse_messages(j["messages"]);
    if (auto* e = std::get_if<ApiError>(&msgs))
        return *e;
    r.messages = std::move(std::get<json>(msgs));
    if (j.contains("max_completion_tokens") && !j["max_completion_tokens"].is_null())
        if (Status st =
                set_field(r.params, *find_sampling_field("max_tokens"), j["max_completion_tokens"]);
            !st)
            return bad_param("max_completion_tokens",
                             "max_completion_tokens" + st.message().substr(10));
    if (j.contains("logprobs") && !j["logprobs"].is_null())
        if (auto e = get_bool(j["logprobs"], "logprobs", r.logprobs))
            return *e;
    if (j.contains("top_logprobs") && !j["top_logprobs"].is_null()) {
        if (auto e = get_int(j["top_logprobs"], "top_logprobs", 0, 20, r.top_logprobs))
            return *e;
        if (!r.logprobs && r.top_logprobs > 0)
            return bad_param("top_logprobs", "top_logprobs needs logprobs: true");
    }
    if (r.logprobs)
        r.params.logprobs = std::max(r.top_logprobs, 1);
    if (j.contains("add_generation_prompt") && !j["add_generation_prompt"].is_null())
        if (auto e = get_bool(j["add_generation_prompt"], "add_generation_prompt",
                              r.add_generation_prompt))
            return *e;
    if (j.contains("chat_template_kwargs") && !j["chat_template_kwargs"].is_null()) {
        const json& k = j["chat_template_kwargs"];
        if (!k.is_object())
            return bad_param("chat_template_kwargs", "chat_template_kwargs must be an object");
        if (k.contains("enable_thinking") && !k["enable_thinking"].is_null()) {
            bool b = false;
            if (auto e = get_bool(k["enable_thinking"], "chat_template_kwargs.enable_thinking", b))
                return *e;
            r.enable_thinking = b;
        }
    }
    std::string tool_choice = "auto";
    if (j.contains("tool_choice") && !j["tool_choice"].is_null()) {
        const json& tc = j["tool_choice"];
        if (!tc.is_string() || (tc != "auto" && tc != "none"))
            return bad_param("tool_choice", "tool_choice must be \"auto\" or \"none\" (forced "
                                            "tool calls need constrained decoding, not supported "
                                            "yet)");
        tool_choice = tc.get<std::string>();
    }
    if (j.contains("tools") && !j["tools"].is_null()) {
        const json& tools = j["tools"];
        if (!tools.is_array())
            return bad_param("tools", "tools must be an array");
        for (size_t i = 0; i < tools.size(); ++i) {
            const json& t = tools[i];
            if (!t.is_object() || t.value("type", json()) != "function" ||
                !t.contains("function") || !t["function"].is_object() ||
                !t["function"].contains("name") || !t["function"]["name"].is_string())
                return bad_param("tools[" + std::to_string(i) + "]",
                                 "a tool must be {\"type\": \"function\", \"function\": {\"name\": "
                                 "..., \"parameters\": {...}}}");
        }
        if (tool_choice != "none" && !tools.empty())
            r.tools = tools;
    }
    if (Status st = r.params.validate(); !st)
        return bad_param("", st.message());
    return r;
}

} // namespace llmwb
