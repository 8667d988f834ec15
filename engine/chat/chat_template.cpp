#include "engine/chat/chat_template.h"

#include "engine/chat/evaluator.h"
#include "engine/chat/parser.h"

#include <algorithm>
#include <vector>

namespace llmwb {

Result<ChatTemplate> ChatTemplate::parse(std::string source) {
    // Real templates are a few KiB; the token list of a huge one would cost tens of times its size.
    if (source.size() > kMaxSourceBytes)
        return make_error("chat template: the template is " + std::to_string(source.size()) +
                          " bytes, over the limit of " + std::to_string(kMaxSourceBytes >> 20) +
                          " MiB");
    auto tpl = jinja::parse_template(source);
    if (!tpl)
        return tpl.error();
    ChatTemplate t;
    t.source_ = std::move(source);
    t.tpl_ = std::make_shared<const jinja::Template>(std::move(*tpl));
    return t;
}

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& context) const {
    return render(context, TemplateRenderOptions{});
}

namespace {

// Nesting depth of a JSON value, computed without recursion (the context is external input and
// the conversion to interpreter values recurses).
size_t json_depth(const nlohmann::ordered_json& root) {
    size_t max_depth = 0;
    std::vector<std::pair<const nlohmann::ordered_json*, size_t>> stack{{&root, 1}};
    while (!stack.empty()) {
        auto [j, d] = stack.back();
        stack.pop_back();
        max_depth = std::max(max_depth, d);
        if (j->is_structured())
            for (const auto& child : *j)
                stack.emplace_back(&child, d + 1);
    }
    return max_depth;
}

constexpr size_t kMaxContextDepth = 256;

} // namespace

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& context,
                                         const TemplateRenderOptions& options) const {
    if (!tpl_)
        return make_error("chat template: not parsed");
    if (!context.is_object())
        return make_error("chat template: the render context must be a JSON object");
    if (json_depth(context) > kMaxContextDepth)
        return make_error("chat template: the render context is nested too deeply");
    jinja::GlobalsOptions g;
    g.now = options.now;
    jinja::RenderLimits limits;
    limits.cancel = options.cancel;
    limits.max_seconds = options.max_seconds;
    return jinja::render_template(*tpl_, jinja::from_json(context), g, limits);
}

Result<std::string> render_chat(const ChatTemplate& tpl, const nlohmann::ordered_json& messages,
                                const ChatRenderOptions& options) {
    if (!messages.is_array())
        return make_error("render_chat: messages must be a JSON array");
    if (!options.extra.is_null() && !options.extra.is_object())
        return make_error("render_chat: extra variables must be a JSON object");
    // Checked before the copies below (nlohmann's copy recurses once per level).
    for (const auto* j : {&messages, &options.tools, &options.extra})
        if (json_depth(*j) > kMaxContextDepth - 1)
            return make_error("chat template: the render context is nested too deeply");
    nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
    ctx["messages"] = messages;
    ctx["add_generation_prompt"] = options.add_generation_prompt;
    ctx["bos_token"] = options.bos_token;
    ctx["eos_token"] = options.eos_token;
    // Hugging Face's apply_chat_template always passes tools and documents (None when absent),
    // so `tools is defined` is true and `tools is none` tells whether any were given.
    ctx["tools"] = options.tools;
    ctx["documents"] = nullptr;
    if (options.enable_thinking)
        ctx["enable_thinking"] = *options.enable_thinking;
    if (options.extra.is_object())
        for (auto it = options.extra.begin(); it != options.extra.end(); ++it)
            ctx[it.key()] = it.value();
    TemplateRenderOptions ro;
    ro.now = options.now;
    ro.cancel = options.cancel;
    ro.max_seconds = options.max_seconds;
    return tpl.render(ctx, ro);
}

} // namespace llmwb
