// environment.json: the machine (CPU, SIMD level, cores, RAM, OS), the app (version, commit),
// the model file (name, size, SHA-256) and the engine a benchmark ran with. SHA-256 is this
// file's own (FIPS 180-4), fed in 1 MiB chunks.
#include "app/report/environment.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "app/report/git_commit.h" // generated: LLMWB_GIT_COMMIT
#include "app/report/machine_probe.h"
#include "engine/backend/cuda_plugin.h"

#ifndef LLMWB_APP_VERSION
#define LLMWB_APP_VERSION "unknown"
#endif

namespace llmwb {

namespace {

namespace fs = std::filesystem;

// FIPS 180-4 SHA-256, incremental.
class Sha256 {
  public:
    void update(const unsigned char* p, size_t n) {
        total_ += n;
        while (n > 0) {
            const size_t take = std::min(n, buf_.size() - used_);
            std::memcpy(buf_.data() + used_, p, take);
            used_ += take;
            p += take;
            n -= take;
            if (used_ == buf_.size()) {
                block(buf_.data());
                used_ = 0;
            }
        }
    }

    std::string hex() {
        const uint64_t bits = total_ * 8;
        const unsigned char one = 0x80;
        update(&one, 1);
        const unsigned char zero = 0;
        while (used_ != 56)
            update(&zero, 1);
        unsigned char len[8];
        for (int i = 0; i < 8; ++i)
            len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
        update(len, 8);
        static const char* digits = "0123456789abcdef";
        std::string out;
        for (uint32_t w : h_)
            for (int s = 28; s >= 0; s -= 4)
                out += digits[(w >> s) & 0xf];
        return out;
    }

  private:
    static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

    void block(const unsigned char* p) {
        static constexpr uint32_t k[64] = {
            0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
            0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
            0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
            0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
            0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
            0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
            0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
            0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
            0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
            0xc67178f2};
        uint32_t w[64];
        for (int t = 0; t < 16; ++t)
            w[t] = (uint32_t(p[4 * t]) << 24) | (uint32_t(p[4 * t + 1]) << 16) |
                   (uint32_t(p[4 * t + 2]) << 8) | uint32_t(p[4 * t + 3]);
        for (int t = 16; t < 64; ++t) {
            const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
            const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6],
                 h = h_[7];
        for (int t = 0; t < 64; ++t) {
            const uint32_t t1 =
                h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[t] + w[t];
            const uint32_t t2 =
                (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        h_[0] += a;
        h_[1] += b;
        h_[2] += c;
        h_[3] += d;
        h_[4] += e;
        h_[5] += f;
        h_[6] += g;
        h_[7] += h;
    }

    std::array<uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::array<unsigned char, 64> buf_{};
    size_t used_ = 0;
    uint64_t total_ = 0;
};

constexpr size_t kChunk = 1 << 20;

// Feeds a whole file into `h`, 1 MiB at a time.
Status hash_file_into(const std::string& path, Sha256& h, std::vector<unsigned char>& buf) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return make_error(path + ": cannot open");
    buf.resize(kChunk);
    while (f) {
        f.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
        const std::streamsize got = f.gcount();
        if (got > 0)
            h.update(buf.data(), static_cast<size_t>(got));
    }
    if (f.bad())
        return make_error(path + ": read error");
    return ok_status();
}

// The weight files of a model folder: *.safetensors directly in it, in name order.
constexpr size_t kMaxWeightFiles = 4096;

std::vector<fs::path> weight_files(const fs::path& dir, std::string* error) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() != ".safetensors" || !it->is_regular_file(ec))
            continue;
        if (files.size() >= kMaxWeightFiles) {
            *error =
                dir.string() + ": more than " + std::to_string(kMaxWeightFiles) + " weight files";
            return {};
        }
        files.push_back(it->path());
    }
    if (ec)
        *error = dir.string() + ": " + ec.message();
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    return files;
}

