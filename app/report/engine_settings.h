// Every engine setting of a benchmark run by vLLM's names (max_num_seqs, max_num_batched_tokens,
// block_size, gpu_memory_utilization, enable_prefix_caching, num_speculative_tokens, ...), plus
// what the memory plan made of them (num_gpu_blocks, kv_cache_dtype, the limit that decided the
// pool): the "engine" object of a run's settings and of environment.json.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/serving/engine.h"

namespace llmwb {

nlohmann::ordered_json engine_settings_json(const EngineConfig& config, const MemoryPlan& plan,
                                            const std::string& kv_dtype);

} // namespace llmwb
