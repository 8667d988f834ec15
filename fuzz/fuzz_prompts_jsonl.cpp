// libFuzzer target: the JSON Lines prompt files of `llmwb generate --prompts` and `llmwb bench
// --dataset` (parse_prompts_jsonl). Every input ends in lines (each valid or with its error)
// or a file error; a line that parses must hold a prompt or ids and valid sampling params.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "app/cli/prompts_jsonl.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto lines = llmwb::cli::parse_prompts_jsonl(text, llmwb::SamplingParams{}, "fuzz.jsonl");
    if (!lines)
        return 0;
    for (const auto& l : *lines) {
        if (!l.ok())
            continue;
        if (!l.prompt && !l.ids)
            __builtin_trap(); // a valid line without a prompt
        if (!l.params.validate())
            __builtin_trap(); // a valid line whose params do not validate
    }
    return 0;
}
