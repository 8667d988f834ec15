// CudaPlugin: finds and loads the CUDA backend plugin (libllmwb_cuda.so) at run time, so that the
// app and the CLI start and work on machines without CUDA: nothing but the plugin links the CUDA
// runtime or cuBLAS. The plugin's C ABI is kernels/cuda/plugin/plugin_api.h.
//
// Search order: CudaPluginOptions::plugin_path, $LLMWB_CUDA_PLUGIN, the executable's folder,
// <executable's folder>/../lib/llmwb. Before loading, the CUDA driver (libcuda.so.1) must be
// loadable; without it the error reads "no CUDA driver (libcuda.so.1 not found)".
// $LLMWB_CUDA_DRIVER replaces that default name: the tests of the emulated backend
// (kernels/cuda/sim), which needs no driver, point it at the emulator plugin itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/util/result.h"
#include "kernels/cuda/plugin/plugin_api.h"

namespace llmwb {

struct CudaPluginOptions {
    std::string plugin_path;                     // empty: search as above
    std::string driver_library = "libcuda.so.1"; // probed first (tests point it elsewhere)
};

struct CudaDeviceInfo {
    int32_t ordinal = 0;
    std::string name;
    int64_t total_bytes = 0, free_bytes = 0;
    int32_t cc_major = 0, cc_minor = 0;
    int32_t multiprocessors = 0;
    double memory_bandwidth_gbs = 0;
};

class CudaPlugin {
  public:
    static constexpr const char* kLibraryName = "libllmwb_cuda.so";

    // Errors: driver missing, plugin not found (lists the places searched), dlopen/dlsym
    // failures, ABI version mismatch.
    static Result<std::shared_ptr<CudaPlugin>> load(const CudaPluginOptions& options = {});

    ~CudaPlugin();
    CudaPlugin(const CudaPlugin&) = delete;
    CudaPlugin& operator=(const CudaPlugin&) = delete;

    const LlmwbCudaApi& api() const { return *api_; }
    const std::string& path() const { return path_; }
    // The plugin's last error text (never null).
    std::string last_error() const;

    // Every CUDA device; an error when the runtime fails (e.g. no device, driver too old).
    Result<std::vector<CudaDeviceInfo>> devices() const;

  private:
    CudaPlugin() = default;
    void* handle_ = nullptr;
    const LlmwbCudaApi* api_ = nullptr;
    std::string path_;
};

// The candidate paths of the search above (for messages and tests).
std::vector<std::string> cuda_plugin_search_paths(const CudaPluginOptions& options);

} // namespace llmwb
