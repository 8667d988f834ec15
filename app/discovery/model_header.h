// A model file's facts read from its header alone (GGUF metadata and tensor infos, or a Hugging
// Face folder's config.json and safetensors headers), without binding weights or reading the
// tokenizer: what model discovery lists and the fit calculator needs. The files are mapped, so
// only the header pages are read. A file the loaders would refuse gives `error` (naming the file
// and the reason) and whatever was read before the defect; never an exception or an abort.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/model_config.h"

namespace llmwb {

struct HeaderTypeCount {
    std::string type; // dtype name: "Q4_K", "F16", "BF16", ...
    int tensors = 0;
    int64_t bytes = 0;
};

struct ModelHeader {
    std::string path;
    std::string format;       // "gguf" or "safetensors"
    std::string architecture; // as the file names it ("llama", "qwen2", ...; "" when unread)
    int64_t file_bytes = 0;   // the files' sizes on disk (a folder: its weight files)
    int64_t weight_bytes = 0; // the tensors' bytes
    int64_t parameters = 0;   // elements of all tensors
    int64_t context_length = 0;
    std::vector<HeaderTypeCount> types; // most bytes first
    std::optional<ModelConfig> config;  // when the engine could load this architecture
    std::string error;                  // empty when the header is good

    bool ok() const { return error.empty(); }
    // The storage type holding most bytes ("" when there are no tensors).
    std::string main_type() const { return types.empty() ? std::string() : types.front().type; }
    // "Q4_K 180, F32 65" — types by bytes with tensor counts.
    std::string types_text() const;
};

// A .gguf file.
ModelHeader read_gguf_header(const std::string& path);
// A Hugging Face folder (config.json + model.safetensors or its index's shards).
ModelHeader read_hf_header(const std::string& dir);
// Either, by what `path` is (a directory: Hugging Face; otherwise GGUF).
ModelHeader read_model_header(const std::string& path);

// Largest config.json read (a real one is a few KiB).
inline constexpr int64_t kMaxConfigJsonBytes = 4 << 20;

} // namespace llmwb
