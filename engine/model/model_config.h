// Hyper-parameters of a decoder-only transformer, whatever file it came from.
#pragma once

#include <cstdint>
#include <string>

namespace llmwb {

enum class Architecture { Llama, Qwen2, Qwen3 }; // Mistral is Llama

// How RoPE pairs dimensions inside a head.
//  RotateHalf:  (x[i], x[i + d/2])  — Hugging Face layout (safetensors, and GGUF qwen2/qwen3)
//  Interleaved: (x[2i], x[2i + 1])  — llama-architecture GGUF files, whose Q/K rows are stored
//               permuted by the converter. Both give identical logits for the same weights.
enum class RopeStyle { RotateHalf, Interleaved };

// Llama 3 scaling reaches the runtime in one of two forms, never both: from a Hugging Face
// config.json as ModelConfig::rope_scaling (kind Llama3), or from a GGUF file as the per-dimension
// factors in ModelWeights::rope_freqs (then kind is None). engine/model/rope_factors.h turns the
// config form into the tensor form.
struct RopeScaling {
    enum class Kind { None, Llama3 } kind = Kind::None;
    float factor = 1.0f;
    float low_freq_factor = 1.0f;
    float high_freq_factor = 4.0f;
    int original_max_position = 8192;
};

struct ModelConfig {
    Architecture arch = Architecture::Llama;
    std::string arch_name; // "llama", "qwen2", "qwen3" (as in the file)
    int vocab_size = 0;
    int hidden_size = 0;
    int intermediate_size = 0;
    int num_layers = 0;
    int num_heads = 0;
    int num_kv_heads = 0;
    int head_dim = 0;     // usually hidden_size / num_heads; qwen3 may differ
    int max_position = 0; // context length
    float rope_theta = 10000.0f;
    float rms_norm_eps = 1e-6f;
    RopeScaling rope_scaling;
    RopeStyle rope_style = RopeStyle::RotateHalf;
    bool tie_word_embeddings = false;
    bool attention_bias = false; // q/k/v biases (qwen2)
    bool qk_norm = false;        // per-head RMSNorm on q and k (qwen3)
};

const char* architecture_name(Architecture a);

} // namespace llmwb
