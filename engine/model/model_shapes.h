// Named shape presets of real model families, for the model writer (`llmwb make-model --shape`)
// and the benchmarks: the weights are random, the shapes (and so the cost) are the real ones.
#pragma once

#include <string>
#include <vector>

#include "engine/model/model_writer.h"
#include "engine/util/result.h"

namespace llmwb {

// Known names: tiny, qwen2.5-0.5b, qwen2.5-7b, qwen3-0.6b, llama3.2-1b, llama2-tiny,
// gemma-2-2b, gemma-3-1b, gemma-3-4b.
// phi-3.5-mini, phi-4-mini (LongRoPE with synthetic factors), mistral-7b (sliding window 4096).
// The spec's architecture, shapes, rope and tying are set; format, weight type, seed and
// tokenizer keep their defaults for the caller to set.
Result<ModelWriterSpec> writer_spec_for_shape(const std::string& shape);
std::vector<std::string> known_model_shapes();

// `make-model --arch gemma2|gemma3` on a shape of another family: base's sizes with the
// family's settings (tied embeddings; gemma2: window 4096, soft-caps 50 / 30, RoPE base 10000;
// gemma3: window 512, RoPE base 1e6 on the global layers and 10000 on the sliding ones). A shape of
// that family is returned as is.
ModelWriterSpec gemma_spec_from(const ModelWriterSpec& base, Architecture arch);
// LongRoPE on a phi3 spec with smooth synthetic factor sets (short near 1, long growing to ~40
// over the rotated dimensions; real checkpoints carry their fitted values in config.json):
// rotary_dim/2 factors each, original context `original`, default attention factor.
void set_synthetic_longrope(ModelWriterSpec& spec, int original);

} // namespace llmwb
