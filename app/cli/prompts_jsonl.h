// Prompt files for `llmwb generate --prompts` and `llmwb bench --dataset`: JSON Lines, one
// object per line with "prompt" (text) or "ids" (token ids) and optional sampling fields under
// their SamplingParams names (max_tokens, temperature, top_p, top_k, min_p, seed, stop,
// stop_token_ids, ignore_eos, repetition_penalty, presence_penalty, frequency_penalty,
// logprobs), checked by the SamplingParams field table (the same messages as the CLI flags).
//
// What a line may be:
//   - blank (only spaces, tabs, CR): skipped, not a prompt;
//   - a UTF-8 byte-order mark before the first line and CR before a newline: ignored;
//   - anything else is a prompt. When it is malformed JSON, not an object, has an unknown key (a
//     misspelt field must not be silently ignored), a value of the wrong type or out of range
//     (integers must be integral: 16.0 is 16; 1e300 is out of range), it is still a PromptLine,
//     with `error` saying why; the caller reports it in the line's place.
// Errors of the whole file: it cannot be read, it holds no prompt, more than 1,000,000 prompts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/runtime/sampling_params.h"
#include "engine/util/result.h"

namespace llmwb::cli {

struct PromptLine {
    int line = 0; // 1-based line in the file
    std::optional<std::string> prompt;
    std::optional<std::vector<int32_t>> ids;
    SamplingParams params; // defaults from the caller, overridden by the line's fields
    std::string error;     // non-empty: the line is invalid, and why
    bool ok() const { return error.empty(); }
};

inline constexpr size_t kMaxPromptLines = 1000000;

// `defaults` gives every field a line leaves out. `name` (the file's path) is used in errors.
Result<std::vector<PromptLine>>
parse_prompts_jsonl(std::string_view text, const SamplingParams& defaults, const std::string& name);
Result<std::vector<PromptLine>> read_prompts_jsonl(const std::string& path,
                                                   const SamplingParams& defaults);

} // namespace llmwb::cli
