// Hyper-parameters of a decoder-only transformer, whatever file it came from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmwb {

// Sanity cap for sizes and counts read from a model file's metadata or config.json (hidden size,
// layers, heads, expert sizes ...): larger values are refused as malformed before any allocation.
inline constexpr int64_t kMaxDimension = int64_t(1) << 24;

// The families the engine runs. Mistral is Llama (with ModelConfig::sliding_window when its
// config.json sets one). Each family is one forward pass per backend, switched by the feature
// fields of ModelConfig below rather than by the enum wherever a feature is shared.
enum class Architecture { Llama, Qwen2, Qwen3, Gemma2, Gemma3, Phi3, Qwen3Moe };

// The MLP's gate activation: act(gate) * up.
//  Silu:     llama / qwen / phi3 / mistral / qwen3moe experts
//  GeluTanh: gemma2 / gemma3 (Hugging Face "gelu_pytorch_tanh": the tanh approximation)
enum class MlpActivation { Silu, GeluTanh };

// How RoPE pairs dimensions inside a head.
//  RotateHalf:  (x[i], x[i + d/2])  — Hugging Face layout (safetensors, and GGUF qwen2/qwen3)
//  Interleaved: (x[2i], x[2i + 1])  — llama-architecture GGUF files, whose Q/K rows are stored
//               permuted by the converter. Both give identical logits for the same weights.
enum class RopeStyle { RotateHalf, Interleaved };

// Llama 3 scaling reaches the runtime in one of two forms, never both: from a Hugging Face
// config.json as ModelConfig::rope_scaling (kind Llama3), or from a GGUF file as the per-dimension
// factors in ModelWeights::rope_freqs (then kind is None). engine/model/rope_factors.h turns the
// config form into the tensor form.
//
// Other kinds:
//  Linear:   positions divided by `factor` (gemma3's global layers).
//  LongRope: phi3's per-dimension factor sets: short_factor below original_max_position, long
//            above, each [rotary_dim/2]; cos/sin multiplied by attention_factor (by default
//            sqrt(1 + ln(max_position / original) / ln(original)) when max_position exceeds
//            original_max_position, else 1).
struct RopeScaling {
    enum class Kind { None, Llama3, Linear, LongRope } kind = Kind::None;
    float factor = 1.0f;
    float low_freq_factor = 1.0f;
    float high_freq_factor = 4.0f;
    int original_max_position = 8192;
    std::vector<float> short_factor, long_factor; // LongRope: [rotary_dim / 2] each
    float attention_factor = 1.0f;                // LongRope: cos/sin multiplier
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
    bool qk_norm = false;        // per-head RMSNorm on q and k (qwen3, gemma3)

    // --- Features of the newer families (defaults = llama/qwen behaviour) ---
    MlpActivation activation = MlpActivation::Silu;
    float embedding_scale = 1.0f;    // x = embedding * scale (gemma: sqrt(hidden_size))
    bool post_norms = false;         // gemma2/3: RMSNorm of each block's output before the residual
                                     // add (LayerWeights::post_attn_norm / post_ffn_norm)
    float attn_logit_softcap = 0.0f; // gemma2: scores = cap * tanh(scores / cap); 0 = none
    float final_logit_softcap = 0.0f; // gemma2: logits = cap * tanh(logits / cap); 0 = none
    float query_scale = 0.0f;         // attention score scale; 0 = 1/sqrt(head_dim) (gemma: 1/sqrt(
                                      // query_pre_attn_scalar))
    // Sliding-window attention: a query at position p attends to keys (p - sliding_window, p].
    // 0 = none. Which layers slide: layer_sliding[l] != 0; empty = every layer (mistral).
    int sliding_window = 0;
    std::vector<uint8_t> layer_sliding; // [num_layers] or empty
    // RoPE of the sliding layers (gemma3: base 10000, no rope_scaling); 0 = as the global layers.
    float rope_theta_local = 0.0f;
    int rotary_dim = 0; // dimensions rotated per head (partial rotary); 0 = head_dim

    // --- Mixture of experts (qwen3moe; 0 experts = dense MLP) ---
    int num_experts = 0;
    int num_experts_used = 0; // top-k per token
    int expert_intermediate_size = 0;
    bool expert_norm_topk = true;            // renormalise the top-k router weights to sum to 1
    int shared_expert_intermediate_size = 0; // 0 = none (qwen2moe has one; qwen3moe not)

    // Keys visible to a query at position p in layer l: sliding window or unlimited (0).
    int window_for_layer(int l) const {
        if (sliding_window <= 0)
            return 0;
        if (layer_sliding.empty())
            return sliding_window;
        return l >= 0 && l < static_cast<int>(layer_sliding.size()) && layer_sliding[size_t(l)]
                   ? sliding_window
                   : 0;
    }
    bool is_moe() const { return num_experts > 0; }
    int rotary_dims() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
};

const char* architecture_name(Architecture a);

} // namespace llmwb
