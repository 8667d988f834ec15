// Reading Hugging Face tokenizer files (tokenizer.json + tokenizer_config.json) into
// TokenizerData. Used by the safetensors loader and by the model writer.
#pragma once

#include <optional>
#include <string>

#include "engine/tokenizer/tokenizer_data.h"
#include "engine/util/result.h"

namespace llmwb {

struct TokenizerFiles {
    TokenizerData data;
    std::optional<std::string> chat_template; // tokenizer_config.json "chat_template"
};

// tokenizer_config_path may be empty (then defaults apply and there is no chat template).
Result<TokenizerFiles> read_tokenizer_files(const std::string& tokenizer_json_path,
                                            const std::string& tokenizer_config_path);

} // namespace llmwb
