// Value types that describe a backend (what the app shows without knowing the executor): the
// kind of device and the element type of its KV cache.
#pragma once

#include <cstdint>

#include "kernels/cpu/kv_format.h" // KvDtype, kv_dtype_name, parse_kv_dtype

namespace llmwb {

enum class DeviceKind { Cpu, Cuda };
const char* device_kind_name(DeviceKind k); // "cpu", "cuda"

// KV-cache element types: kernels/cpu/kv_format.h.

} // namespace llmwb
