#include "app/cli/cli_model.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "app/cli/kv_int8_experiment.h"
#include "engine/backend/device_select.h"
#include "engine/model/demo_model.h"
#include "engine/runtime/kv_calibration.h"
#include "engine/runtime/panel_weights.h"

namespace llmwb::cli {

std::string default_model_dir() {
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
        return std::string(xdg) + "/llmwb/llm-workbench";
    const char* home = std::getenv("HOME");
    return std::string(home && *home ? home : ".") + "/.local/share/llmwb/llm-workbench";
}

Result<std::unique_ptr<CliModel>> open_cli_model(const CliArgs& args) {
    return open_cli_model(args.get("model"));
}

Result<std::unique_ptr<CliModel>> open_cli_model(const std::optional<std::string>& model) {
    std::string path;
    if (auto m = model) {
        path = *m;
    } else {
        auto demo = ensure_demo_model(default_model_dir());
        if (!demo)
            return demo.error();
        path = demo.value();
    }
    auto loaded = load_model(path);
    if (!loaded)
        return loaded.error();
    auto out = std::make_unique<CliModel>();
    out->model = std::move(loaded.value());
    auto tok = Tokenizer::create(out->model->tokenizer);
    if (!tok)
        return make_error(path + ": tokenizer: " + tok.message());
    out->tokenizer = std::move(tok.value());
    return out;
}

} // namespace llmwb::cli

namespace llmwb::cli {

Result<ModelExecutor*> CliModel::open_executor(const DeviceOptions& device, int32_t max_tokens,
                                               int32_t max_seqs) {
    if (!pool)
        pool = std::make_unique<kernels::ThreadPool>(device.threads);
    CudaExecutorOptions o;
    o.kv_dtype = device.kv_dtype.value_or(KvDtype::F16); // CUDA's auto: f16
    o.use_graphs = device.cuda_graphs;
    o.max_tokens = std::max(1, max_tokens);
    o.max_seqs = std::max(1, max_seqs);
    std::shared_ptr<CudaPlugin> plugin = backend.plugin;
    backend.executor.reset(); // the previous executor goes before its transformer and the next
    backend.transformer.reset();
    auto b = open_backend(device.device, *model, *pool, o, std::move(plugin), device.weight_dtype);
    if (!b)
        return make_error("--device cuda: " + b.message());
    backend = std::move(b.value());
    if (!backend.weights_not_cast.empty())
        return make_error(std::string("--dtype ") + weight_dtype_name(device.weight_dtype) +
                          ": the weights could not be cast: " + backend.weights_not_cast +
                          (backend.on_cuda() ? " (--device cpu casts them)" : ""));
    if (device.weight_dtype != WeightDtype::Auto && backend.transformer) {
        const PanelWeights& pw = backend.transformer->panel_weights();
        std::fprintf(stderr,
                     "llmwb: --dtype %s: %d F32/F16 matri%s cast to BF16 at load (%.1f -> %.1f "
                     "MiB)%s%s\n",
                     weight_dtype_name(device.weight_dtype), pw.cast_matrices(),
                     pw.cast_matrices() == 1 ? "x" : "ces", pw.cast_source_bytes() / 1048576.0,
                     pw.cast_bytes() / 1048576.0,
                     pw.uncast().empty() ? "" : "; left as stored: ", pw.uncast().c_str());
    }
    ModelExecutor& e = *backend.executor;
    if (device.kv_dtype) {
        const KvDtype t = *device.kv_dtype;
        const std::string name = kv_dtype_name(t);
        if (!e.supports_kv_dtype(t))
            return make_error("--kv-cache-dtype " + name + ": the " + e.device_name() +
                              " backend cannot store its KV cache as " + name + " (it stores " +
                              kv_dtype_name(e.kv_dtype()) + ")");
        KvScales scales;
        if (device.calculate_kv_scales) {
            auto s = calibrate_kv_scales(e, *tokenizer, t);
            if (!s)
                return make_error("--calculate-kv-scales: " + s.message());
            scales = std::move(s.value());
        }
        if (Status st = e.set_kv_dtype(t, scales); !st)
            return make_error("--kv-cache-dtype " + name + ": " + st.message());
    }
    if (device.int8_experiment != KvInt8Experiment::Off)
        if (Status st = install_kv_int8_experiment(e, device.int8_experiment); !st)
            return st.error();
    if (backend.on_cuda())
        std::fprintf(
            stderr, "llmwb: running on CUDA (%s)%s\n", backend.executor->device_name().c_str(),
            device.device == DevicePreference::Auto ? "; --device cpu to use the CPU" : "");
    return backend.executor.get();
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
        std::snprintf(line, sizeof line,
                      "cuda:%d %s, %.1f GiB (%.1f free), sm_%d%d, %d SMs, %.0f GB/s", d.ordinal,
                      d.name.c_str(), d.total_bytes / 1073741824.0, d.free_bytes / 1073741824.0,
                      d.cc_major, d.cc_minor, d.multiprocessors, d.memory_bandwidth_gbs);
        out.push_back(line);
    }
    return out;
}

Result<std::unique_ptr<DraftModelProposer>> attach_draft_model(CliModel& m, Engine& engine) {
    const SpeculativeConfig& sc = engine.config().speculative;
    const int64_t kv_tokens =
        static_cast<int64_t>(engine.memory_plan().num_blocks) * engine.memory_plan().block_size;
    Result<std::unique_ptr<DraftModelProposer>> p = std::unique_ptr<DraftModelProposer>();
    if (sc.method == SpeculativeMethod::SelfQ4) {
        p = DraftModelProposer::create_self_q4(*m.model, *m.pool, kv_tokens);
    } else if (sc.method == SpeculativeMethod::Draft) {
        auto draft = load_model(sc.draft_model);
        if (!draft)
            return make_error("--draft-model: " + draft.message());
        auto tok = Tokenizer::create((*draft)->tokenizer);
        if (!tok)
            return make_error("--draft-model " + sc.draft_model + ": tokenizer: " + tok.message());
        p = DraftModelProposer::create_draft(std::move(draft.value()), **tok, *m.tokenizer, *m.pool,
                                             kv_tokens);
    }
    if (!p)
        return p.error();
    if (*p)
        engine.set_draft_proposer(p->get());
    return p;
}

} // namespace llmwb::cli
