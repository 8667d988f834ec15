// ChatTemplate: a model's Jinja chat template (tokenizer_config.json "chat_template" or GGUF
// tokenizer.chat_template), rendered byte-identically to Hugging Face's apply_chat_template
// (Python Jinja2 ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, HF's
// tojson / raise_exception / strftime_now). Templates are untrusted input: a construct the
// interpreter does not support is an Error naming it and its line, never a silent fallback.
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/util/result.h"

namespace llmwb {

namespace jinja {
struct Template;
}

struct TemplateRenderOptions {
    // Fixed clock for strftime_now (reproducible tests); nullopt = current local time.
    std::optional<std::tm> now;
};

class ChatTemplate {
  public:
    // Syntax errors name the line and the construct.
    static Result<ChatTemplate> parse(std::string source);

    // `context` must be a JSON object; its keys become the template's variables.
    Result<std::string> render(const nlohmann::ordered_json& context) const;
    Result<std::string> render(const nlohmann::ordered_json& context,
                               const TemplateRenderOptions& options) const;

    const std::string& source() const { return source_; }

  private:
    std::string source_;
    std::shared_ptr<const jinja::Template> tpl_;
};

struct ChatRenderOptions {
    bool add_generation_prompt = false;
    std::optional<bool> enable_thinking; // passed only when set (templates test `is defined`)
    std::string bos_token, eos_token;
    nlohmann::ordered_json tools; // null = absent
    nlohmann::ordered_json extra; // more variables (object), e.g. date_string
    std::optional<std::tm> now;   // fixed clock for strftime_now
};

// Builds the context like HF apply_chat_template (messages, add_generation_prompt, bos_token,
// eos_token, tools (None when absent), documents (None), enable_thinking if given, then
// `extra`) and renders.
Result<std::string> render_chat(const ChatTemplate& tpl, const nlohmann::ordered_json& messages,
                                const ChatRenderOptions& options);

} // namespace llmwb
