#include "engine/model/model_shapes.h"

namespace llmwb {
namespace {

struct ShapePreset {
    const char* name;
    Architecture arch;
    int vocab, hidden, inter, layers, heads, kv_heads, head_dim, max_pos;
    float theta;
    bool tied;
    bool llama3_rope;
};

// Shapes as published in each family's config.json.
constexpr ShapePreset kPresets[] = {
    {"tiny", Architecture::Qwen2, 0, 64, 128, 2, 4, 2, 16, 4096, 10000.0f, false, false},
    {"llama2-tiny", Architecture::Llama, 0, 64, 160, 2, 4, 2, 16, 4096, 10000.0f, false, false},
    {"qwen2.5-0.5b", Architecture::Qwen2, 151936, 896, 4864, 24, 14, 2, 64, 32768, 1000000.0f, true,
     false},
    {"qwen2.5-7b", Architecture::Qwen2, 152064, 3584, 18944, 28, 28, 4, 128, 32768, 1000000.0f,
     false, false},
    {"qwen3-0.6b", Architecture::Qwen3, 151936, 1024, 3072, 28, 16, 8, 128, 40960, 1000000.0f, true,
     false},
    {"llama3.2-1b", Architecture::Llama, 128256, 2048, 8192, 16, 32, 8, 64, 131072, 500000.0f, true,
     true},
    {"qwen3-30b-a3b", Architecture::Qwen3Moe, 151936, 2048, 6144, 48, 32, 4, 128, 40960, 1000000.0f,
     false, false},
    // The same with 4 of its 48 layers kept (issue 18's comparable shape for figures).
    {"qwen3-30b-a3b-4l", Architecture::Qwen3Moe, 151936, 2048, 6144, 4, 32, 4, 128, 40960,
     1000000.0f, false, false},
};

// The experts of the mixture-of-experts shapes above: count, used per token, intermediate size.
struct MoePreset {
    const char* name;
    int experts, used, inter;
};
constexpr MoePreset kMoePresets[] = {{"qwen3-30b-a3b", 128, 8, 768},
                                     {"qwen3-30b-a3b-4l", 128, 8, 768}};

} // namespace

Result<ModelWriterSpec> writer_spec_for_shape(const std::string& shape) {
    for (const auto& p : kPresets) {
        if (shape != p.name)
            continue;
        ModelWriterSpec s;
        s.arch = p.arch;
        s.vocab_size = p.vocab;
        s.hidden_size = p.hidden;
        s.intermediate_size = p.inter;
        s.num_layers = p.layers;
        s.num_heads = p.heads;
        s.num_kv_heads = p.kv_heads;
        s.head_dim = p.head_dim;
        s.max_position = p.max_pos;
        s.rope_theta = p.theta;
        s.tie_word_embeddings = p.tied;
        if (p.llama3_rope) {
            s.rope_scaling.kind = RopeScaling::Kind::Llama3;
            s.rope_scaling.factor = 32.0f;
            s.rope_scaling.low_freq_factor = 1.0f;
            s.rope_scaling.high_freq_factor = 4.0f;
            s.rope_scaling.original_max_position = 8192;
        }
        for (const auto& m : kMoePresets)
            if (shape == m.name) {
                s.num_experts = m.experts;
                s.num_experts_used = m.used;
                s.expert_intermediate_size = m.inter;
                s.expert_norm_topk = true;
            }
        s.name = std::string("llmwb random ") + p.name + " shape";
        return s;
    }
    std::string known;
    for (const auto& n : known_model_shapes())
        known += (known.empty() ? "" : ", ") + n;
    return make_error("unknown model shape '" + shape + "' (known: " + known + ")");
}

std::vector<std::string> known_model_shapes() {
    std::vector<std::string> out;
    for (const auto& p : kPresets)
        out.push_back(p.name);
    return out;
}

} // namespace llmwb
