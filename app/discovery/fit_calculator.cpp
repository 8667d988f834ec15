// The fit calculator: bytes of weights, KV cache and overhead against a memory budget, and the
// settings (KV dtype, utilization, sequences, quantization) that make a model fit.
#include "app/discovery/fit_calculator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "engine/serving/memory_plan.h"

namespace llmwb {

namespace {

constexpr int64_t kFitByteCap = std::numeric_limits<int64_t>::max() / 4;

// a x b, saturated at kFitByteCap (hostile shapes must not overflow).
int64_t fit_mul(int64_t a, int64_t b) {
    if (a <= 0 || b <= 0)
        return 0;
    if (a > kFitByteCap / b)
        return kFitByteCap;
    return a * b;
}

int64_t fit_add(int64_t a, int64_t b) {
    return std::min(kFitByteCap, std::max<int64_t>(0, a) + std::max<int64_t>(0, b));
}

std::string fit_gib(int64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(int64_t(1) << 30));
    return buf;
}

int64_t fit_budget(const FitDevice& device, double utilization) {
    const double u = std::clamp(utilization, 0.0, 1.0);
    return static_cast<int64_t>(u * double(std::max<int64_t>(0, device.base_bytes)));
}

// The longest context (at most the model's) that fits `request` otherwise; 0 when none.
int64_t fit_max_context(const ModelConfig& config, int64_t weight_bytes, const FitDevice& device,
                        FitRequest request) {
    int64_t lo = 0, hi = std::max<int64_t>(1, config.max_position);
    while (lo < hi) { // largest ctx in [0, hi] that fits; fits() is monotone in ctx
        const int64_t mid = lo + (hi - lo + 1) / 2;
        request.context = mid;
        if (estimate_fit(config, weight_bytes, device, request).fits)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

// Rounds a context down to a power of two (the model's own context stays as it is).
int64_t fit_round_context(int64_t ctx, int64_t model_context) {
    if (ctx <= 0 || ctx >= model_context)
        return std::max<int64_t>(0, std::min(ctx, model_context));
    int64_t p = 1;
    while (p * 2 <= ctx)
        p *= 2;
    return p;
}

} // namespace

int64_t fit_kv_cache_bytes(const ModelConfig& config, int64_t tokens, KvDtype dtype) {
    // Per token and layer: K and V, each kv_heads x head_dim elements (+ int8's row scales).
    int64_t per_layer_token =
        2 * fit_mul(fit_mul(config.num_kv_heads, config.head_dim), kv_dtype_elem_bytes(dtype));
    if (kv_dtype_has_row_scales(dtype))
        per_layer_token = fit_add(per_layer_token, fit_mul(2 * int64_t(config.num_kv_heads), 4));
    return fit_mul(fit_mul(per_layer_token, config.num_layers), tokens);
}

FitEstimate estimate_fit(const ModelConfig& config, int64_t weight_bytes, const FitDevice& device,
                         const FitRequest& request) {
    FitEstimate e;
    const int64_t context = std::max<int64_t>(1, request.context);
    const int32_t seqs = std::max<int32_t>(1, request.seqs);
    const int64_t tokens = fit_mul(context, seqs);
    e.weight_bytes = std::max<int64_t>(0, weight_bytes);
    e.kv_bytes = fit_kv_cache_bytes(config, tokens, request.kv_dtype);
    const int32_t step = static_cast<int32_t>(std::min(tokens, kFitStepTokens));
    e.activation_bytes = estimate_workspace_bytes(config, step, seqs);
    e.runtime_bytes = device.gpu ? kFitGpuRuntimeBytes : kFitCpuRuntimeBytes;
    e.need_bytes =
        fit_add(fit_add(e.weight_bytes, e.kv_bytes), fit_add(e.activation_bytes, e.runtime_bytes));
    e.budget_bytes = fit_budget(device, request.utilization);
    e.fits = e.budget_bytes > 0 && e.need_bytes <= e.budget_bytes;
    char util[16];
    std::snprintf(util, sizeof util, "%.2f", request.utilization);
    const std::string parts = " (weights " + fit_gib(e.weight_bytes) + " + KV " +
                              fit_gib(e.kv_bytes) + " + overhead " +
                              fit_gib(e.activation_bytes + e.runtime_bytes) + ")";
    const std::string of = std::string(util) + " x " + fit_gib(device.base_bytes) +
                           (device.gpu ? " of GPU memory" : " of available RAM");
    if (e.budget_bytes <= 0)
        e.reason = "the memory of " + device.name + " is unknown";
    else if (e.fits)
        e.reason = "needs " + fit_gib(e.need_bytes) + parts + " of " + fit_gib(e.budget_bytes) +
                   " (" + of + ")";
    else
        e.reason = "needs " + fit_gib(e.need_bytes) + parts + ", more than " +
                   fit_gib(e.budget_bytes) + " (" + of + ")";
    return e;
}

FitDevice fit_device_for(const MachineFacts& machine, bool use_gpu) {
    FitDevice d;
    if (use_gpu && !machine.gpus.empty()) {
        const GpuFacts& g = machine.gpus.front();
        d.gpu = true;
        d.name = g.name;
        d.total_bytes = d.base_bytes = g.memory_bytes;
        return d;
    }
    d.name =
        "CPU (" + machine.simd_level + ", " + std::to_string(machine.physical_cores) + " cores)";
    d.total_bytes = machine.ram_bytes;
    d.base_bytes = machine.ram_available_bytes;
    return d;
}

const std::vector<FitQuantOption>& fit_quant_options() {
    static const std::vector<FitQuantOption> options = {
        {"F16", 16.0},   {"Q8_0", 8.5},   {"Q6_K", 6.5625},
        {"Q5_K_M", 5.7}, {"Q4_K_M", 4.9}, {"Q3_K_M", 3.9},
    };
    return options;
}

std::string fit_context_text(int64_t tokens) {
    if (tokens >= 1024 && tokens % 1024 == 0)
        return std::to_string(tokens / 1024) + "k";
    return std::to_string(tokens);
}

FitAdvice advise_fit(const ModelConfig& config, int64_t weight_bytes, int64_t parameters,
                     const FitDevice& device, const FitRequest& request) {
    FitAdvice a;
    a.kv_dtype = request.kv_dtype;
    FitEstimate chosen;
    for (KvDtype t : {KvDtype::F16, KvDtype::Int8, KvDtype::Fp8E4M3}) {
        FitRequest r = request;
        r.kv_dtype = t;
        FitEstimate e = estimate_fit(config, weight_bytes, device, r);
        if (e.fits) {
            a.fits = true;
            a.kv_dtype = t;
            chosen = e;
            break;
        }
    }
    const int64_t context = std::max<int64_t>(1, request.context);
    if (a.fits) {
        const double share =
            double(chosen.need_bytes) / double(std::max<int64_t>(1, device.base_bytes));
        a.gpu_memory_utilization =
            std::min(kFitMaxUtilization, std::ceil((share + 0.02) * 100.0) / 100.0);
        // Full-context sequences the request's budget holds besides weights and overhead.
        const int64_t fixed = chosen.weight_bytes + chosen.activation_bytes + chosen.runtime_bytes;
        const int64_t per_seq = fit_kv_cache_bytes(config, context, a.kv_dtype);
        if (per_seq > 0 && chosen.budget_bytes > fixed)
            a.max_num_seqs = static_cast<int32_t>(
                std::min<int64_t>(kFitMaxSeqs, (chosen.budget_bytes - fixed) / per_seq));
        a.summary = std::string("fits: ") + kv_dtype_name(a.kv_dtype) + " KV, up to " +
                    std::to_string(a.max_num_seqs) +
                    (a.max_num_seqs == 1 ? " sequence of " : " sequences of ") +
                    fit_context_text(context);
        return a;
    }
    // Too big as stored: the best quantization (smaller than the file) that fits the request
    // with f16 KV, or else the smallest one with the longest context it allows.
    const auto& options = fit_quant_options();
    FitRequest f16 = request;
    f16.kv_dtype = KvDtype::F16;
    for (const FitQuantOption& q : options) {
        const int64_t qbytes = static_cast<int64_t>(double(parameters) * q.bits_per_weight / 8.0);
        if (parameters <= 0 || qbytes >= weight_bytes)
            continue;
        const int64_t ctx = fit_max_context(config, qbytes, device, f16);
        const bool last = &q == &options.back();
        if (ctx >= context || (last && ctx >= 512)) {
            a.quantization = q.name;
            a.quantization_context = fit_round_context(ctx, std::max(1, config.max_position));
            break;
        }
    }
    if (!a.quantization.empty())
        a.summary =
            a.quantization + " fits with " + fit_context_text(a.quantization_context) + " context";
    else
        a.summary = "does not fit this machine";
    return a;
}

} // namespace llmwb
