#include "engine/chat/chat_template_config.h"

namespace llmwb {

namespace {

Result<std::string> token_string(const nlohmann::ordered_json& config, const char* key) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null())
        return std::string();
    if (it->is_string())
        return it->get<std::string>();
    if (it->is_object()) {
        auto c = it->find("content");
        if (c != it->end() && c->is_string())
            return c->get<std::string>();
    }
    return make_error(std::string("tokenizer_config.json: ") + key +
                      " must be a string, an object with \"content\", or null");
}

} // namespace

Result<ChatTemplateConfig>
chat_template_from_tokenizer_config(const nlohmann::ordered_json& config, bool has_tools,
                                    const std::optional<std::string>& name) {
    if (!config.is_object())
        return make_error("tokenizer_config.json: not a JSON object");
    ChatTemplateConfig out;
    auto bos = token_string(config, "bos_token");
    if (!bos)
        return bos.error();
    auto eos = token_string(config, "eos_token");
    if (!eos)
        return eos.error();
    out.bos_token = std::move(*bos);
    out.eos_token = std::move(*eos);

    auto it = config.find("chat_template");
    if (it == config.end() || it->is_null())
        return make_error("tokenizer_config.json: no chat_template");
    if (it->is_string()) {
        if (name && *name != "default")
            return make_error("tokenizer_config.json: no chat template named '" + *name + "'");
        out.source = it->get<std::string>();
        return out;
    }
    if (!it->is_array())
        return make_error("tokenizer_config.json: chat_template must be a string or a list");
    auto find = [&](const std::string& n) -> const nlohmann::ordered_json* {
        for (const auto& e : *it)
            if (e.is_object() && e.contains("name") && e["name"] == n && e.contains("template") &&
                e["template"].is_string())
                return &e["template"];
        return nullptr;
    };
    const nlohmann::ordered_json* chosen = nullptr;
    if (name) {
        chosen = find(*name);
        if (!chosen)
            return make_error("tokenizer_config.json: no chat template named '" + *name + "'");
    } else if (has_tools && (chosen = find("tool_use"))) {
    } else if (!(chosen = find("default"))) {
        return make_error(
            "tokenizer_config.json: several chat templates and none is named 'default'");
    }
    out.source = chosen->get<std::string>();
    return out;
}

} // namespace llmwb
