// The engine benchmarks' models: a model of a named shape (engine/model/model_shapes.h) with
// random weights of one type, written once into a cache folder by the project's own writer.
#pragma once

#include <string>

#include "engine/util/result.h"

namespace llmwb::bench {

// Returns the path of <cache_dir or ~/.cache/llmwb/bench-models>/<shape>-<type>.gguf, writing
// it first when it does not exist.
Result<std::string> ensure_shape_model(const std::string& shape, const std::string& type,
                                       const std::string& cache_dir);

} // namespace llmwb::bench
