// The model a CLI command works on: --model PATH or the demo model, its tokenizer, and (on
// demand) a Transformer with a KV cache sized for the request.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/cli/cli_args.h"
#include "engine/backend/cuda_executor.h"
#include "engine/model/loaded_model.h"
#include "engine/runtime/model_executor.h"
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

    std::shared_ptr<CudaPlugin> cuda_plugin;
    std::unique_ptr<ModelExecutor> executor; // the backend --device chose

    // Creates the thread pool, the Transformer and a KV cache with room for `tokens` tokens
    // (capped by the model's context length).
    Status prepare_runtime(int64_t tokens, int threads);

    // Opens the backend of --device (see device_options()) as `executor`: the CPU (creating the
    // thread pool and the Transformer when missing) or the CUDA plugin. auto picks CUDA when the
    // plugin loads and a device exists (one line on stderr says so), else the CPU silently.
    // max_tokens / max_seqs: the largest step (GPU workspaces). kv_tokens > 0: also sizes the
    // executor's KV pool for one sequence of that many tokens (capped by the context length).
    // Errors: bad option values; --device cuda when CUDA is unavailable (the reason).
    Result<ModelExecutor*> open_executor(const CliArgs& args, int threads, int32_t max_tokens,
                                         int32_t max_seqs, int64_t kv_tokens = 0);
};

// Value options / flags of the device choice, and their help text:
//   --device auto|cpu|cuda  --kv-dtype f16|f32 (CUDA KV cache)  --no-cuda-graphs
const std::set<std::string>& device_value_options();
const std::set<std::string>& device_flag_options();
extern const char* kDeviceOptionsHelp;

// One line per CUDA device ("cuda:0 NVIDIA H200, 139.8 GiB, sm_90, 132 SMs"), or one line saying
// why there is none.
std::vector<std::string> describe_cuda_devices();

// Loads --model (or the demo model) and its tokenizer. Options used: --model.
Result<std::unique_ptr<CliModel>> open_cli_model(const CliArgs& args);

}  // namespace llmwb::cli
