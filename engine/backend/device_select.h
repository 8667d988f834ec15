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
#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/model_executor.h"
#include "engine/util/result.h"

namespace llmwb {

enum class DevicePreference { Auto, Cpu, Cuda };

// "auto", "cpu", "cuda" (exact, lower case); nullopt otherwise.
std::optional<DevicePreference> parse_device_preference(std::string_view text);
const char* device_preference_name(DevicePreference preference);

// A model's backend: the CUDA executor, or the CPU's (a CpuTransformer over a thread pool).
// Members are destroyed executor first (the CPU executor refers to the transformer).
struct Backend {
    std::unique_ptr<CpuTransformer> transformer; // CPU only
    std::unique_ptr<ModelExecutor> executor;     // never null in a returned Backend
    std::shared_ptr<CudaPlugin> plugin;          // the loaded plugin (pass it to later calls)
    std::string cuda_unavailable;                // auto chose the CPU: why CUDA was not used
    std::string weights_not_cast; // a WeightDtype other than Auto that did not apply: why
    bool on_cuda() const { return executor && executor->kind() == DeviceKind::Cuda; }
};

// --dtype (vLLM's flag and names): the type the float weight matrices run in. Auto: as stored.
// BFloat16: the F32 and F16 matrices are cast to BF16 (round to nearest even) as the CPU backend
// packs them at load: the same memory as F16 (F32: half), the same decode speed as a BF16 file,
// and on CPUs with AVX512_BF16 prefill through vdpbf16ps (Qwen2.5-0.5B F16, 2 threads, Zen 5:
// ~1.5x); the model's outputs change by the rounding (`llmwb kld --dtype bfloat16` measures it).
// The CUDA backend runs the weights as stored (Backend::weights_not_cast says so).
enum class WeightDtype { Auto, BFloat16 };
// "auto", "bfloat16" / "bf16"; nullopt otherwise (float16 / float32 casts are not offered).
std::optional<WeightDtype> parse_weight_dtype(std::string_view text);
const char* weight_dtype_name(WeightDtype t);

// The CPU backend's KV element type when none is asked for (--kv-cache-dtype auto, the app's
// "auto"): f16, as the CUDA backend's and the common CPU engine's. Against f32 it halves the KV
// memory (twice the tokens in the same budget) and the bytes a decode step's attention reads:
// Qwen2.5-0.5B Q4_K at context 8192, 2 threads (Zen 5), attention 9.8-12.0 -> 5.6-6.2 ms per
// step, decode 43-58 -> 66-72 tokens/s; at context 192 and 32 sequences the step is unchanged.
// Fidelity against f32 on a Qwen2.5-0.5B-shaped F16 model (`llmwb kld --kv-cache-dtype f16`,
// 1,024 tokens): mean KLD 2.4e-7, top-1 agreement 100%. (A CpuExecutor made directly keeps
// f32: the engine's own tests compare it bit for bit with CpuTransformer::forward.)
inline constexpr KvDtype kCpuAutoKvDtype = KvDtype::F16;

// Opens the backend `preference` asks for — the one function the CLI (--device) and the app
// (Model panel) use. Cpu: the CPU. Auto: CUDA when the plugin loads and an executor can be
// created on a device, else the CPU with `cuda_unavailable` saying why. Cuda: an error whose
// message is that reason (e.g. "no CUDA driver (libcuda.so.1 not found)"). `pool`: the CPU's
// threads (must outlive the backend). `plugin`: one loaded before (null: loaded here). The
// executor has no KV pool yet (the Engine sizes it from its memory plan); the CPU's stores
// kCpuAutoKvDtype until set_kv_dtype. `weights`: --dtype; BFloat16 does not apply when the
// backend chosen is CUDA or when the CPU could not cast (the panel layout off or not fitting in
// memory): `weights_not_cast` says why (the CLI refuses, the app shows it); a no-op for a model
// without F32 / F16 matrices. What was cast: transformer->panel_weights().cast_matrices().
Result<Backend> open_backend(DevicePreference preference, const LoadedModel& model,
                             kernels::ThreadPool& pool, const CudaExecutorOptions& options,
                             std::shared_ptr<CudaPlugin> plugin = nullptr,
                             WeightDtype weights = WeightDtype::Auto);

// Without a model: "" when the plugin loads and reports at least one device, else the reason.
std::string cuda_unavailable_reason(const CudaPluginOptions& options = {});

} // namespace llmwb
