// fp8 KV-cache scales calibrated on a short text, as vLLM's calculate_kv_scales does: the
// largest |K| and |V| of each layer over the text (ModelExecutor::kv_absmax), mapped below the
// fp8 type's largest value with headroom for values the text did not reach.
#pragma once

#include <cstdint>
#include <span>

#include "engine/runtime/model_executor.h"
#include "engine/util/result.h"

namespace llmwb {

class Tokenizer;

// Per-layer scales for `fp8` (Fp8E4M3 or Fp8E5M2) from the executor's K/V ranges over `tokens`.
Result<KvScales> calibrate_kv_scales(ModelExecutor& exec, std::span<const int32_t> tokens,
                                     KvDtype fp8);
// The same over the built-in calibration text, tokenized with the model's tokenizer.
Result<KvScales> calibrate_kv_scales(ModelExecutor& exec, const Tokenizer& tokenizer, KvDtype fp8);

} // namespace llmwb
