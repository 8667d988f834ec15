// Binding the tensors of a file to ModelWeights: one naming scheme per format, a lookup of
// raw tensors, shape checks against the config ("<name>: shape [a, b], expected [c, d]"), and
// the conversion of norm vectors / biases / rope_freqs to F32 (owned by the LoadedModel).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "engine/model/loaded_model.h"
#include "engine/util/result.h"

namespace llmwb {

// A tensor as found in a file, viewed as row-major [rows][cols].
struct RawTensor {
    std::string name;
    DType type = DType::F32;
    const uint8_t* data = nullptr;
    int64_t rows = 0, cols = 0;
    int n_dims = 2;
    int64_t bytes = 0;
};

enum class TensorRole {
    TokEmbd,
    OutputNorm,
    Output,
    RopeFreqs,
    AttnNorm,
    Wq,
    Wk,
    Wv,
    Wo,
    Bq,
    Bk,
    Bv,
    QNorm,
    KNorm,
    FfnNorm,
    WGate,
    WUp,
    WDown,
    // Newer families (see LayerWeights): gemma2/3 sandwich norms, phi3 fused projections,
    // mixture-of-experts router and stacked experts (GGUF; Hugging Face stores one tensor per
    // expert, named by the MoE binding itself).
    PostAttnNorm,
    PostFfnNorm,
    Wqkv,
    WGateUp,
    Router,
    ExpGate,
    ExpUp,
    ExpDown,
};

// The file name of a tensor role (layer ignored for global roles).
std::string gguf_tensor_name(TensorRole role, int layer);
std::string hf_tensor_name(TensorRole role, int layer);

using TensorLookup = std::function<std::optional<RawTensor>(const std::string& name)>;

// Fills model.weights, weight_bytes and parameter_count from `lookup` named by `naming`.
// Uses model.config (arch, shapes, attention_bias, qk_norm, tie_word_embeddings); when
// `allow_rope_freqs` the optional rope_freqs tensor is bound too.
Status bind_weights(LoadedModel& model, const TensorLookup& lookup,
                    std::string (*naming)(TensorRole, int), bool allow_rope_freqs,
                    const std::string& file_for_errors);

} // namespace llmwb
