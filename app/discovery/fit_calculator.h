// "Will it fit": a model's weights + its KV cache at a chosen context and number of sequences +
// an activation/runtime overhead, against this machine's memory (the GPU's, or the RAM on the
// CPU), and what to set so that it does. Everything is computed from the numbers (the model's
// shape, the machine's bytes), never from a table of GPU names.
//
// KV cache: 2 (K and V) x layers x kv_heads x head_dim x tokens x bytes per element, plus for
// int8 one fp32 scale per token, KV head and layer for K and for V (kernels/cpu/kv_format.h).
// tokens = context x sequences. Sliding-window layers (gemma2/3, mistral) are counted in full:
// the engine's paged pool gives every layer a slot for every token of the pool
// (kv_bytes_per_block in engine/runtime/model_executor.h), so that is what it allocates.
//
// Overhead, documented here because it is an estimate:
//   - activations: the engine's own workspace estimate (estimate_workspace_bytes in
//     engine/serving/memory_plan.h) for a step of min(context x seqs, kFitStepTokens) token rows
//     and `seqs` logits rows;
//   - runtime: on a GPU kFitGpuRuntimeBytes (CUDA context, cuBLAS workspace, the plugin's
//     buffers; a CUDA context alone is 300-500 MiB), on the CPU kFitCpuRuntimeBytes (the
//     process, tokenizer, thread stacks and buffers).
// Budget: gpu_memory_utilization x memory, where memory is the GPU's total (vLLM's meaning) or, on
// the CPU, the RAM available now (MemAvailable), as the engine's memory plan defines them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/report/machine_probe.h"
#include "engine/model/model_config.h"
#include "kernels/cpu/kv_format.h"

namespace llmwb {

inline constexpr int64_t kFitStepTokens = 2048;
inline constexpr int64_t kFitGpuRuntimeBytes = int64_t(768) << 20;
inline constexpr int64_t kFitCpuRuntimeBytes = int64_t(256) << 20;
inline constexpr double kFitDefaultUtilization = 0.9;
inline constexpr double kFitMaxUtilization = 0.95;
inline constexpr int32_t kFitMaxSeqs = 256;

// KV bytes of `tokens` token slots (all layers, K and V) in `dtype`.
int64_t fit_kv_cache_bytes(const ModelConfig& config, int64_t tokens, KvDtype dtype);

struct FitDevice {
    bool gpu = false;
    std::string name;        // "CPU (avx2, 16 cores)" or the GPU's name
    int64_t total_bytes = 0; // GPU memory, or the RAM installed
    int64_t base_bytes = 0;  // what utilization multiplies: GPU total, or RAM available now
};

// The machine's memory as a fit target: its first GPU when it has one and `use_gpu`, else the
// CPU with the RAM available now.
FitDevice fit_device_for(const MachineFacts& machine, bool use_gpu);

struct FitRequest {
    int64_t context = 4096;
    int32_t seqs = 1;
    KvDtype kv_dtype = KvDtype::F16;
    double utilization = kFitDefaultUtilization;
};

struct FitEstimate {
    int64_t weight_bytes = 0, kv_bytes = 0, activation_bytes = 0, runtime_bytes = 0;
    int64_t need_bytes = 0;   // the sum
    int64_t budget_bytes = 0; // utilization x base
    bool fits = false;
    std::string reason; // one sentence in English (the CLI's; the panel composes its own)
};

// Weights + KV + overhead of `request` on `device`. `weight_bytes` as the file stores them.
FitEstimate estimate_fit(const ModelConfig& config, int64_t weight_bytes, const FitDevice& device,
                         const FitRequest& request);

// A quantization and the model's weights in it: parameters x bits per weight / 8, with the bits
// per weight of the project's own quantize targets (engine/model/quant_recipe.cpp's
// descriptions: Q8_0 8.5, Q6_K 6.5625, Q5_K_M 5.7, Q4_K_M 4.9, Q3_K_M 3.9) and F16 16.
struct FitQuantOption {
    std::string name;
    double bits_per_weight = 16;
};
const std::vector<FitQuantOption>& fit_quant_options(); // best quality first

struct FitAdvice {
    bool fits = false;                 // the request fits as asked (with the advised KV dtype)
    KvDtype kv_dtype = KvDtype::F16;   // the most precise of f16, int8, fp8_e4m3 that fits
    double gpu_memory_utilization = 0; // the smallest share that holds the request (+2% margin)
    int32_t max_num_seqs = 0;          // full-context sequences the budget holds (kv_dtype)
    // When the weights as stored do not fit the request: the best quantization that does, and
    // the longest context it allows with f16 KV (a power of two, at most the model's context);
    // empty when none does. "" also when the model fits as it is.
    std::string quantization;
    int64_t quantization_context = 0;
    std::string summary; // e.g. "Q4_K_M fits with 16k context" or "fits: f16 KV, 4 sequences"
};
FitAdvice advise_fit(const ModelConfig& config, int64_t weight_bytes, int64_t parameters,
                     const FitDevice& device, const FitRequest& request);

// "16k" for 16384, "4096" otherwise when not a multiple of 1024.
std::string fit_context_text(int64_t tokens);

} // namespace llmwb
