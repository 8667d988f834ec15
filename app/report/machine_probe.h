// This machine's facts, for the first-run panel, Help -> About, `llmwb models` / `fit` and the
// benchmark reports' environment.json (environment.h): CPU model, logical and physical cores,
// the SIMD level the kernels dispatch to, RAM installed and available now (MemAvailable), OS,
// and the GPUs the CUDA plugin lists (name, memory, driver, compute capability).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmwb {

class CudaPlugin;

struct GpuFacts {
    std::string name;
    int64_t memory_bytes = 0, free_bytes = 0;
    std::string compute_capability; // "9.0"
    std::string driver;             // "560.35.03" ("" when /proc/driver/nvidia is absent)
};

struct MachineFacts {
    std::string cpu_model;      // "model name" of /proc/cpuinfo ("unknown")
    std::string simd_level;     // what the kernels use: scalar, avx2, avx512
    std::string cpu_simd_level; // the CPU's (differs when the kernels are held lower)
    int logical_cores = 0;
    int physical_cores = 0; // distinct (physical id, core id) of /proc/cpuinfo; else logical
    int64_t ram_bytes = 0;
    int64_t ram_available_bytes = 0; // MemAvailable now
    std::string os;                  // PRETTY_NAME of /etc/os-release
    std::string kernel;              // "Linux 6.1.0 x86_64"
    std::vector<GpuFacts> gpus;
    std::string gpu_note; // why there are no GPUs (the plugin's error), "" otherwise
};

// Probes the CPU, memory and OS; the GPUs through `plugin` when given (nullptr: no GPU probe,
// gpu_note says so).
MachineFacts probe_machine(const CudaPlugin* plugin);
// probe_machine with the CUDA plugin loaded from its usual places (gpu_note: why not).
MachineFacts probe_machine_with_cuda();

// The driver number of /proc/driver/nvidia/version ("" when there is none).
std::string nvidia_driver_version();
// Physical cores in a /proc/cpuinfo text (distinct "physical id"/"core id" pairs; 0 when the
// text has no core ids).
int physical_cores_in_cpuinfo(const std::string& cpuinfo);

} // namespace llmwb
