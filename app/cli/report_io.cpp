#include "app/cli/report_io.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "app/report/report_files.h"

#ifdef LLMWB_HAVE_REPORT_ZIP
#include "app/report/zip/report_zip.h"
#endif

namespace llmwb::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kNoZip =
    "this llmwb was built without zip support (no Qt/QuaZip); give a folder";

// Writes `bytes` to `path` through a temporary name in the same folder.
Status write_file_atomic(const fs::path& path, const std::string& bytes) {
    const fs::path tmp = path.string() + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f)
            return make_error(path.string() + ": cannot write");
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        f.close();
        if (!f) {
            std::error_code ec;
            fs::remove(tmp, ec);
            return make_error(path.string() + ": cannot write (disk full?)");
        }
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return make_error(path.string() + ": cannot write: " + ec.message());
    }
    return ok_status();
}

// A file of a report folder: a regular file of at most `limit` bytes (read at most limit + 1).
Result<std::string> read_bounded(const fs::path& path, int64_t limit) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        return make_error(path.string() + ": not a regular file");
    auto too_large = [&] {
        return make_error(path.string() + ": larger than " + std::to_string(limit >> 20) + " MiB");
    };
    if (const auto size = fs::file_size(path, ec); !ec && size > static_cast<uintmax_t>(limit))
        return too_large();
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return make_error(path.string() + ": cannot open");
    std::string out;
    std::string buf(1 << 20, '\0');
    while (f) {
        f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        out.append(buf.data(), static_cast<size_t>(f.gcount()));
        if (static_cast<int64_t>(out.size()) > limit) // it grew while being read
            return too_large();
    }
    if (f.bad())
        return make_error(path.string() + ": read error");
    return out;
}

std::string str_of(const nlohmann::ordered_json& env, const char* key) {
    auto it = env.find(key);
    return it != env.end() && it->is_string() ? terminal_safe(it->get<std::string>())
                                              : std::string();
}

double num_of(const nlohmann::ordered_json& env, const char* key) {
    auto it = env.find(key);
    return it != env.end() && it->is_number() ? it->get<double>() : 0.0;
}

} // namespace

std::string terminal_safe(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            out += c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
            ++i;
            continue;
        }
        // A well-formed UTF-8 sequence (no overlong forms, no surrogates, <= U+10FFFF).
        const size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
        bool ok = n > 0 && c <= 0xf4 && i + n <= text.size();
        uint32_t cp = n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
        for (size_t k = 1; ok && k < n; ++k) {
            const auto cc = static_cast<unsigned char>(text[i + k]);
            ok = (cc & 0xc0) == 0x80;
            cp = (cp << 6) | (cc & 0x3f);
        }
        ok = ok && !(n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) &&
             !(n == 4 && (cp < 0x10000 || cp > 0x10ffff));
        if (!ok) {
            out += '?';
            ++i;
            continue;
        }
        if (cp >= 0x80 && cp <= 0x9f) // C1 controls (0x9b is a CSI)
            out += '?';
        else
            out.append(text.substr(i, n));
        i += n;
    }
    return out;
}

void make_terminal_safe(BenchReport& report) {
    report.title = terminal_safe(report.title);
    for (BenchRun& run : report.runs)
        for (std::string* s : {&run.name, &run.policy, &run.error, &run.date, &run.model_id,
                               &run.backend, &run.sweep_setting, &run.percentile_metrics})
            *s = terminal_safe(*s);
}

bool report_is_zip(const std::string& path) {
    if (path.size() < 4)
        return false;
    std::string ext = path.substr(path.size() - 4);
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == ".zip";
}

bool have_report_zip() {
#ifdef LLMWB_HAVE_REPORT_ZIP
    return true;
#else
    return false;
#endif
}

Status check_report_target(const std::string& out) {
    std::error_code ec;
    const fs::path p(out);
    if (report_is_zip(out)) {
        if (!have_report_zip())
            return make_error(out + ": " + kNoZip);
        if (fs::is_directory(p, ec))
            return make_error(out + ": is a folder");
        const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
        if (!fs::is_directory(dir, ec))
            return make_error(out + ": no folder " + dir.string());
        return ok_status();
    }
    if (fs::exists(p, ec) && !fs::is_directory(p, ec))
        return make_error(out + ": exists and is not a folder (a zip report needs a name ending "
                                "in .zip)");
    return ok_status();
}

