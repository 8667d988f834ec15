// The device choice shared by `llmwb --device auto|cpu|cuda` and the app's Model panel: which
// backend a model runs on. auto: CUDA when the plugin loads and an executor can be created on a
// device, else the CPU (with the reason CUDA was not used); cuda: an error carrying that reason.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/backend/cuda_executor.h"
#include "engine/backend/cuda_plugin.h"
#include "engine/runtime/model_executor.h"
#include "engine/util/result.h"

namespace llmwb {

enum class DevicePreference { Auto, Cpu, Cuda };

// "auto", "cpu", "cuda" (exact, lower case); nullopt otherwise.
std::optional<DevicePreference> parse_device_preference(std::string_view text);
const char* device_preference_name(DevicePreference preference);

struct CudaSelection {
    std::unique_ptr<ModelExecutor> executor; // the CUDA executor; null: run on the CPU
    std::shared_ptr<CudaPlugin> plugin;      // the loaded plugin (pass it to later calls)
    std::string unavailable;                 // why CUDA is not used (empty: it is, or cpu)
};

// Tries CUDA as `preference` asks. Cpu: tries nothing. Auto: the CUDA executor when the plugin
// loads and the executor is created, else `unavailable` says why. Cuda: an error whose message
// is that reason (e.g. "no CUDA driver (libcuda.so.1 not found)"). `plugin`: one loaded before
// (null: loaded here).
Result<CudaSelection> select_cuda_executor(DevicePreference preference, const LoadedModel& model,
                                           const CudaExecutorOptions& options,
                                           std::shared_ptr<CudaPlugin> plugin = nullptr);

// Without a model: "" when the plugin loads and reports at least one device, else the reason.
std::string cuda_unavailable_reason(const CudaPluginOptions& options = {});

} // namespace llmwb
