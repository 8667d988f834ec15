// A model opened from a GGUF file or a Hugging Face folder: config, tensor views, tokenizer
// data and chat template. Owns the memory mappings the views point into.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"
#include "engine/tokenizer/tokenizer_data.h"
#include "engine/util/result.h"

namespace llmwb {

class MappedFile; // engine/model/mapped_file.h

struct LoadedModel {
    std::string path;   // file or folder as given
    std::string format; // "gguf" or "safetensors"
    std::string name;   // general.name / folder name
    ModelConfig config;
    ModelWeights weights;
    TokenizerData tokenizer;
    std::optional<std::string> chat_template;
    int64_t weight_bytes = 0; // bytes of all tensors as stored
    int64_t parameter_count = 0;

    // Backing storage: mappings and the few small buffers created at load (e.g. norms
    // converted to F32). Views in `weights` point into these.
    std::vector<std::shared_ptr<MappedFile>> mappings;
    std::vector<std::vector<float>> owned_f32;
};

// Opens a .gguf file or a folder with config.json + safetensors + tokenizer files.
// Every defect of the input is an Error with a one-line message naming the file and the reason.
Result<std::unique_ptr<LoadedModel>> load_model(const std::string& path);

} // namespace llmwb
