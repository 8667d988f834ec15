// The model a CLI command works on: --model PATH or the demo model, its tokenizer, and (on
// demand) the backend --device chose (engine/backend/device_select.h: open_backend).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/cli_args.h"
#include "app/cli/cli_options.h"
#include "engine/backend/device_select.h"
#include "engine/model/loaded_model.h"
#include "engine/runtime/model_executor.h"
#include "engine/serving/draft_proposer.h"
#include "engine/serving/engine.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb::cli {

// Where the demo model lives: $XDG_DATA_HOME/llmwb/llm-workbench (or
// ~/.local/share/llmwb/llm-workbench) — the desktop app's data folder
// (QStandardPaths::AppDataLocation), so both use the same demo file.
std::string default_model_dir();

// Members are destroyed backend first (it refers to the pool and the model).
struct CliModel {
    std::unique_ptr<LoadedModel> model;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<kernels::ThreadPool> pool;
    Backend backend;

    // Opens the backend of `device` with open_backend (auto: CUDA when the plugin loads and a
    // device exists — one line on stderr says so — else the CPU silently). max_tokens / max_seqs:
    // the largest step (GPU workspaces). The executor has no KV pool: the Engine sizes it from
    // its memory plan. The KV type: --kv-cache-dtype (auto: the backend's default), with fp8
    // scales calibrated on a built-in text when --calculate-kv-scales (kv_calibration.h).
    // Errors: --device cuda when CUDA is unavailable (the reason); a KV type the backend cannot
    // store (the reason); a failed calibration.
    Result<ModelExecutor*> open_executor(const DeviceOptions& device, int32_t max_tokens,
                                         int32_t max_seqs);
    int threads() const { return pool ? pool->size() : 0; }
};

// One line per CUDA device ("cuda:0 NVIDIA H200, 139.8 GiB, sm_90, 132 SMs"), or one line saying
// why there is none.
std::vector<std::string> describe_cuda_devices();

// Loads `path` (nullopt: the demo model, written on first use) and its tokenizer.
Result<std::unique_ptr<CliModel>> open_cli_model(const std::optional<std::string>& path);
// The same for --model.
Result<std::unique_ptr<CliModel>> open_cli_model(const CliArgs& args);

// The draft model of --speculative-method draft (--draft-model) or self-q4 (the model's own
// weights at 4 bits), attached to `engine` with a KV pool of as many token slots as the engine's;
// nullptr for ngram and off. Errors: a draft that fails to load, another vocabulary, not enough
// memory. The proposer must outlive the engine (declare it first).
Result<std::unique_ptr<DraftModelProposer>> attach_draft_model(CliModel& m, Engine& engine);

} // namespace llmwb::cli
