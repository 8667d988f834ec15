#include "engine/backend/cuda_plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace llmwb {

namespace {

std::string executable_dir() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        return {};
    return exe.parent_path().string();
}

std::string dl_error_text() {
    const char* e = dlerror();
    return e ? std::string(e) : std::string("unknown dlopen error");
}

} // namespace

std::vector<std::string> cuda_plugin_search_paths(const CudaPluginOptions& options) {
    if (!options.plugin_path.empty())
        return {options.plugin_path};
    std::vector<std::string> out;
    if (const char* env = std::getenv("LLMWB_CUDA_PLUGIN"); env && *env)
        return {env};
    const std::string dir = executable_dir();
    if (!dir.empty()) {
        out.push_back(dir + "/" + CudaPlugin::kLibraryName);
        out.push_back(dir + "/../lib/llmwb/" + CudaPlugin::kLibraryName);
    }
    return out;
}

Result<std::shared_ptr<CudaPlugin>> CudaPlugin::load(const CudaPluginOptions& options) {
    // The driver first: without it the plugin could load but nothing would run, and the
    // message "libcuda.so.1 not found" is the one a user can act on.
    std::string driver_library = options.driver_library;
    if (const char* env = std::getenv("LLMWB_CUDA_DRIVER");
        env && *env && driver_library == CudaPluginOptions{}.driver_library)
        driver_library = env;
    void* driver = dlopen(driver_library.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!driver)
        return make_error("no CUDA driver (" + driver_library + " not found)");
    dlclose(driver);

    std::string tried;
    std::string path;
    for (const std::string& p : cuda_plugin_search_paths(options)) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(p, ec)) {
            path = p;
            break;
        }
        tried += (tried.empty() ? "" : ", ") + p;
    }
    if (path.empty()) {
        // Appended piece by piece: GCC 12 warns (-Warray-bounds, a false positive) on the chain of
        // operator+ here.
        std::string msg = "CUDA plugin ";
        msg += kLibraryName;
        msg += " not found (looked at: ";
        msg += tried.empty() ? std::string("nothing") : tried;
        msg += "; set LLMWB_CUDA_PLUGIN to its path)";
        return make_error(msg);
    }
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return make_error("CUDA plugin " + path + ": " + dl_error_text());
    auto entry = reinterpret_cast<LlmwbCudaPluginEntry>(dlsym(h, LLMWB_CUDA_PLUGIN_SYMBOL));
    if (!entry) {
        dlclose(h);
        return make_error("CUDA plugin " + path + ": no symbol " + LLMWB_CUDA_PLUGIN_SYMBOL);
    }
    const LlmwbCudaApi* api = entry(LLMWB_CUDA_ABI_VERSION);
    if (!api || api->abi_version != LLMWB_CUDA_ABI_VERSION ||
        api->struct_size != sizeof(LlmwbCudaApi)) {
        dlclose(h);
        return make_error("CUDA plugin " + path + ": ABI version mismatch (the engine wants " +
                          std::to_string(LLMWB_CUDA_ABI_VERSION) + "; rebuild the plugin)");
    }
    std::shared_ptr<CudaPlugin> p(new CudaPlugin());
    p->handle_ = h;
    p->api_ = api;
    p->path_ = path;
    return p;
}

CudaPlugin::~CudaPlugin() {
    // The plugin is never unloaded: the CUDA runtime registers exit handlers that must stay
    // mapped until the process ends.
}

std::string CudaPlugin::last_error() const {
    const char* e = api_->last_error ? api_->last_error() : nullptr;
    return e && *e ? std::string(e) : std::string("unknown CUDA plugin error");
}

Result<std::vector<CudaDeviceInfo>> CudaPlugin::devices() const {
    const int n = api_->device_count();
    if (n < 0)
        return make_error("CUDA: " + last_error());
    std::vector<CudaDeviceInfo> out;
    for (int i = 0; i < n; ++i) {
        LlmwbDeviceInfo d{};
        if (api_->device_info(i, &d) != 0)
            return make_error("CUDA device " + std::to_string(i) + ": " + last_error());
        CudaDeviceInfo c;
        c.ordinal = i;
        d.name[sizeof(d.name) - 1] = '\0';
        c.name = d.name;
        c.total_bytes = d.total_bytes;
        c.free_bytes = d.free_bytes;
        c.cc_major = d.cc_major;
        c.cc_minor = d.cc_minor;
        c.multiprocessors = d.multiprocessors;
        c.memory_bandwidth_gbs = d.memory_bandwidth_gbs;
        out.push_back(std::move(c));
    }
    return out;
}

} // namespace llmwb
