// The model a CLI command works on: --model PATH or the demo model, its tokenizer, and (on
// demand) a Transformer with a KV cache sized for the request.
#pragma once

#include <memory>
#include <string>

#include "app/cli/cli_args.h"
#include "engine/model/loaded_model.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/transformer.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb::cli {

// Where the demo model lives: $XDG_DATA_HOME/llmwb/llm-workbench (or
// ~/.local/share/llmwb/llm-workbench) — the desktop app's data folder
// (QStandardPaths::AppDataLocation), so both use the same demo file.
std::string default_model_dir();

struct CliModel {
    std::unique_ptr<LoadedModel> model;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<kernels::ThreadPool> pool;
    std::unique_ptr<Transformer> transformer;
    std::unique_ptr<KvCacheStorage> kv;

    // Creates the thread pool, the Transformer and a KV cache with room for `tokens` tokens
    // (capped by the model's context length).
    Status prepare_runtime(int64_t tokens, int threads);
};

// Loads --model (or the demo model) and its tokenizer. Options used: --model.
Result<std::unique_ptr<CliModel>> open_cli_model(const CliArgs& args);

}  // namespace llmwb::cli
