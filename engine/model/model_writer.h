// Writes small (or 0.5B-shaped) deterministic models with random weights, as one GGUF file or
// as a Hugging Face safetensors folder. For the same seed and shapes both formats hold the SAME
// logical weights: values are generated in Hugging Face layout, then (llama-arch GGUF only)
// Q/K rows are permuted as llama.cpp's converter does and llama3 rope scaling becomes a
// rope_freqs tensor. Used by the tests, `llmwb make-model`, the benchmarks and the demo model.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/tokenizer/tokenizer_data.h"
#include "engine/util/result.h"
#include "kernels/cpu/dtype.h"

namespace llmwb {

class GgufWriter;

enum class ModelFileFormat { Gguf, Safetensors };

// Storage type of the weight matrices: a single type or a preset mix, each the target of the
// same name of `llmwb quantize` (engine/model/quant_recipe.h decides the type of every tensor,
// with the common quantizer's fallbacks). Norms (and biases) are F32 in GGUF and the float
// type of the matrices in safetensors. Quantized types are GGUF only.
enum class WeightType {
    F32,
    F16,
    BF16,
    Q8_0,
    Q4_0,
    Q4_K, // every matrix Q4_K
    Q6_K,
    Q4_K_M,
    Q4_1,
    Q5_0,
    Q5_1,
    Q2_K,
    Q3_K, // every matrix Q3_K
    Q5_K, // every matrix Q5_K
    IQ4_NL,
    IQ4_XS,
    Q5_K_M,
    Q5_K_S,
    Q4_K_S,
    Q3_K_M,
    Q3_K_S,
    Q3_K_L,
};

const char* weight_type_name(WeightType t);                    // "f32", ..., "q4_k_m"
Result<WeightType> parse_weight_type(const std::string& name); // case-insensitive
// Every weight type, in declaration order (for help texts and tests).
const std::vector<WeightType>& all_weight_types();

struct ModelWriterSpec {
    Architecture arch = Architecture::Qwen2;
    ModelFileFormat format = ModelFileFormat::Gguf;
    WeightType weight_type = WeightType::F32;
    uint64_t seed = 1;
    // Standard deviation of the random token embedding and lm_head (0.02 like the other
    // matrices by default). Larger values (e.g. 0.3) give peaked next-token distributions, as
    // trained models have, so that fidelity measurements (llmwb kld) see confident positions.
    float embedding_std = 0.02f;
    std::string name; // general.name; empty -> "llmwb random <arch>"

    // Shapes. vocab_size actually written = max(vocab_size, tokenizer size).
    int vocab_size = 0;
    int hidden_size = 64;
    int intermediate_size = 128;
    int num_layers = 2;
    int num_heads = 4;
    int num_kv_heads = 2;
    int head_dim = 0; // 0 -> hidden_size / num_heads
    int max_position = 4096;
    float rope_theta = 10000.0f;
    float rms_norm_eps = 1e-6f;
    RopeScaling rope_scaling; // Llama3 only for Architecture::Llama, LongRope only for Phi3
                              // (attention_factor <= 0: the default from the positions)
    int rotary_dim = 0;       // phi3 partial rotary: rotated dims per head (0 = head_dim)
    // Sliding window (0 = none): phi3 and gemma2/3 write it to both formats (gemma: on its
    // sliding layers); llama is written as a Hugging Face mistral folder (GGUF: no key).
    int sliding_window = 0;
    bool tie_word_embeddings = false;
    // q/k/v biases: -1 = architecture default (qwen2 yes, others no), 0 = no, 1 = yes.
    int attention_bias = -1;
    // gemma2/3 (engine/model/arch_gemma.h; ignored by the other families): soft-caps (0 =
    // none; gemma2 only), query_pre_attn_scalar (0 = head_dim), RoPE base of gemma3's sliding
    // layers (0 = 10000). rope_scaling may be Linear for gemma3 (its global layers).
    float attn_logit_softcap = 0.0f;
    float final_logit_softcap = 0.0f;
    float query_pre_attn_scalar = 0.0f;
    float rope_theta_local = 0.0f;
    // Mixture of experts (Architecture::Qwen3Moe only; every layer is MoE). GGUF stacks each
    // layer's experts into one tensor per projection, safetensors writes one per expert.
    int num_experts = 0;
    int num_experts_used = 0;
    int expert_intermediate_size = 0;
    bool expert_norm_topk = true; // norm_topk_prob

    // Tokenizer: a folder with tokenizer.json (+ tokenizer_config.json), or empty for the
    // built-in demo tokenizer (engine/model/demo_tokenizer.h).
    std::string tokenizer_dir;

    // Chosen weights instead of random ones: when set, called for rows [row_begin, row_end) of
    // every tensor (Hugging Face name and layout, [rows][cols] row-major, norms and biases as
    // one row) in place of the seeded generator. Called from several threads at once. Gemma
    // norms: the values are the multipliers 1 + w (written as is to GGUF, minus 1 to
    // safetensors, as each format stores them).
    std::function<void(const std::string& hf_name, int64_t row_begin, int64_t row_end, int64_t cols,
                       float* out)>
        tensor_values;
};

// One tensor as written.
struct WrittenTensor {
    std::string hf_name;   // e.g. model.layers.0.self_attn.q_proj.weight ("" if GGUF-only)
    std::string file_name; // name in the file (GGUF or HF naming)
    int64_t rows = 0, cols = 0;
    DType type = DType::F32;
    bool fallback = false; // the requested quant type did not fit the row length
};

struct ModelWriteReport {
    ModelConfig config; // as a loader should read it back (rope_style per format)
    std::vector<WrittenTensor> tensors;
    int fallback_tensors = 0;
    int64_t weight_bytes = 0;
    int64_t parameter_count = 0;
};

// GGUF: out_path is the file. Safetensors: out_path is a folder (created if missing) that
// receives config.json, model.safetensors, tokenizer.json and tokenizer_config.json.
// Streaming: one tensor is generated, converted and written at a time.
Status write_model(const ModelWriterSpec& spec, const std::string& out_path,
                   ModelWriteReport* report = nullptr);

// The logical weights behind a written model, in Hugging Face layout (row-major
// [rows][cols], before any GGUF Q/K permutation or quantization). Deterministic in
// (seed, hf_name). Tests compare loaded weights against these values.
std::vector<float> generate_hf_tensor(const ModelWriterSpec& spec, const std::string& hf_name,
                                      int64_t rows, int64_t cols);

// The config a spec resolves to (vocab from the tokenizer, head_dim, biases, qk_norm); the
// rope_style is RotateHalf (Interleaved for llama-arch GGUF is set by write_model's report).
Result<ModelConfig> resolve_writer_config(const ModelWriterSpec& spec);

// The GGUF metadata of a model as make-model writes it: general.* (architecture, name,
// file_type, quantization_version), the <arch>.* hyperparameters, the tokenizer.* keys and the
// chat template. `llmwb quantize` writes it for Hugging Face input.
void add_gguf_model_metadata(GgufWriter& w, const ModelConfig& c, const TokenizerData& tokenizer,
                             const std::optional<std::string>& chat_template,
                             const std::string& name, uint32_t file_type);

// phi3 LongRoPE as GGUF stores it: the F32 tensors rope_factors_long.weight and
// rope_factors_short.weight (name, values); empty unless c.rope_scaling is LongRope.
std::vector<std::pair<std::string, std::vector<float>>>
longrope_factor_tensors(const ModelConfig& c);

} // namespace llmwb
