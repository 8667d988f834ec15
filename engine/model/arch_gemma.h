// Gemma 2 and Gemma 3 (text): what sets them apart from llama at load and write time.
//
// Both: embedding * sqrt(hidden), GeGLU (tanh GELU), sandwich norms (input / post-attention /
// pre-feedforward / post-feedforward), attention scores * query_pre_attn_scalar^-0.5, sliding
// window on some layers, tied embeddings. Gemma 2: attention-logit and final-logit soft-caps,
// every even layer slides. Gemma 3: q/k norms, no soft-caps, five sliding layers to one global
// ((l + 1) % 6 != 0, or config.json's layer_types), RoPE base rope_local_base_freq (10000, no
// scaling) on the sliding layers and rope_theta with rope_scaling (linear) on the global ones.
//
// RMSNorm weights: Hugging Face computes x / rms * (1 + w) and stores w; llama.cpp's converter
// stores w + 1 in GGUF. The loaded model always holds the multiplier (1 + w): GGUF norms as
// stored, safetensors norms shifted by +1 at load (shift_gemma_hf_norms). The model writer's
// logical norm values are that multiplier too (written as is to GGUF, minus 1 to safetensors).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "engine/model/gguf_file.h"
#include "engine/model/loaded_model.h"
#include "engine/model/weight_binding.h"
#include "engine/util/result.h"

namespace llmwb {

bool is_gemma(Architecture a);
// Hugging Face model_type values read as gemma: gemma2, gemma3 (multimodal, text_config),
// gemma3_text.
bool is_gemma_model_type(const std::string& model_type);
// GGUF general.architecture values: gemma2, gemma3.
bool is_gemma_gguf_arch(const std::string& arch);

// Which layers slide by default: gemma2 every even layer, gemma3 all but every sixth
// ((l + 1) % pattern != 0).
std::vector<uint8_t> gemma_default_layer_sliding(Architecture a, int num_layers, int pattern = 6);

// The features every gemma2/3 model has, from arch, hidden_size, head_dim, qk norms:
// activation, embedding_scale, post_norms, qk_norm (gemma3), query_scale from
// query_pre_attn_scalar (0 = head_dim), layer_sliding (default pattern when empty).
void set_gemma_features(ModelConfig& c, float query_pre_attn_scalar);

// query_pre_attn_scalar of a GGUF file, which has no key for it: like llama.cpp, hidden / heads
// for the 27B shapes (gemma2 46 layers, gemma3 62 layers), else head_dim.
float gemma_gguf_query_pre_attn_scalar(const ModelConfig& c);

// GGUF: after the common keys are read (c.arch set, shapes known), reads <arch>.attn_logit_
// softcapping, final_logit_softcapping, attention.sliding_window, the gemma3 linear rope
// scaling, and sets the features.
Status read_gemma_gguf_config(const GgufFile& f, const std::string& file, ModelConfig& c);

// config.json: replaces j by the effective text config (the family's Hugging Face defaults
// overlaid by the file's text_config or top-level keys, rope_scaling removed since it is read
// here) and sets c's arch and every gemma-specific field. The caller then reads the common
// keys from j.
Status read_gemma_hf_config(nlohmann::json& j, const std::string& file, ModelConfig& c);

// Hugging Face tensor names of gemma (pre-MLP norm = pre_feedforward_layernorm, post-attention
// norm = post_attention_layernorm); other roles as hf_tensor_name.
std::string gemma_hf_tensor_name(TensorRole role, int layer);
// The Hugging Face naming of a model's tensors (gemma's or the common one).
std::string hf_tensor_name_for(const ModelConfig& c, TensorRole role, int layer);
// The naming of a gemma safetensors folder: plain (model.layers.N...), or the multimodal
// checkpoints' language_model.model.layers.N... / model.language_model.layers.N..., chosen by
// which embedding tensor the folder holds.
using HfNaming = std::string (*)(TensorRole, int);
HfNaming gemma_hf_naming(const TensorLookup& lookup);

bool is_norm_role(TensorRole role);

// Safetensors gemma: every bound norm becomes an F32 copy of 1 + w (owned by the model).
void shift_gemma_hf_norms(LoadedModel& m);

} // namespace llmwb
