// The format-specific halves of load_model() (engine/model/loaded_model.h).
#pragma once

#include <memory>
#include <string>

#include "engine/model/gguf_file.h"
#include "engine/model/loaded_model.h"

namespace llmwb {

Result<std::unique_ptr<LoadedModel>> load_gguf_model(const std::string& path);
Result<std::unique_ptr<LoadedModel>> load_hf_model(const std::string& dir);

// The hyper-parameters alone, as the loaders read them, without binding tensors or reading the
// tokenizer (model discovery and the fit calculator read headers only). GGUF: vocab_size from
// token_embd.weight's rows when the tensor is there. Hugging Face: `config_json` is the
// config.json file. Errors as the loaders give them.
Result<ModelConfig> gguf_model_config(const GgufFile& f, const std::string& file);
Result<ModelConfig> hf_model_config(const std::string& config_json);

// TokenizerData from tokenizer.ggml.* metadata (gguf_tokenizer.cpp).
Result<TokenizerData> tokenizer_from_gguf(const GgufFile& f, const std::string& file);

} // namespace llmwb
