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

int32_t kv_dtype_bytes(KvDtype t) {
    return t == KvDtype::F16 ? 2 : 4;
}

const char* kv_dtype_name(KvDtype t) {
    return t == KvDtype::F16 ? "f16" : "f32";
}

int64_t kv_bytes_per_block(const ModelConfig& config, int32_t block_size, int32_t elem_bytes) {
    return 2 * static_cast<int64_t>(config.num_layers) * config.num_kv_heads * config.head_dim *
           block_size * elem_bytes;
}

} // namespace llmwb
