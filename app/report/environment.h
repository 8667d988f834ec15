// environment.json: the machine and the model a benchmark ran on, so that a colleague reading a
// report (or a user comparing two machines) knows what the figures mean.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/util/result.h"

namespace llmwb {

class CudaPlugin;

struct EnvironmentInputs {
    std::string model_path; // file or folder (the name is written; the path is not)
    std::string model_name;
    std::string weight_dtype; // "Q8_0", "F16", "Q4_K_M", ...
    std::string kv_dtype;     // "f32", "f16", ...
    std::string device;       // the executor's device name ("CPU (AVX-512, 16 threads)")
    // GPU facts when the model runs on CUDA ("" / 0 when not).
    std::string gpu_name, gpu_driver, gpu_compute_capability;
    int64_t gpu_memory_bytes = 0;
    int32_t threads = 0; // CPU backend threads
    nlohmann::ordered_json engine_settings = nlohmann::ordered_json::object(); // by vLLM's names
};

// The GPU facts of the plugin's first device (name, memory, compute capability) and the
// driver's version (/proc/driver/nvidia/version); nothing when it lists no device.
void describe_cuda_device(EnvironmentInputs& in, const CudaPlugin& plugin);

// Probes the machine (CPU model and SIMD level from kernels' runtime dispatch, cores, RAM, OS
// and kernel, app version and commit) and adds the inputs. Hashes the model file (SHA-256; for
// a folder, its weight files in name order) unless hash_model is false.
// Keys, in this order (those in brackets only when known or given):
//   cpu_model ("model name" of /proc/cpuinfo), simd_level (what the kernels use: scalar, avx2,
//   avx512), [cpu_simd_level] (the CPU's, when the kernels were held lower), logical_cores,
//   physical_cores, [threads], ram_bytes, ram_available_bytes (MemAvailable; machine_probe.h), os
//   (PRETTY_NAME of /etc/os-release), [kernel] ("Linux 6.1.0 x86_64"), [gpu_name, gpu_driver,
//   gpu_compute_capability, gpu_memory_bytes], app_version, app_commit (12 hex digits, "-dirty"
//   with uncommitted changes; "unknown" outside a git checkout), model_name, [model_file] (the file
//   or folder name, never the path), [model_size_bytes], [model_sha256] (a folder: one hash over
//   its *.safetensors concatenated in name order, what `cat $(ls *.safetensors) | sha256sum`
//   prints, with [model_sha256_of] listing them), [model_error] (why there is no size or hash),
//   weight_dtype, kv_dtype, device, engine.
nlohmann::ordered_json probe_environment(const EnvironmentInputs& in, bool hash_model = true);

// SHA-256 of a file, in lowercase hex, read in bounded chunks. Errors name the file.
Result<std::string> file_sha256(const std::string& path);
// SHA-256 of bytes (tests compare against FIPS 180-2's vectors).
std::string sha256_hex(std::string_view bytes);

} // namespace llmwb
