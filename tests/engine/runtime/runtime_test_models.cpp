#include "runtime_test_models.h"

#include <filesystem>
#include <fstream>

#include "engine/model/demo_tokenizer.h"

namespace llmwb::test {

ModelWriterSpec spec_for(Shape shape, ModelFileFormat format, WeightType type) {
    ModelWriterSpec s;
    s.format = format;
    s.weight_type = type;
    s.seed = 1234;
    s.hidden_size = 64;
    s.intermediate_size = 128;
    s.num_layers = 2;
    s.num_heads = 4;
    s.num_kv_heads = 2;
    s.max_position = 4096;
    s.rope_theta = 10000.0f;
    s.rms_norm_eps = 1e-5f;
    switch (shape) {
    case Shape::Llama:
        s.arch = Architecture::Llama;
        break;
    case Shape::Llama3Rope:
        s.arch = Architecture::Llama;
        s.rope_theta = 500000.0f;
        s.rope_scaling.kind = RopeScaling::Kind::Llama3;
        s.rope_scaling.factor = 8.0f;
        s.rope_scaling.low_freq_factor = 1.0f;
        s.rope_scaling.high_freq_factor = 4.0f;
        s.rope_scaling.original_max_position = 64;
        break;
    case Shape::Qwen2:
        s.arch = Architecture::Qwen2;
        s.num_heads = 8;
        s.tie_word_embeddings = true;
        s.rope_theta = 1000000.0f;
        s.rms_norm_eps = 1e-6f;
        break;
    case Shape::Qwen3:
        s.arch = Architecture::Qwen3;
        s.head_dim = 32;
        s.num_layers = 3;
        s.rope_theta = 1000000.0f;
        s.rms_norm_eps = 1e-6f;
        break;
    case Shape::Quant:
        s.arch = Architecture::Qwen2;
        s.hidden_size = 256;
        s.intermediate_size = 512;
        s.num_heads = 4;
        s.num_kv_heads = 2;
        break;
    }
    return s;
}

namespace {

// The demo tokenizer as Hugging Face files under dir, written once: make_demo_tokenizer()
// learns its merges on every call, which dominates writing a small model (under ASan).
std::string demo_tokenizer_dir(const std::string& dir) {
    const std::string out = dir + "/demo-tokenizer";
    if (std::filesystem::exists(out + "/tokenizer_config.json"))
        return out;
    std::filesystem::create_directories(out);
    const TokenizerFiles t = make_demo_tokenizer();
    std::ofstream(out + "/tokenizer.json") << tokenizer_json_text(t.data);
    std::ofstream(out + "/tokenizer_config.json")
        << tokenizer_config_json_text(t.data, t.chat_template);
    return out;
}

} // namespace

std::unique_ptr<LoadedModel> write_and_load(const ModelWriterSpec& spec_in, const std::string& dir,
                                            const std::string& name, std::string* error) {
    ModelWriterSpec spec = spec_in;
    if (spec.tokenizer_dir.empty())
        spec.tokenizer_dir = demo_tokenizer_dir(dir);
    const std::string path =
        dir + "/" + name + (spec.format == ModelFileFormat::Gguf ? ".gguf" : "");
    if (Status st = write_model(spec, path); !st) {
        *error = "write_model: " + st.message();
        return nullptr;
    }
    auto loaded = load_model(path);
    if (!loaded) {
        *error = "load_model: " + loaded.message();
        return nullptr;
    }
    return std::move(loaded.value());
}

} // namespace llmwb::test
