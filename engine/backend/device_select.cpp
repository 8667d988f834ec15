#include "engine/backend/device_select.h"

#include "engine/runtime/cpu_executor.h"
#include "engine/runtime/panel_weights.h"

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

std::optional<WeightDtype> parse_weight_dtype(std::string_view text) {
    if (text == "auto")
        return WeightDtype::Auto;
    if (text == "bfloat16" || text == "bf16")
        return WeightDtype::BFloat16;
    return std::nullopt;
}

const char* weight_dtype_name(WeightDtype t) {
    return t == WeightDtype::BFloat16 ? "bfloat16" : "auto";
}

Result<Backend> open_backend(DevicePreference preference, const LoadedModel& model,
                             kernels::ThreadPool& pool, const CudaExecutorOptions& options,
                             std::shared_ptr<CudaPlugin> plugin, WeightDtype weights) {
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
    if (b.executor && weights != WeightDtype::Auto)
        b.weights_not_cast = "the CUDA backend runs the weights as stored";
    if (!b.executor) {
        const bool cast = weights == WeightDtype::BFloat16;
        b.transformer = std::make_unique<CpuTransformer>(
            model, pool, cast ? std::optional<DType>(DType::BF16) : std::nullopt);
        b.weights_not_cast = b.transformer->panel_weights().not_cast_reason();
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