// model_file, model_size_bytes, model_sha256 (+ model_sha256_of) of a file or folder.
void describe_model(const std::string& path, bool hash, nlohmann::ordered_json& j) {
    std::error_code ec;
    const fs::path p(path);
    std::string name = p.filename().string();
    if (name.empty()) // "dir/"
        name = p.parent_path().filename().string();
    j["model_file"] = name;
    if (fs::is_directory(p, ec)) {
        std::string err;
        const std::vector<fs::path> files = weight_files(p, &err);
        int64_t size = 0;
        nlohmann::ordered_json names = nlohmann::ordered_json::array();
        for (const fs::path& f : files) {
            size += static_cast<int64_t>(fs::file_size(f, ec));
            names.push_back(f.filename().string());
        }
        j["model_size_bytes"] = size;
        if (!err.empty()) {
            j["model_error"] = err;
            return;
        }
        if (files.empty()) {
            j["model_error"] = name + ": no *.safetensors files";
            return;
        }
        if (!hash)
            return;
        // One SHA-256 over the weight files' bytes, concatenated in name order (what
        // `cat $(ls *.safetensors) | sha256sum` prints).
        Sha256 h;
        std::vector<unsigned char> buf;
        for (const fs::path& f : files)
            if (Status st = hash_file_into(f.string(), h, buf); !st) {
                j["model_error"] = st.message();
                return;
            }
        j["model_sha256"] = h.hex();
        j["model_sha256_of"] = std::move(names);
        return;
    }
    const auto size = fs::file_size(p, ec);
    if (ec) {
        j["model_error"] = name + ": " + ec.message();
        return;
    }
    j["model_size_bytes"] = static_cast<int64_t>(size);
    if (!hash)
        return;
    auto sha = file_sha256(path);
    if (!sha) {
        j["model_error"] = sha.message();
        return;
    }
    j["model_sha256"] = *sha;
}

} // namespace

std::string sha256_hex(std::string_view bytes) {
    Sha256 h;
    h.update(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    return h.hex();
}

Result<std::string> file_sha256(const std::string& path) {
    Sha256 h;
    std::vector<unsigned char> buf;
    if (Status st = hash_file_into(path, h, buf); !st)
        return st.error();
    return h.hex();
}

nlohmann::ordered_json probe_environment(const EnvironmentInputs& in, bool hash_model) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    const MachineFacts m = probe_machine(nullptr);
    j["cpu_model"] = m.cpu_model;
    j["simd_level"] = m.simd_level;
    if (m.cpu_simd_level != m.simd_level)
        j["cpu_simd_level"] = m.cpu_simd_level;
    j["logical_cores"] = m.logical_cores;
    j["physical_cores"] = m.physical_cores;
    if (in.threads > 0)
        j["threads"] = in.threads;
    j["ram_bytes"] = m.ram_bytes;
    j["ram_available_bytes"] = m.ram_available_bytes;
    j["os"] = m.os;
    if (!m.kernel.empty())
        j["kernel"] = m.kernel;
    if (!in.gpu_name.empty()) {
        j["gpu_name"] = in.gpu_name;
        j["gpu_driver"] = in.gpu_driver;
        j["gpu_compute_capability"] = in.gpu_compute_capability;
        j["gpu_memory_bytes"] = in.gpu_memory_bytes;
    }
    j["app_version"] = LLMWB_APP_VERSION;
    j["app_commit"] = LLMWB_GIT_COMMIT;
    j["model_name"] = in.model_name;
    if (!in.model_path.empty())
        describe_model(in.model_path, hash_model, j);
    j["weight_dtype"] = in.weight_dtype;
    j["kv_dtype"] = in.kv_dtype;
    j["device"] = in.device;
    j["engine"] =
        in.engine_settings.is_object() ? in.engine_settings : nlohmann::ordered_json::object();
    return j;
}

void describe_cuda_device(EnvironmentInputs& in, const CudaPlugin& plugin) {
    auto devices = plugin.devices();
    if (!devices || devices->empty())
        return;
    const CudaDeviceInfo& d = devices->front();
    in.gpu_name = d.name;
    in.gpu_memory_bytes = d.total_bytes;
    in.gpu_compute_capability = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
    in.gpu_driver = nvidia_driver_version();
}

} // namespace llmwb
