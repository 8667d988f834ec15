// Writes seed inputs for the fuzzers with the model writer: small models of every
// architecture and weight type (GGUF) and the safetensors file of each float type.
#include <cstdio>
#include <filesystem>
#include <string>

#include "engine/model/model_writer.h"

int main(int argc, char** argv) {
    using namespace llmwb;
    namespace fs = std::filesystem;
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_fuzz_corpus DIR\n");
        return 2;
    }
    const fs::path dir = argv[1];
    fs::create_directories(dir / "gguf");
    fs::create_directories(dir / "safetensors");
    int n = 0;
    for (Architecture arch : {Architecture::Llama, Architecture::Qwen2, Architecture::Qwen3}) {
        for (WeightType t : {WeightType::F32, WeightType::F16, WeightType::BF16, WeightType::Q8_0,
                             WeightType::Q4_0, WeightType::Q4_K, WeightType::Q6_K}) {
            ModelWriterSpec s;
            s.arch = arch;
            s.weight_type = t;
            s.hidden_size = 32;
            s.intermediate_size = 64;
            s.num_layers = 1;
            s.num_heads = 2;
            s.num_kv_heads = 1;
            s.vocab_size = 0;
            s.tie_word_embeddings = (n % 2) == 1;
            if (t == WeightType::Q4_K || t == WeightType::Q6_K)
                s.hidden_size = 256;
            const std::string name =
                std::string(architecture_name(arch)) + "-" + weight_type_name(t);
            Status st = write_model(s, (dir / "gguf" / (name + ".gguf")).string());
            if (!st) {
                std::fprintf(stderr, "%s\n", st.message().c_str());
                return 1;
            }
            if (t == WeightType::F32 || t == WeightType::F16 || t == WeightType::BF16) {
                s.format = ModelFileFormat::Safetensors;
                const fs::path tmp = dir / ("tmp-" + name);
                st = write_model(s, tmp.string());
                if (!st) {
                    std::fprintf(stderr, "%s\n", st.message().c_str());
                    return 1;
                }
                fs::rename(tmp / "model.safetensors",
                           dir / "safetensors" / (name + ".safetensors"));
                fs::remove_all(tmp);
            }
            ++n;
        }
    }
    std::printf("wrote %d models into %s\n", n, dir.c_str());
    return 0;
}
