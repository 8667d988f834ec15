#include <filesystem>

#include "engine/model/model_loaders.h"

namespace llmwb {

Result<std::unique_ptr<LoadedModel>> load_model(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return load_hf_model(path);
    if (!std::filesystem::exists(path, ec))
        return make_error(path + ": no such file or folder");
    return load_gguf_model(path);
}

} // namespace llmwb
