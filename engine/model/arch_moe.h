// The qwen3moe family (Qwen3-30B-A3B's layout): its config keys in both file formats and the
// binding of its router and experts. Everything else (attention with q/k norms, norms,
// embeddings) is qwen3's and bound by bind_weights.
//
// Files:
//  - GGUF (general.architecture "qwen3moe"): qwen3moe.expert_count, .expert_used_count,
//    .expert_feed_forward_length, optional .expert_weights_norm (default true, as llama.cpp
//    runs qwen3moe); per layer blk.N.ffn_gate_inp.weight [n_expert][hidden] and the stacked
//    experts blk.N.ffn_{gate,up}_exps.weight [n_expert][n_ff_exp][hidden] and
//    blk.N.ffn_down_exps.weight [n_expert][hidden][n_ff_exp]. Expert e is rows
//    [e * rows_per_expert, (e + 1) * rows_per_expert) of the stacked tensor, used in place.
//  - Hugging Face (model_type "qwen3_moe"): num_experts, num_experts_per_tok,
//    moe_intermediate_size, norm_topk_prob (default false, as transformers), decoder_sparse_step
//    and mlp_only_layers (only an all-MoE layout is supported: anything that puts a dense MLP in
//    a layer is refused by name); model.layers.N.mlp.gate.weight and
//    model.layers.N.mlp.experts.E.{gate,up,down}_proj.weight.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "engine/model/gguf_file.h"
#include "engine/model/weight_binding.h"

namespace llmwb {

// Upper bound on the expert count a config may claim (Qwen3 MoE: 128; DeepSeek-V3: 256).
constexpr int kMaxExperts = 1024;

// Reads the MoE keys of a qwen3moe GGUF file into c (c.arch_name set, base keys read).
Status read_moe_gguf_config(const GgufFile& f, const std::string& file, ModelConfig& c);

// Reads the MoE keys of a qwen3_moe config.json object into c.
Status read_moe_hf_config(const nlohmann::json& j, const std::string& file, ModelConfig& c);

// Hugging Face name of expert `e`'s projection (role ExpGate / ExpUp / ExpDown) in `layer`:
// model.layers.<layer>.mlp.experts.<e>.{gate,up,down}_proj.weight
std::string hf_expert_tensor_name(TensorRole role, int layer, int expert);

// Binds layer `layer`'s router and experts into model.weights.layers[layer] and adds their
// bytes and parameters to the model's totals. `stacked`: GGUF's stacked expert tensors
// (named by gguf_tensor_name); otherwise one tensor per expert (Hugging Face names).
Status bind_moe_layer(LoadedModel& model, const TensorLookup& lookup, bool stacked, int layer,
                      const std::string& file);

} // namespace llmwb
