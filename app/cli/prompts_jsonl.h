// Prompt files for `llmwb generate --prompts` and `llmwb bench --dataset`: JSON Lines, one
// object per line with "prompt" (text) or "ids" (token ids) and optional sampling fields
// (max_tokens, temperature, top_p, top_k, min_p, seed, stop, stop_token_ids, ignore_eos,
// repetition_penalty, presence_penalty, frequency_penalty). Blank lines are skipped; unknown
// keys, wrong types and out-of-range values are errors naming the file and line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/sampler.h"
#include "engine/util/result.h"

namespace llmwb::cli {

struct PromptLine {
    int line = 0; // 1-based line in the file
    std::optional<std::string> prompt;
    std::optional<std::vector<int32_t>> ids;
    SamplingParams params; // defaults from the caller, overridden by the line's fields
    bool has_max_tokens = false;
};

// `defaults` gives every field the line leaves out.
Result<std::vector<PromptLine>> read_prompts_jsonl(const std::string& path,
                                                   const SamplingParams& defaults);

} // namespace llmwb::cli
