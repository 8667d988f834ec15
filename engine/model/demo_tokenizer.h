// The project's own small byte-level BPE tokenizer: 256 byte tokens (GPT-2 byte-to-unicode
// mapping), merges learned deterministically from a built-in English text, the "qwen2"
// pre-tokenizer, special tokens <|endoftext|>, <|im_start|>, <|im_end|> (eos = <|im_end|>) and
// a ChatML chat template. Used by the demo model and by the model writer's default tokenizer.
#pragma once

#include <string>

#include "engine/tokenizer/tokenizer_files.h"

namespace llmwb {

TokenizerFiles make_demo_tokenizer();

// The Hugging Face files for a TokenizerData of kind ByteLevelBpe (used to write the demo
// tokenizer next to safetensors): tokenizer.json and tokenizer_config.json text.
std::string tokenizer_json_text(const TokenizerData& data);
std::string tokenizer_config_json_text(const TokenizerData& data,
                                       const std::optional<std::string>& chat_template);

} // namespace llmwb
