// Perplexity of a token sequence under the model: every position's logits in one pass of
// chunked prefill (all-row logits), no sampling.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/model_executor.h"
#include "engine/util/result.h"

namespace llmwb {

struct PerplexityResult {
    int64_t tokens = 0;           // ids.size()
    std::vector<double> logprobs; // [tokens - 1]: log p(ids[i + 1] | ids[<= i])
    double mean_logprob = 0;
    double ppl = 0; // exp(-mean_logprob)
    double tokens_per_s = 0;
};

struct PerplexityOptions {
    int32_t chunk = 0; // tokens per forward; 0 = up to 512, limited so logits stay <= ~128 MB
};

// Errors: fewer than 2 tokens, ids outside the vocabulary, more tokens than the context
// (min(max_position, KV slots)). Uses KV blocks 0.. of `kv` in order.
Result<PerplexityResult> perplexity(CpuTransformer& model, KvCacheStorage& kv,
                                    std::span<const int32_t> ids,
                                    const PerplexityOptions& options = {});
// The same on any backend: uses KV blocks 0.. of the executor's pool (sized by the caller with
// resize_kv). Errors also: backend failures.
Result<PerplexityResult> perplexity(ModelExecutor& exec, std::span<const int32_t> ids,
                                    const PerplexityOptions& options = {});

} // namespace llmwb
