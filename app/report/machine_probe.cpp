// Machine facts from /proc, sysconf, uname and the CUDA plugin.
#include "app/report/machine_probe.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include "engine/backend/cuda_plugin.h"
#include "engine/runtime/host_memory.h"
#include "kernels/cpu/simd.h"

namespace llmwb {

namespace {

// The first `max_bytes` of a small system file ("" when it cannot be read).
std::string probe_read_small(const char* path, size_t max_bytes) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return {};
    std::string s(max_bytes, '\0');
    f.read(s.data(), static_cast<std::streamsize>(max_bytes));
    s.resize(static_cast<size_t>(std::max<std::streamsize>(0, f.gcount())));
    return s;
}

std::string probe_trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

// Calls f(key, value) for every "key : value" line.
template <typename F> void probe_each_line(const std::string& text, F&& f) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos)
            end = text.size();
        const std::string line = text.substr(pos, end - pos);
        pos = end + 1;
        const auto colon = line.find(':');
        if (colon == std::string::npos) {
            f(probe_trim(line), std::string());
            continue;
        }
        f(probe_trim(line.substr(0, colon)), probe_trim(line.substr(colon + 1)));
    }
}

std::string probe_value(const std::string& text, const std::string& key) {
    std::string out;
    bool found = false;
    probe_each_line(text, [&](const std::string& k, const std::string& v) {
        if (!found && k == key) {
            out = v;
            found = true;
        }
    });
    return out;
}

std::string probe_cpu_model(const std::string& info) {
    for (const char* key : {"model name", "Hardware", "Processor", "cpu model"})
        if (std::string v = probe_value(info, key); !v.empty())
            return v;
    return "unknown";
}

std::string probe_os_pretty_name() {
    for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
        const std::string text = probe_read_small(path, 64 << 10);
        size_t pos = 0;
        while (pos < text.size()) {
            size_t end = text.find('\n', pos);
            if (end == std::string::npos)
                end = text.size();
            std::string line = text.substr(pos, end - pos);
            pos = end + 1;
            if (line.rfind("PRETTY_NAME=", 0) != 0)
                continue;
            std::string v = probe_trim(line.substr(12));
            if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
                v = v.substr(1, v.size() - 2);
            return v;
        }
    }
    return "unknown";
}

int64_t probe_ram_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0)
        return static_cast<int64_t>(pages) * static_cast<int64_t>(page);
    return physical_memory_bytes();
}

} // namespace

int physical_cores_in_cpuinfo(const std::string& cpuinfo) {
    std::set<std::pair<std::string, std::string>> cores;
    std::string physical = "0";
    probe_each_line(cpuinfo, [&](const std::string& k, const std::string& v) {
        if (k == "physical id")
            physical = v;
        else if (k == "core id")
            cores.insert({physical, v});
        else if (k == "processor")
            physical = "0";
    });
    return static_cast<int>(cores.size());
}

std::string nvidia_driver_version() {
    std::ifstream f("/proc/driver/nvidia/version");
    std::string line;
    if (!f || !std::getline(f, line))
        return {};
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  560.35.03  ..."
    const auto k = line.find("Kernel Module");
    if (k == std::string::npos)
        return {};
    size_t b = line.find_first_not_of(' ', k + 13);
    if (b == std::string::npos)
        return {};
    const size_t e = line.find(' ', b);
    return line.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

MachineFacts probe_machine(const CudaPlugin* plugin) {
    using kernels::SimdLevel;
    MachineFacts m;
    const std::string info = probe_read_small("/proc/cpuinfo", 1 << 20);
    m.cpu_model = probe_cpu_model(info);
    const SimdLevel active = kernels::active_simd_level(), cpu = kernels::cpu_simd_level();
    m.simd_level = kernels::simd_level_name(active);
    m.cpu_simd_level = kernels::simd_level_name(cpu);
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    m.logical_cores = online > 0 ? static_cast<int>(online)
                                 : static_cast<int>(std::thread::hardware_concurrency());
    m.physical_cores = physical_cores_in_cpuinfo(info);
    if (m.physical_cores <= 0 || m.physical_cores > m.logical_cores)
        m.physical_cores = m.logical_cores;
    m.ram_bytes = probe_ram_bytes();
    m.ram_available_bytes = available_memory_bytes();
    m.os = probe_os_pretty_name();
    struct utsname u {};
    if (uname(&u) == 0)
        m.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
    if (!plugin) {
        m.gpu_note = "the CUDA plugin is not loaded";
        return m;
    }
    auto devices = plugin->devices();
    if (!devices) {
        m.gpu_note = devices.message();
        return m;
    }
    const std::string driver = nvidia_driver_version();
    for (const CudaDeviceInfo& d : *devices) {
        GpuFacts g;
        g.name = d.name;
        g.memory_bytes = d.total_bytes;
        g.free_bytes = d.free_bytes;
        g.compute_capability = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
        g.driver = driver;
        m.gpus.push_back(std::move(g));
    }
    if (m.gpus.empty())
        m.gpu_note = "the CUDA plugin lists no device";
    return m;
}

MachineFacts probe_machine_with_cuda() {
    auto plugin = CudaPlugin::load();
    if (!plugin) {
        MachineFacts m = probe_machine(nullptr);
        m.gpu_note = plugin.message();
        return m;
    }
    return probe_machine(plugin->get());
}

} // namespace llmwb
