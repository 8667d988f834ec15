// Small models for the runtime tests, written with the project's model writer and loaded back.
#pragma once

#include <memory>
#include <string>

#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"

namespace llmwb::test {

// Shapes used by the tests (all with the built-in demo tokenizer).
enum class Shape {
    Llama,      // hidden 64, 4 heads / 2 kv heads, head_dim 16, untied
    Llama3Rope, // Llama + llama3 rope scaling (factor 8, original context 64)
    Qwen2,      // hidden 64, 8 heads / 2 kv heads (q/k/v biases), tied embeddings
    Qwen3,      // hidden 64, 4 heads / 2 kv heads, head_dim 32 != hidden/heads, q/k norms
    Quant,      // qwen2, hidden 256, intermediate 512 (rows fit 256-element K-quant blocks)
};

ModelWriterSpec spec_for(Shape shape, ModelFileFormat format, WeightType type);

// Writes the model under dir (a file or folder named `name`; the demo tokenizer, from files
// written once under dir, when the spec names none) and loads it. Fails the calling
// test with a message on error (returns nullptr).
std::unique_ptr<LoadedModel> write_and_load(const ModelWriterSpec& spec, const std::string& dir,
                                            const std::string& name, std::string* error);

} // namespace llmwb::test
