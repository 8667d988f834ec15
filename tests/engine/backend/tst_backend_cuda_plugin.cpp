// The CUDA plugin loader and the CLI's --device choice, on any machine (no GPU needed): clean
// errors for a bogus plugin path, a file that is not a library, a library without the entry
// point, a missing driver; `--device cuda` fails with one clear stderr line; `--device auto`
// falls back to the CPU when the plugin cannot be used.
#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/backend/cuda_plugin.h"
#include "engine/model/model_writer.h"
#include "support/mini_test.h"

using namespace llmwb;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
    static fs::path dir = [] {
        fs::path d = fs::temp_directory_path() / ("llmwb-backend-" + std::to_string(getpid()));
        fs::create_directories(d);
        return d;
    }();
    return dir;
}

std::string read_all(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// A library that surely exists and has no llmwb entry point: the one holding std::cos.
std::string libm_path() {
    Dl_info info{};
    double (*fn)(double) = &::cos;
    if (dladdr(reinterpret_cast<void*>(fn), &info) == 0 || !info.dli_fname)
        return {};
    return info.dli_fname;
}

struct RunResult {
    int exit_code = -1;
    std::string out, err;
};

RunResult run_cli(const std::string& env, const std::string& args) {
    const char* build = std::getenv("LLMWB_BUILD_DIR");
    const std::string exe = std::string(build ? build : ".") + "/app/cli/llmwb";
    const fs::path out = temp_dir() / "out.txt", err = temp_dir() / "err.txt";
    const std::string cmd =
        env + " '" + exe + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
    const int st = std::system(cmd.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = read_all(out);
    r.err = read_all(err);
    return r;
}

std::string tiny_model() {
    static std::string path = [] {
        ModelWriterSpec s;
        s.arch = Architecture::Qwen2;
        s.hidden_size = 64;
        s.intermediate_size = 128;
        s.num_layers = 1;
        s.num_heads = 2;
        s.num_kv_heads = 1;
        const std::string p = (temp_dir() / "tiny.gguf").string();
        return write_model(s, p) ? p : std::string();
    }();
    return path;
}

} // namespace

MT_TEST(missing_driver_is_named) {
    CudaPluginOptions o;
    o.driver_library = "libllmwb-no-such-driver.so.1";
    o.plugin_path = "/nonexistent/libllmwb_cuda.so";
    auto p = CudaPlugin::load(o);
    MT_REQUIRE(!p);
    MT_CHECK_MSG(p.message() == "no CUDA driver (libllmwb-no-such-driver.so.1 not found)", "%s",
                 p.message().c_str());
}

MT_TEST(bogus_plugin_path_is_named) {
    const std::string lib = libm_path();
    MT_REQUIRE(!lib.empty());
    CudaPluginOptions o;
    o.driver_library = lib; // stands in for a present driver
    o.plugin_path = (temp_dir() / "no-such-dir" / "libllmwb_cuda.so").string();
    auto p = CudaPlugin::load(o);
    MT_REQUIRE(!p);
    MT_CHECK_MSG(contains(p.message(), "not found") && contains(p.message(), o.plugin_path), "%s",
                 p.message().c_str());
}

MT_TEST(not_a_library_is_rejected) {
    const std::string lib = libm_path();
    MT_REQUIRE(!lib.empty());
    const fs::path fake = temp_dir() / "libllmwb_cuda.so";
    std::ofstream(fake) << "this is not an ELF file\n";
    CudaPluginOptions o;
    o.driver_library = lib;
    o.plugin_path = fake.string();
    auto p = CudaPlugin::load(o);
    MT_REQUIRE(!p);
    MT_CHECK_MSG(contains(p.message(), "CUDA plugin " + fake.string() + ": "), "%s",
                 p.message().c_str());
}

MT_TEST(library_without_entry_point_is_rejected) {
    const std::string lib = libm_path();
    MT_REQUIRE(!lib.empty());
    CudaPluginOptions o;
    o.driver_library = lib;
    o.plugin_path = lib;
    auto p = CudaPlugin::load(o);
    MT_REQUIRE(!p);
    MT_CHECK_MSG(contains(p.message(), std::string("no symbol ") + LLMWB_CUDA_PLUGIN_SYMBOL), "%s",
                 p.message().c_str());
}

MT_TEST(search_paths_follow_the_environment) {
    CudaPluginOptions o;
    o.plugin_path = "/x/y.so";
    auto explicit_paths = cuda_plugin_search_paths(o);
    MT_REQUIRE(explicit_paths.size() == 1);
    MT_CHECK(explicit_paths[0] == "/x/y.so");
    setenv("LLMWB_CUDA_PLUGIN", "/from/env.so", 1);
    auto env_paths = cuda_plugin_search_paths({});
    MT_CHECK(env_paths.size() == 1 && env_paths[0] == "/from/env.so");
    unsetenv("LLMWB_CUDA_PLUGIN");
    auto default_paths = cuda_plugin_search_paths({});
    MT_REQUIRE(default_paths.size() == 2);
    MT_CHECK(contains(default_paths[0], "/libllmwb_cuda.so"));
    MT_CHECK(contains(default_paths[1], "/../lib/llmwb/libllmwb_cuda.so"));
}

MT_TEST(cli_device_cuda_fails_with_one_line) {
    const std::string model = tiny_model();
    MT_REQUIRE(!model.empty());
    const std::string env = "LLMWB_CUDA_PLUGIN=/nonexistent/libllmwb_cuda.so";
    RunResult r = run_cli(env, "generate --model '" + model +
                                   "' --prompt hello --max-tokens 3 --temperature 0 --device cuda");
    MT_CHECK(r.exit_code != 0);
    MT_CHECK(r.out.empty());
    MT_CHECK_MSG(contains(r.err, "--device cuda: "), "stderr: %s", r.err.c_str());
    // Exactly one line.
    MT_CHECK_MSG(!r.err.empty() && r.err.find('\n') == r.err.size() - 1, "stderr: %s",
                 r.err.c_str());
}

MT_TEST(cli_device_auto_falls_back_to_cpu) {
    const std::string model = tiny_model();
    MT_REQUIRE(!model.empty());
    const std::string env = "LLMWB_CUDA_PLUGIN=/nonexistent/libllmwb_cuda.so";
    const std::string common =
        "generate --model '" + model + "' --ids 1,2,3,4 --max-tokens 4 --temperature 0 --json";
    RunResult autod = run_cli(env, common + " --device auto");
    RunResult cpu = run_cli(env, common + " --device cpu");
    MT_CHECK_MSG(autod.exit_code == 0, "stderr: %s", autod.err.c_str());
    MT_CHECK(cpu.exit_code == 0);
    MT_CHECK(!contains(autod.err, "CUDA"));
    // Same greedy ids from the fallback as from the CPU.
    const auto ids_of = [](const std::string& json) {
        const size_t a = json.find("\"ids\"");
        return a == std::string::npos ? std::string() : json.substr(a, json.find(']', a) - a);
    };
    MT_CHECK(!ids_of(cpu.out).empty());
    MT_CHECK_MSG(ids_of(autod.out) == ids_of(cpu.out), "auto %s vs cpu %s", autod.out.c_str(),
                 cpu.out.c_str());
    RunResult bad = run_cli(env, common + " --device tpu");
    MT_CHECK(bad.exit_code != 0 && contains(bad.err, "--device must be auto, cpu or cuda"));
}

MINI_TEST_MAIN()
