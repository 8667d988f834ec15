#include "app/report/engine_settings.h"

namespace llmwb {

nlohmann::ordered_json engine_settings_json(const EngineConfig& c, const MemoryPlan& plan,
                                            const std::string& kv_dtype,
                                            const BenchRunOptions* run) {
    nlohmann::ordered_json j;
    j["scheduling_policy"] = scheduler_policy_name(c.policy);
    j["block_size"] = c.block_size;
    j["max_num_seqs"] = c.max_num_seqs;
    j["max_num_batched_tokens"] = c.max_num_batched_tokens;
    j["enable_prefix_caching"] = c.enable_prefix_caching;
    j["num_gpu_blocks"] = plan.num_blocks;
    j["kv_pool_limit"] = kv_pool_limit_name(plan.limit);
    if (c.memory.num_blocks)
        j["num_gpu_blocks_override"] = *c.memory.num_blocks;
    else if (c.memory.kv_bytes)
        j["kv_cache_memory_bytes"] = *c.memory.kv_bytes;
    else
        j["gpu_memory_utilization"] = c.memory.utilization;
    j["kv_cache_dtype"] = kv_dtype;
    const SpeculativeConfig& s = c.speculative;
    j["speculative_method"] =
        speculative_method_name(s.enabled() ? s.method : SpeculativeMethod::Off);
    j["num_speculative_tokens"] = s.enabled() ? s.num_speculative_tokens : 0;
    if (s.enabled()) {
        j["speculative_auto_k"] = s.auto_k;
        if (s.method == SpeculativeMethod::Ngram) {
            j["prompt_lookup_min"] = s.prompt_lookup_min;
            j["prompt_lookup_max"] = s.prompt_lookup_max;
        }
    }
    j["device_greedy"] = c.device_greedy;
    if (run && run->static_batches) {
        j["static_batch_size"] = run->batch_size;
        j["static_padding"] = run->static_padding;
    }
    return j;
}

} // namespace llmwb
