// The format-specific halves of load_model() (engine/model/loaded_model.h).
#pragma once

#include <memory>
#include <string>

#include "engine/model/gguf_file.h"
#include "engine/model/loaded_model.h"

namespace llmwb {

Result<std::unique_ptr<LoadedModel>> load_gguf_model(const std::string& path);
Result<std::unique_ptr<LoadedModel>> load_hf_model(const std::string& dir);

// TokenizerData from tokenizer.ggml.* metadata (gguf_tokenizer.cpp).
Result<TokenizerData> tokenizer_from_gguf(const GgufFile& f, const std::string& file);

} // namespace llmwb
