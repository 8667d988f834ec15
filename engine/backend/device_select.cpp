#include "engine/backend/device_select.h"

#include "engine/runtime/cpu_executor.h"

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

Result<Backend> open_backend(DevicePreference preference, const LoadedModel& model,
                             kernels::ThreadPool& pool, const CudaExecutorOptions& options,
                             std::shared_ptr<CudaPlugin> plugin) {
    Backend b;
    if (preference != DevicePreference::Cpu) {
        if (!plugin) {
            auto loaded = CudaPlugin::load();
            if (loaded)
                plugin = *loaded;
            else if (preference == DevicePreference::Cuda)
                return loaded.error();
            else
                b.cuda_unavailable = loaded.message();
        }
        if (plugin) {
            b.plugin = plugin;
            auto exec = CudaExecutor::create(plugin, model, options);
            if (exec)
                b.executor = std::move(exec.value());
            else if (preference == DevicePreference::Cuda)
                return exec.error();
            else
                b.cuda_unavailable = exec.message();
        }
    }
    if (!b.executor) {
        b.transformer = std::make_unique<CpuTransformer>(model, pool);
        auto cpu = std::make_unique<CpuExecutor>(*b.transformer);
        if (Status st = cpu->set_kv_dtype(kCpuAutoKvDtype, {}); !st)
            return st.error();
        b.executor = std::move(cpu);
    }
    return b;
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
