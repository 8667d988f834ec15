// Quantization recipes: which GGUF type each tensor of a model gets for a target (a single type
// or a preset mix such as Q4_K_M), following the tensor-type choices of the common GGUF
// quantizer at the version quantize_recipe_version() names (llama.cpp's llama_tensor_get_type
// and its row-length fallbacks). Used by `llmwb quantize` and by `llmwb make-model --type`, so
// both write the same mixes. The targets themselves (quantize_targets, parse_quant_target) are
// declared in quantize.h and defined with the recipes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/quantize.h"

namespace llmwb {

// What a tensor is, from its GGUF name (llama.cpp's tensor categories).
enum class TensorKind {
    TokenEmbd,  // token_embd.weight
    Output,     // output.weight
    AttnQ,      // blk.N.attn_q.weight
    AttnQkv,    // blk.N.attn_qkv.weight (fused q/k/v: phi3)
    AttnK,      // blk.N.attn_k.weight
    AttnV,      // blk.N.attn_v.weight
    AttnOutput, // blk.N.attn_output.weight
    FfnGate,    // blk.N.ffn_gate*
    FfnUp,      // blk.N.ffn_up*
    FfnDown,    // blk.N.ffn_down*
    Other,
};
TensorKind tensor_kind_of(const std::string& gguf_name);

// Whether the common quantizer converts this tensor at all: at least 2-D, a name ending in
// "weight", not a norm. Everything else (norms, biases, rope_freqs) stays a float vector (F32).
bool tensor_is_quantizable(const std::string& gguf_name, int n_dims);

// The model-wide facts a recipe looks at.
struct RecipeModel {
    int n_attn_v = 0;   // attn_v tensors in the file (the layer count in a standard model)
    int n_ffn_down = 0; // ffn_down tensors in the file
    int n_head = 1, n_head_kv = 1;
    bool tied_embeddings = false; // no output.weight: token_embd follows the output rule
    bool has_imatrix = false;
};

struct RecipeChoice {
    DType type = DType::F32;   // the type written
    DType wanted = DType::F32; // the recipe's type before the row-length fallback
    bool quantizable = false;  // a weight matrix (false: kept as an F32 vector)
    bool fallback = false;     // type != wanted because of the row length
    bool unsupported = false;  // the row length fits neither `wanted` nor any fallback of it
    std::string reason;        // for a fallback or an unsupported row: a sentence
};

// The type of one tensor. `index` is the tensor's position among the tensors of its kind in
// file order (attn_v, ffn_down, ...), which is the layer number in a standard file, as the
// common quantizer counts it. cols is the row length (GGUF ne[0]).
RecipeChoice recipe_tensor_type(const QuantTarget& target, const std::string& gguf_name, int n_dims,
                                int64_t cols, int index, const RecipeModel& model);

// The choices for every tensor of a file, in file order (counts the kinds itself).
struct RecipeTensor {
    std::string name; // GGUF name
    int n_dims = 2;
    int64_t cols = 0;
};
std::vector<RecipeChoice> recipe_plan(const QuantTarget& target,
                                      const std::vector<RecipeTensor>& tensors, int n_head,
                                      int n_head_kv, bool has_imatrix);

// The fallback type of the common quantizer for a row length `t` cannot hold; F32 when it
// defines none (its quantizer then refuses the tensor).
DType recipe_fallback_type(DType t);

} // namespace llmwb
