#include "engine/runtime/kv_calibration.h"

#include <cmath>
#include <string>

#include "engine/tokenizer/tokenizer.h"

namespace llmwb {

namespace {

// A short mixed text (prose, a list, code, numbers, another language), written for this project:
// K/V ranges depend on what the tokens are, so the text covers the common kinds.
constexpr const char* kCalibrationText =
    "The workbench runs a language model on your own machine. Each step it reads the weights, "
    "computes keys and values for the new tokens and stores them in the paged cache, then "
    "attends over everything the sequence has seen so far.\n\n"
    "Things to check before a long run:\n"
    "1. How much memory the cache may use (gpu_memory_utilization = 0.90).\n"
    "2. The longest context you need: 4096, 32768 or 131072 tokens.\n"
    "3. Whether 8-bit keys and values are good enough for your task.\n\n"
    "def moving_average(xs, n):\n"
    "    out = []\n"
    "    for i in range(len(xs) - n + 1):\n"
    "        out.append(sum(xs[i:i + n]) / n)\n"
    "    return out\n\n"
    "print(moving_average([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5], 3))\n\n"
    "Q: A train leaves at 14:25 and arrives at 17:05. How long is the trip?\n"
    "A: Two hours and forty minutes, or 160 minutes.\n\n"
    "Le cache de clés et de valeurs grandit avec le contexte ; à long contexte il dépasse "
    "souvent la taille des poids. 缓存按块分配，每块十六个词元。\n";

} // namespace

Result<KvScales> calibrate_kv_scales(ModelExecutor& exec, std::span<const int32_t> tokens,
                                     KvDtype fp8) {
    if (!kv_dtype_is_fp8(fp8))
        return make_error(std::string("KV calibration: ") + kv_dtype_name(fp8) +
                          " has no per-layer scales");
    auto amax = exec.kv_absmax(tokens);
    if (!amax)
        return amax.error();
    // The largest value seen maps to half the type's range: values up to twice the text's
    // largest still fit without saturating (vLLM's constants leave similar room).
    const float target = kv_fp8_max(fp8) / 2;
    KvScales s;
    auto scale_of = [&](float a) { return a > 0 && std::isfinite(a) ? a / target : 1.0f; };
    for (float a : amax->k)
        s.k.push_back(scale_of(a));
    for (float a : amax->v)
        s.v.push_back(scale_of(a));
    return s;
}

Result<KvScales> calibrate_kv_scales(ModelExecutor& exec, const Tokenizer& tokenizer, KvDtype fp8) {
    const std::vector<int32_t> ids = tokenizer.encode(kCalibrationText, true);
    return calibrate_kv_scales(exec, ids, fp8);
}

} // namespace llmwb
