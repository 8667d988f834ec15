// libFuzzer target: the Jinja chat-template interpreter (lexer, parser, evaluator) on arbitrary
// template text, rendered over a fixed conversation. Every input must end in an output or an
// Error, never a crash, hang or unbounded allocation (the interpreter has its own limits).
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/chat/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto tpl = llmwb::ChatTemplate::parse(std::string(reinterpret_cast<const char*>(data), size));
    if (!tpl)
        return 0;
    static const nlohmann::ordered_json messages = nlohmann::ordered_json::parse(R"([
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Hi {{ there }} 你好"},
        {"role": "assistant", "content": "<think>hm</think>Hello", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {"a": 1, "b": [true, null]}}}]},
        {"role": "tool", "content": "{\"ok\": 1}"}
    ])");
    llmwb::ChatRenderOptions opts;
    opts.add_generation_prompt = true;
    opts.enable_thinking = false;
    opts.bos_token = "<s>";
    opts.eos_token = "</s>";
    std::tm fixed{};
    fixed.tm_year = 124;
    fixed.tm_mday = 1;
    opts.now = fixed;
    auto out = llmwb::render_chat(*tpl, messages, opts);
    (void)out;
    return 0;
}
