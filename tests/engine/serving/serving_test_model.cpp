#include "serving_test_model.h"

#include "engine/model/model_writer.h"

namespace llmwb::test {

std::unique_ptr<ServingTestModel> make_serving_test_model(const std::string& dir,
                                                          std::string* error) {
    ModelWriterSpec s;
    s.arch = Architecture::Qwen2;
    s.format = ModelFileFormat::Gguf;
    s.weight_type = WeightType::F32;
    s.seed = 4321;
    s.hidden_size = 64;
    s.intermediate_size = 128;
    s.num_layers = 2;
    s.num_heads = 4;
    s.num_kv_heads = 2;
    s.max_position = 4096;
    s.rope_theta = 1000000.0f;
    const std::string path = dir + "/serving.gguf";
    if (Status st = write_model(s, path); !st) {
        *error = "write_model: " + st.message();
        return nullptr;
    }
    auto loaded = load_model(path);
    if (!loaded) {
        *error = "load_model: " + loaded.message();
        return nullptr;
    }
    auto m = std::make_unique<ServingTestModel>();
    m->model = std::move(loaded.value());
    auto tok = Tokenizer::create(m->model->tokenizer);
    if (!tok) {
        *error = "tokenizer: " + tok.message();
        return nullptr;
    }
    m->tokenizer = std::move(tok.value());
    m->pool = std::make_unique<kernels::ThreadPool>(2);
    m->transformer = std::make_unique<CpuTransformer>(*m->model, *m->pool);
    return m;
}

} // namespace llmwb::test
