#include "engine/backend/device_select.h"

namespace llmwb {

std::optional<DevicePreference> parse_device_preference(std::string_view text) {
    if (text == "auto")
        return DevicePreference::Auto;
    if (text == "cpu")
        return DevicePreference::Cpu;
    if (text == "cuda")
        return DevicePreference::Cuda;
    return std::nullopt;
}

const char* device_preference_name(DevicePreference preference) {
    switch (preference) {
    case DevicePreference::Cpu:
        return "cpu";
    case DevicePreference::Cuda:
        return "cuda";
    case DevicePreference::Auto:
        break;
    }
    return "auto";
}

Result<CudaSelection> select_cuda_executor(DevicePreference preference, const LoadedModel& model,
                                           const CudaExecutorOptions& options,
                                           std::shared_ptr<CudaPlugin> plugin) {
    CudaSelection sel;
    if (preference == DevicePreference::Cpu)
        return sel;
    if (!plugin) {
        auto loaded = CudaPlugin::load();
        if (!loaded) {
            if (preference == DevicePreference::Cuda)
                return loaded.error();
            sel.unavailable = loaded.message();
            return sel;
        }
        plugin = *loaded;
    }
    sel.plugin = plugin;
    auto exec = CudaExecutor::create(plugin, model, options);
    if (!exec) {
        if (preference == DevicePreference::Cuda)
            return exec.error();
        sel.unavailable = exec.message();
        return sel;
    }
    sel.executor = std::move(exec.value());
    return sel;
}

std::string cuda_unavailable_reason(const CudaPluginOptions& options) {
    auto plugin = CudaPlugin::load(options);
    if (!plugin)
        return plugin.message();
    auto devices = (*plugin)->devices();
    if (!devices)
        return devices.message();
    if (devices->empty())
        return "no CUDA device";
    return {};
}

} // namespace llmwb
