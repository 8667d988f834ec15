// A tiny model for the serving tests: written by the project's model writer (qwen2 shapes,
// hidden 64, 2 layers, the built-in demo tokenizer), loaded back, with a CpuTransformer.
#pragma once

#include <memory>
#include <string>

#include "engine/model/loaded_model.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb::test {

struct ServingTestModel {
    std::unique_ptr<LoadedModel> model;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<kernels::ThreadPool> pool;
    std::unique_ptr<CpuTransformer> transformer;
};

// Writes the model into dir and loads it; on failure returns nullptr and sets *error.
std::unique_ptr<ServingTestModel> make_serving_test_model(const std::string& dir,
                                                          std::string* error);

} // namespace llmwb::test
