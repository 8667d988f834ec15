#include "engine/runtime/model_executor.h"

namespace llmwb {

const char* device_kind_name(DeviceKind k) {
    switch (k) {
    case DeviceKind::Cpu:
        return "cpu";
    case DeviceKind::Cuda:
        return "cuda";
    }
    return "?";
}

int64_t kv_bytes_per_block(const ModelConfig& config, int32_t block_size, KvDtype dtype) {
    const KvLayout l{dtype, block_size, config.num_kv_heads, config.head_dim};
    return 2 * static_cast<int64_t>(config.num_layers) * l.block_bytes();
}

} // namespace llmwb
