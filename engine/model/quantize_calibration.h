// Gathering an importance matrix from the user's own text: the float model runs on the CPU over
// the tokenized text (chunks of kCalibrationChunk tokens, at most max_tokens), and an observer
// of the CPU transformer adds, for every weight matrix, each input column's x^2 of every token
// (and the token count), as llama.cpp's imatrix tool does for the matrices it sees. Part of the
// llmwb_quantize module (it needs the runtime).
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "engine/model/imatrix_file.h"
#include "engine/util/result.h"

namespace llmwb {

// model_path: a float GGUF file or Hugging Face folder; text: the calibration text (UTF-8).
// progress(tokens_done, tokens_total) after every chunk. Errors: an unreadable model, a text
// shorter than 2 tokens, "cancelled".
Result<ImportanceMatrix> gather_importance(const std::string& model_path, const std::string& text,
                                           int max_tokens, int threads,
                                           const std::atomic<bool>* cancel,
                                           const std::function<void(int, int)>& progress = {});

} // namespace llmwb
