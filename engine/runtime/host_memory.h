// This machine's memory, for memory plans on the CPU backend.
#pragma once

#include <cstdint>

namespace llmwb {

// Physical memory of this machine in bytes (0 if unknown).
int64_t physical_memory_bytes();
// Memory available to a new allocation now (Linux MemAvailable; 0 if unknown).
int64_t available_memory_bytes();

} // namespace llmwb
