// Every engine setting of a benchmark run by vLLM's names (max_num_seqs, max_num_batched_tokens,
// block_size, gpu_memory_utilization, enable_prefix_caching, num_speculative_tokens, ...), plus
// what the memory plan made of them (num_gpu_blocks, the limit that decided the pool,
// kv_cache_dtype) and a static batch's shape: the "engine" object of a run's settings and of
// environment.json. One function for the CLI and the app, so that their reports compare.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/serving/bench_runner.h"
#include "engine/serving/engine.h"

namespace llmwb {

// `run`: the run's options (its static batch size and padding), or null.
nlohmann::ordered_json engine_settings_json(const EngineConfig& config, const MemoryPlan& plan,
                                            const std::string& kv_dtype,
                                            const BenchRunOptions* run = nullptr);

} // namespace llmwb
