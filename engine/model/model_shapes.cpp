#include "engine/model/model_shapes.h"

#include <algorithm>

namespace llmwb {
namespace {

struct ShapePreset {
    const char* name;
    Architecture arch;
    int vocab, hidden, inter, layers, heads, kv_heads, head_dim, max_pos;
    float theta;
    bool tied;
    int rope = 0;       // 0: none, 1: llama3 scaling, 2: LongRoPE (phi3; original context 4096)
    int rotary_dim = 0; // partial rotary (phi-4-mini: 0.75 of 128)
    int window = 0;     // sliding window (mistral v0.1)
};

// Shapes as published in each family's config.json.
constexpr ShapePreset kPresets[] = {
    {"tiny", Architecture::Qwen2, 0, 64, 128, 2, 4, 2, 16, 4096, 10000.0f, false, false},
    {"llama2-tiny", Architecture::Llama, 0, 64, 160, 2, 4, 2, 16, 4096, 10000.0f, false, false},
    {"qwen2.5-0.5b", Architecture::Qwen2, 151936, 896, 4864, 24, 14, 2, 64, 32768, 1000000.0f, true,
     false},
    {"qwen2.5-1.5b", Architecture::Qwen2, 151936, 1536, 8960, 28, 12, 2, 128, 32768, 1000000.0f,
     true, false},
    {"qwen2.5-7b", Architecture::Qwen2, 152064, 3584, 18944, 28, 28, 4, 128, 32768, 1000000.0f,
     false, false},
    {"qwen3-0.6b", Architecture::Qwen3, 151936, 1024, 3072, 28, 16, 8, 128, 40960, 1000000.0f, true,
     false},
    {"llama3.2-1b", Architecture::Llama, 128256, 2048, 8192, 16, 32, 8, 64, 131072, 500000.0f, true,
     true},
    {"gemma-2-2b", Architecture::Gemma2, 256000, 2304, 9216, 26, 8, 4, 256, 8192, 10000.0f, true,
     false},
    {"gemma-3-1b", Architecture::Gemma3, 262144, 1152, 6912, 26, 4, 1, 256, 32768, 1000000.0f, true,
     false},
    {"gemma-3-4b", Architecture::Gemma3, 262208, 2560, 10240, 34, 8, 4, 256, 131072, 1000000.0f,
     true, false},
    {"phi-3.5-mini", Architecture::Phi3, 32064, 3072, 8192, 32, 32, 32, 96, 131072, 10000.0f, false,
     2},
    {"phi-4-mini", Architecture::Phi3, 200064, 3072, 8192, 32, 24, 8, 128, 131072, 10000.0f, true,
     2, 96},
    {"mistral-7b", Architecture::Llama, 32000, 4096, 14336, 32, 32, 8, 128, 32768, 10000.0f, false,
     0, 0, 4096},
    {"qwen3-30b-a3b", Architecture::Qwen3Moe, 151936, 2048, 6144, 48, 32, 4, 128, 40960, 1000000.0f,
     false, false},
    // The same with 4 of its 48 layers kept (issue 18's comparable shape for figures).
    {"qwen3-30b-a3b-4l", Architecture::Qwen3Moe, 151936, 2048, 6144, 4, 32, 4, 128, 40960,
     1000000.0f, false, false},
};

// The gemma settings of those shapes (google/gemma-2-2b, gemma-3-1b-pt, gemma-3-4b-pt).
struct GemmaPreset {
    const char* name;
    int sliding_window;
    float attn_softcap, final_softcap, query_pre_attn_scalar, rope_local, linear_factor;
};
constexpr GemmaPreset kGemmaPresets[] = {
    {"gemma-2-2b", 4096, 50.0f, 30.0f, 256.0f, 0.0f, 0.0f},
    {"gemma-3-1b", 512, 0.0f, 0.0f, 256.0f, 10000.0f, 0.0f},
    {"gemma-3-4b", 1024, 0.0f, 0.0f, 256.0f, 10000.0f, 8.0f},
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
        s.rotary_dim = p.rotary_dim;
        s.sliding_window = p.window;
        if (p.rope == 2)
            set_synthetic_longrope(s, 4096);
        if (p.rope == 1) {
            s.rope_scaling.kind = RopeScaling::Kind::Llama3;
            s.rope_scaling.factor = 32.0f;
            s.rope_scaling.low_freq_factor = 1.0f;
            s.rope_scaling.high_freq_factor = 4.0f;
            s.rope_scaling.original_max_position = 8192;
        }
        for (const auto& g : kGemmaPresets) {
            if (shape != g.name)
                continue;
            s.sliding_window = g.sliding_window;
            s.attn_logit_softcap = g.attn_softcap;
            s.final_logit_softcap = g.final_softcap;
            s.query_pre_attn_scalar = g.query_pre_attn_scalar;
            s.rope_theta_local = g.rope_local;
            if (g.linear_factor > 0) {
                s.rope_scaling.kind = RopeScaling::Kind::Linear;
                s.rope_scaling.factor = g.linear_factor;
            }
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

void set_synthetic_longrope(ModelWriterSpec& s, int original) {
    const int head_dim = s.head_dim > 0 ? s.head_dim : s.hidden_size / std::max(1, s.num_heads);
    const int n = (s.rotary_dim > 0 ? s.rotary_dim : head_dim) / 2;
    RopeScaling& r = s.rope_scaling;
    r = RopeScaling{};
    r.kind = RopeScaling::Kind::LongRope;
    r.original_max_position = original;
    r.attention_factor = 0.0f; // the writer derives it from the positions
    for (int i = 0; i < n; ++i) {
        const float t = n > 1 ? float(i) / float(n - 1) : 0.0f;
        r.short_factor.push_back(1.0f + 0.1f * t * t);
        r.long_factor.push_back(1.0f + 39.0f * t * t);
    }
}

std::vector<std::string> known_model_shapes() {
    std::vector<std::string> out;
    for (const auto& p : kPresets)
        out.push_back(p.name);
    return out;
}

ModelWriterSpec gemma_spec_from(const ModelWriterSpec& base, Architecture arch) {
    if (base.arch == arch)
        return base;
    ModelWriterSpec s = base;
    s.arch = arch;
    s.tie_word_embeddings = true;
    s.rope_scaling = RopeScaling{};
    s.attn_logit_softcap = arch == Architecture::Gemma2 ? 50.0f : 0.0f;
    s.final_logit_softcap = arch == Architecture::Gemma2 ? 30.0f : 0.0f;
    s.sliding_window = arch == Architecture::Gemma2 ? 4096 : 512;
    s.rope_theta_local = arch == Architecture::Gemma3 ? 10000.0f : 0.0f;
    s.rope_theta = arch == Architecture::Gemma3 ? 1000000.0f : 10000.0f;
    s.query_pre_attn_scalar = 0.0f; // head_dim
    return s;
}

} // namespace llmwb
