// ChatTemplate: a model's Jinja chat template (tokenizer_config.json "chat_template" or GGUF
// tokenizer.chat_template), rendered byte-identically to Hugging Face's apply_chat_template
// (Python Jinja2 ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, HF's
// tojson / raise_exception / strftime_now). Templates are untrusted input: a construct the
// interpreter does not support is an Error naming it and its line, never a silent fallback.
#pragma once

#include <atomic>
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
    // Stops the render with "rendering was cancelled" once true (checked every few hundred
    // steps). Not owned; null = not cancellable.
    const std::atomic<bool>* cancel = nullptr;
    // Wall-time limit of one render (the other limits are jinja::RenderLimits' defaults).
    double max_seconds = 2.0;
};

class ChatTemplate {
  public:
    // Syntax errors name the line and the construct. Sources over kMaxSourceBytes are refused.
    static constexpr size_t kMaxSourceBytes = size_t(1) << 20;
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
    nlohmann::ordered_json tools;              // null = absent
    nlohmann::ordered_json extra;              // more variables (object), e.g. date_string
    std::optional<std::tm> now;                // fixed clock for strftime_now
    const std::atomic<bool>* cancel = nullptr; // as TemplateRenderOptions
    double max_seconds = 2.0;                  // as TemplateRenderOptions
};

// Builds the context like HF apply_chat_template (messages, add_generation_prompt, bos_token,
// eos_token, tools (None when absent), documents (None), enable_thinking if given, then
// `extra`) and renders.
Result<std::string> render_chat(const ChatTemplate& tpl, const nlohmann::ordered_json& messages,
                                const ChatRenderOptions& options);

} // namespace llmwb