Status write_report(const std::string& out, const BenchReport& report) {
    if (Status st = check_report_target(out); !st)
        return st;
    const ReportFiles files = report_files(report);
    if (report_is_zip(out)) {
#ifdef LLMWB_HAVE_REPORT_ZIP
        return write_report_zip(out, files);
#else
        return make_error(out + ": " + kNoZip);
#endif
    }
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec)
        return make_error(out + ": cannot create the folder: " + ec.message());
    for (const auto& [name, bytes] : files)
        if (Status st = write_file_atomic(fs::path(out) / name, bytes); !st)
            return st;
    return ok_status();
}

Result<BenchReport> read_report(const std::string& path) {
    std::error_code ec;
    const fs::path p(path);
    if (!fs::exists(p, ec))
        return make_error(path + ": no such file or folder");
    if (fs::is_directory(p, ec)) {
        ReportFiles files;
        int64_t total = 0;
        for (const char* name :
             {kReportResults, kReportRequests, kReportSteps, kReportEnvironment, kReportHtml}) {
            const fs::path f = p / name;
            if (!fs::exists(f, ec))
                continue; // parse_report_files names a missing file it needs
            auto bytes = read_bounded(f, kMaxReportFileBytes);
            if (!bytes)
                return bytes.error();
            total += static_cast<int64_t>(bytes->size());
            if (total > kMaxReportTotalBytes)
                return make_error(path + ": the report's files are larger than " +
                                  std::to_string(kMaxReportTotalBytes >> 20) + " MiB");
            files.emplace_back(name, std::move(bytes.value()));
        }
        if (files.empty())
            return make_error(path + ": not a report (none of " + kReportResults + ", " +
                              kReportRequests + ", " + kReportSteps + ", " + kReportEnvironment +
                              ")");
        auto report = parse_report_files(files);
        if (!report)
            return make_error(path + ": " + report.message());
        return report;
    }
#ifdef LLMWB_HAVE_REPORT_ZIP
    auto files = read_report_zip(path);
    if (!files)
        return files.error();
    auto report = parse_report_files(*files);
    if (!report)
        return make_error(path + ": " + report.message());
    return report;
#else
    return make_error(path + ": " + kNoZip);
#endif
}

std::string environment_summary(const nlohmann::ordered_json& env) {
    if (!env.is_object())
        return {};
    std::string out;
    char buf[512];
    const std::string cpu = str_of(env, "cpu_model"), simd = str_of(env, "simd_level");
    if (!cpu.empty()) {
        std::snprintf(buf, sizeof buf, "%-16s %s%s%s, %.0f logical cores, %.1f GiB RAM\n",
                      "Machine:", cpu.c_str(), simd.empty() ? "" : " (",
                      simd.empty() ? "" : (simd + ")").c_str(), num_of(env, "logical_cores"),
                      num_of(env, "ram_bytes") / 1073741824.0);
        out += buf;
    }
    if (const std::string gpu = str_of(env, "gpu_name"); !gpu.empty()) {
        std::snprintf(buf, sizeof buf, "%-16s %s, %.1f GiB, compute %s, driver %s\n",
                      "GPU:", gpu.c_str(), num_of(env, "gpu_memory_bytes") / 1073741824.0,
                      str_of(env, "gpu_compute_capability").c_str(),
                      str_of(env, "gpu_driver").c_str());
        out += buf;
    }
    if (const std::string os = str_of(env, "os"); !os.empty()) {
        const std::string kernel = str_of(env, "kernel");
        std::snprintf(buf, sizeof buf, "%-16s %s%s%s\n", "OS:", os.c_str(),
                      kernel.empty() ? "" : ", ", kernel.c_str());
        out += buf;
    }
    if (const std::string device = str_of(env, "device"); !device.empty()) {
        std::snprintf(buf, sizeof buf, "%-16s %s (weights %s, KV cache %s)\n",
                      "Device:", device.c_str(), str_of(env, "weight_dtype").c_str(),
                      str_of(env, "kv_dtype").c_str());
        out += buf;
    }
    if (const std::string file = str_of(env, "model_file"); !file.empty()) {
        const std::string sha = str_of(env, "model_sha256");
        std::snprintf(buf, sizeof buf, "%-16s %s, %.1f MiB%s%s\n", "Model:", file.c_str(),
                      num_of(env, "model_size_bytes") / 1048576.0, sha.empty() ? "" : ", sha256 ",
                      sha.c_str());
        out += buf;
    }
    if (const std::string v = str_of(env, "app_version"); !v.empty()) {
        std::snprintf(buf, sizeof buf, "%-16s %s (commit %s)\n", "llmwb:", v.c_str(),
                      str_of(env, "app_commit").c_str());
        out += buf;
    }
    return out;
}

} // namespace llmwb::cli
