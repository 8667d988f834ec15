#include "engine/model/demo_model.h"

#include <unistd.h>

#include <filesystem>

#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"

namespace llmwb {

Result<std::string> ensure_demo_model(const std::string& dir) {
    namespace fs = std::filesystem;
    const std::string path = (fs::path(dir) / kDemoModelFileName).string();
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) {
        auto m = load_model(path);
        if (m)
            return path; // reuse; a broken file is rewritten below
    }
    fs::create_directories(dir, ec);
    if (ec)
        return make_error(dir + ": cannot create folder: " + ec.message());
    ModelWriterSpec spec;
    spec.arch = Architecture::Qwen2;
    spec.format = ModelFileFormat::Gguf;
    spec.weight_type = WeightType::Q8_0;
    spec.seed = 20240501;
    spec.name = kDemoModelName;
    spec.hidden_size = 256;
    spec.intermediate_size = 768;
    spec.num_layers = 4;
    spec.num_heads = 8;
    spec.num_kv_heads = 2;
    spec.max_position = 4096;
    spec.rope_theta = 1000000.0f;
    spec.tie_word_embeddings = true;
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    Status s = write_model(spec, tmp);
    if (!s) {
        fs::remove(tmp, ec);
        return s.error();
    }
    fs::rename(tmp, path, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return make_error(path + ": cannot rename the written file: " + ec.message());
    }
    return path;
}

} // namespace llmwb
