// Picks the chat template and the special-token strings out of a Hugging Face
// tokenizer_config.json, the way transformers does: "chat_template" is a string or a list of
// {"name", "template"} entries (a named one, else "tool_use" when tools are given, else
// "default"); bos_token / eos_token are strings, AddedToken objects ({"content": ...}) or null.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/util/result.h"

namespace llmwb {

struct ChatTemplateConfig {
    std::string source;               // the Jinja template text
    std::string bos_token, eos_token; // "" when the config has none
};

Result<ChatTemplateConfig>
chat_template_from_tokenizer_config(const nlohmann::ordered_json& config, bool has_tools = false,
                                    const std::optional<std::string>& name = {});

} // namespace llmwb
