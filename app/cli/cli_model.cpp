#include "app/cli/cli_model.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "engine/backend/device_select.h"
#include "engine/model/demo_model.h"
#include "engine/runtime/cpu_executor.h"

namespace llmwb::cli {

std::string default_model_dir() {
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
        return std::string(xdg) + "/llmwb/llm-workbench";
    const char* home = std::getenv("HOME");
    return std::string(home && *home ? home : ".") + "/.local/share/llmwb/llm-workbench";
}

Status CliModel::prepare_runtime(int64_t tokens, int threads) {
    const ModelConfig& c = model->config;
    int64_t want = std::max<int64_t>(1, std::min<int64_t>(tokens, c.max_position));
    int32_t bs = KvCacheStorage::kDefaultBlockSize;
    int64_t blocks = (want + bs - 1) / bs;
    auto kv_or = KvCacheStorage::create(c, static_cast<int32_t>(blocks), bs);
    if (!kv_or) return kv_or.error();
    kv = std::move(kv_or.value());
    pool = std::make_unique<kernels::ThreadPool>(threads);
    transformer = std::make_unique<Transformer>(*model, *pool);
    return ok_status();
}

Result<std::unique_ptr<CliModel>> open_cli_model(const CliArgs& args) {
    std::string path;
    if (auto m = args.get("model")) {
        path = *m;
    } else {
        auto demo = ensure_demo_model(default_model_dir());
        if (!demo) return demo.error();
        path = demo.value();
    }
    auto loaded = load_model(path);
    if (!loaded) return loaded.error();
    auto out = std::make_unique<CliModel>();
    out->model = std::move(loaded.value());
    auto tok = Tokenizer::create(out->model->tokenizer);
    if (!tok) return make_error(path + ": tokenizer: " + tok.message());
    out->tokenizer = std::move(tok.value());
    return out;
}

}  // namespace llmwb::cli

namespace llmwb::cli {

const char* kDeviceOptionsHelp =
    "  --device auto|cpu|cuda    backend (default auto: CUDA when the plugin and a GPU are\n"
    "                            present, else the CPU)\n"
    "  --kv-dtype f16|f32        element type of the CUDA KV cache (default f16)\n"
    "  --no-cuda-graphs          run CUDA decode steps eagerly (no CUDA graphs)\n";

const std::set<std::string>& device_value_options() {
    static const std::set<std::string> s = {"device", "kv-dtype"};
    return s;
}

const std::set<std::string>& device_flag_options() {
    static const std::set<std::string> s = {"no-cuda-graphs"};
    return s;
}

Result<ModelExecutor*> CliModel::open_executor(const CliArgs& args, int threads,
                                               int32_t max_tokens, int32_t max_seqs,
                                               int64_t kv_tokens) {
    const std::string device = args.get_or("device", "auto");
    const auto pref = parse_device_preference(device);
    if (!pref)
        return make_error("--device must be auto, cpu or cuda, got '" + device + "'");
    const std::string kv_dtype = args.get_or("kv-dtype", "f16");
    if (kv_dtype != "f16" && kv_dtype != "f32")
        return make_error("--kv-dtype must be f16 or f32, got '" + kv_dtype + "'");
    const ModelConfig& c = model->config;
    const int64_t ctx = std::max<int64_t>(
        1, c.max_position > 0 ? std::min<int64_t>(kv_tokens, c.max_position) : kv_tokens);
    executor.reset();
    CudaExecutorOptions o;
    o.kv_dtype = kv_dtype == "f32" ? KvDtype::F32 : KvDtype::F16;
    o.use_graphs = !args.has("no-cuda-graphs");
    o.max_tokens = std::max(1, max_tokens);
    o.max_seqs = std::max(1, max_seqs);
    auto sel = select_cuda_executor(*pref, *model, o, cuda_plugin);
    if (!sel)
        return make_error("--device cuda: " + sel.message());
    if (sel->plugin)
        cuda_plugin = sel->plugin;
    if (sel->executor) {
        executor = std::move(sel->executor);
        std::fprintf(stderr, "llmwb: running on CUDA (%s)%s\n", executor->device_name().c_str(),
                     *pref == DevicePreference::Auto ? "; --device cpu to use the CPU" : "");
    }
    if (!executor) {
        if (!pool)
            pool = std::make_unique<kernels::ThreadPool>(threads);
        if (!transformer)
            transformer = std::make_unique<Transformer>(*model, *pool);
        executor = std::make_unique<CpuExecutor>(*transformer);
    }
    if (kv_tokens > 0) {
        const int32_t bs = KvCacheStorage::kDefaultBlockSize;
        const auto blocks = static_cast<int32_t>((ctx + bs - 1) / bs);
        if (Status st = executor->resize_kv(blocks, bs, {}); !st)
            return st.error();
    }
    return executor.get();
}

std::vector<std::string> describe_cuda_devices() {
    auto plugin = CudaPlugin::load();
    if (!plugin)
        return {"cuda: unavailable (" + plugin.message() + ")"};
    auto devices = (*plugin)->devices();
    if (!devices)
        return {"cuda: unavailable (" + devices.message() + ")"};
    if (devices->empty())
        return {"cuda: no device"};
    std::vector<std::string> out;
    for (const CudaDeviceInfo& d : *devices) {
        char line[512];
        std::snprintf(line, sizeof line, "cuda:%d %s, %.1f GiB (%.1f free), sm_%d%d, %d SMs, %.0f GB/s",
                      d.ordinal, d.name.c_str(), d.total_bytes / 1073741824.0,
                      d.free_bytes / 1073741824.0, d.cc_major, d.cc_minor, d.multiprocessors,
                      d.memory_bandwidth_gbs);
        out.push_back(line);
    }
    return out;
}

}  // namespace llmwb::cli
