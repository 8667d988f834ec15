// Value types that describe a backend (what the app shows without knowing the executor): the
// kind of device and the element type of its KV cache.
#pragma once

#include <cstdint>

namespace llmwb {

enum class DeviceKind { Cpu, Cuda };
const char* device_kind_name(DeviceKind k); // "cpu", "cuda"

// Element type of the KV cache.
enum class KvDtype { F32, F16 };
int32_t kv_dtype_bytes(KvDtype t);
const char* kv_dtype_name(KvDtype t);

} // namespace llmwb
