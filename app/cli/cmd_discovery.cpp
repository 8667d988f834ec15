// llmwb models / llmwb fit: the models this machine already has (model_discovery.h, headers only)
// and whether one fits its memory (fit_calculator.h).
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"
#include "app/discovery/fit_calculator.h"
#include "app/discovery/model_discovery.h"

namespace llmwb::cli {

namespace {

std::string discovery_gib(int64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(int64_t(1) << 30));
    return buf;
}

// --device auto|cpu|cuda -> whether the fit targets the GPU (auto: when the plugin lists one).
Result<bool> discovery_use_gpu(const CliArgs& args, const MachineFacts& m) {
    const std::string d = args.get_or("device", "auto");
    if (d == "cpu")
        return false;
    if (d == "cuda") {
        if (m.gpus.empty())
            return make_error("--device cuda: no GPU (" + m.gpu_note + ")");
        return true;
    }
    if (d != "auto")
        return make_error("--device: want auto, cpu or cuda, got '" + d + "'");
    return !m.gpus.empty();
}

void print_machine(const MachineFacts& m) {
    std::printf("machine: %s, %d cores (%d threads), SIMD %s, RAM %s (%s available)\n",
                m.cpu_model.c_str(), m.physical_cores, m.logical_cores, m.simd_level.c_str(),
                discovery_gib(m.ram_bytes).c_str(), discovery_gib(m.ram_available_bytes).c_str());
    for (const GpuFacts& g : m.gpus)
        std::printf("gpu:     %s, %s, compute %s, driver %s\n", g.name.c_str(),
                    discovery_gib(g.memory_bytes).c_str(), g.compute_capability.c_str(),
                    g.driver.empty() ? "?" : g.driver.c_str());
    if (m.gpus.empty())
        std::printf("gpu:     none (%s)\n", m.gpu_note.c_str());
}

nlohmann::ordered_json machine_json(const MachineFacts& m) {
    nlohmann::ordered_json j;
    j["cpu_model"] = m.cpu_model;
    j["simd_level"] = m.simd_level;
    j["logical_cores"] = m.logical_cores;
    j["physical_cores"] = m.physical_cores;
    j["ram_bytes"] = m.ram_bytes;
    j["ram_available_bytes"] = m.ram_available_bytes;
    j["gpus"] = nlohmann::ordered_json::array();
    for (const GpuFacts& g : m.gpus)
        j["gpus"].push_back({{"name", g.name},
                             {"memory_bytes", g.memory_bytes},
                             {"compute_capability", g.compute_capability},
                             {"driver", g.driver}});
    return j;
}

struct DiscoveryFitArgs {
    FitRequest request;
    bool use_gpu = false;
};

Result<DiscoveryFitArgs> parse_fit_args(const CliArgs& args, const MachineFacts& m) {
    DiscoveryFitArgs a;
    auto ctx = args.get_int("context", 1, 1 << 24);
    if (!ctx)
        return ctx.error();
    auto seqs = args.get_int("seqs", 1, kFitMaxSeqs);
    if (!seqs)
        return seqs.error();
    auto util = args.get_double("gpu-memory-utilization", 0.01, 1.0);
    if (!util)
        return util.error();
    a.request.context = ctx->value_or(4096);
    a.request.seqs = static_cast<int32_t>(seqs->value_or(1));
    a.request.utilization = util->value_or(kFitDefaultUtilization);
    if (auto kv = args.get("kv-cache-dtype")) {
        auto t = parse_kv_dtype(*kv);
        if (!t)
            return make_error("--kv-cache-dtype: want one of " + std::string(kv_dtype_choices()) +
                              ", got '" + *kv + "'");
        a.request.kv_dtype = *t;
    }
    auto gpu = discovery_use_gpu(args, m);
    if (!gpu)
        return gpu.error();
    a.use_gpu = *gpu;
    return a;
}

// A model's fit in one line ("fits: f16 KV, ..." / "no: Q4_K_M fits with 16k context").
std::string fit_cell(const ModelHeader& h, const FitDevice& dev, const FitRequest& r) {
    if (!h.config)
        return "-";
    const FitAdvice a = advise_fit(*h.config, h.weight_bytes, h.parameters, dev, r);
    return (a.fits ? "" : "no: ") + a.summary;
}

const char* kModelsHelp =
    "llmwb models [--folder DIR ...] [--context N] [--seqs M] [--device auto|cpu|cuda] [--json]\n"
    "  Lists the models this machine already has, reading their headers only: LM Studio\n"
    "  (~/.lmstudio/models, ~/.cache/lm-studio/models), GPT4All "
    "(~/.local/share/nomic.ai/GPT4All),\n"
    "  Ollama ($OLLAMA_MODELS, ~/.ollama/models, /usr/share/ollama/.ollama/models), the Hugging\n"
    "  Face cache ($HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub) and each --folder.\n"
    "  For each: source, architecture, size, tensor types, context, and whether it fits this\n"
    "  machine at N tokens of context (default 4096) x M sequences (default 1).";

const char* kFitHelp =
    "llmwb fit MODEL [--context N] [--seqs M] [--kv-cache-dtype T] [--gpu-memory-utilization F]\n"
    "          [--device auto|cpu|cuda] [--json]\n"
    "  Whether MODEL (a .gguf file or a Hugging Face folder; --model M also works) fits this\n"
    "  machine, from its header: weights + KV cache (2 x layers x kv_heads x head_dim x N x M x\n"
    "  bytes per element, for each KV dtype) + activations and runtime, against F (default 0.9) x\n"
    "  the GPU's memory or x the RAM available now; and the advised KV dtype,\n"
    "  gpu_memory_utilization, max_num_seqs and quantization.";

} // namespace

int cmd_models(const Args& argv) {
    const char* cmd = "models";
    auto args = CliArgs::parse(
        argv, {"folder", "context", "seqs", "device", "gpu-memory-utilization", "kv-cache-dtype"},
        {"json", "help"});
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::puts(kModelsHelp);
        return 0;
    }
    const MachineFacts machine = probe_machine_with_cuda();
    auto fa = parse_fit_args(*args, machine);
    if (!fa)
        return fail(cmd, fa.message());
    const FitDevice dev = fit_device_for(machine, fa->use_gpu);
    std::vector<std::string> notes;
    const auto models =
        discover_models(discovery_roots_from_environment(args->get_all("folder")), &notes);
    if (args->has("json")) {
        nlohmann::ordered_json j;
        j["machine"] = machine_json(machine);
        j["models"] = nlohmann::ordered_json::array();
        for (const DiscoveredModel& m : models) {
            nlohmann::ordered_json e;
            e["name"] = m.name;
            e["source"] = m.source;
            e["path"] = m.path;
            e["format"] = m.header.format;
            e["architecture"] = m.header.architecture;
            e["file_bytes"] = m.header.file_bytes;
            e["parameters"] = m.header.parameters;
            e["context_length"] = m.header.context_length;
            nlohmann::ordered_json types = nlohmann::ordered_json::object();
            for (const HeaderTypeCount& t : m.header.types)
                types[t.type] = {{"tensors", t.tensors}, {"bytes", t.bytes}};
            e["types"] = std::move(types);
            if (m.header.config) {
                const FitAdvice a = advise_fit(*m.header.config, m.header.weight_bytes,
                                               m.header.parameters, dev, fa->request);
                e["fits"] = a.fits;
                e["fit"] = a.summary;
            }
            if (!m.header.ok())
                e["error"] = m.header.error;
            j["models"].push_back(std::move(e));
        }
        j["notes"] = notes;
        std::puts(j.dump(2).c_str());
        return 0;
    }
    print_machine(machine);
    std::printf("fit at %s context x %d sequence(s) on %s\n\n",
                fit_context_text(fa->request.context).c_str(), fa->request.seqs, dev.name.c_str());
    if (models.empty())
        std::puts("no models found");
    for (const DiscoveredModel& m : models) {
        const ModelHeader& h = m.header;
        std::printf("%s  [%s]\n  %s\n", m.name.c_str(), m.source.c_str(), m.path.c_str());
        std::printf("  %s %s, %s, %.2f B parameters, context %lld, types %s\n",
                    h.architecture.empty() ? "?" : h.architecture.c_str(), h.format.c_str(),
                    discovery_gib(h.file_bytes).c_str(), double(h.parameters) / 1e9,
                    static_cast<long long>(h.context_length), h.types_text().c_str());
        if (!h.ok())
            std::printf("  error: %s\n", h.error.c_str());
        else
            std::printf("  %s\n", fit_cell(h, dev, fa->request).c_str());
    }
    for (const std::string& n : notes)
        std::printf("note: %s\n", n.c_str());
    return 0;
}

int cmd_fit(const Args& argv_in) {
    const char* cmd = "fit";
    Args argv = argv_in;
    std::string model;
    if (!argv.empty() && argv.front().rfind("--", 0) != 0) {
        model = argv.front();
        argv.erase(argv.begin());
    }
    auto args = CliArgs::parse(
        argv, {"model", "context", "seqs", "device", "gpu-memory-utilization", "kv-cache-dtype"},
        {"json", "help"});
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::puts(kFitHelp);
        return 0;
    }
    if (auto m = args->get("model"))
        model = *m;
    if (model.empty())
        return fail(cmd, "no model (llmwb fit MODEL ...)");
    const ModelHeader h = read_model_header(model);
    if (!h.config)
        return fail(cmd, h.error.empty() ? model + ": not a model the engine runs" : h.error);
    const MachineFacts machine = probe_machine_with_cuda();
    auto fa = parse_fit_args(*args, machine);
    if (!fa)
        return fail(cmd, fa.message());
    const FitDevice dev = fit_device_for(machine, fa->use_gpu);
    const ModelConfig& c = *h.config;
    const FitAdvice advice = advise_fit(c, h.weight_bytes, h.parameters, dev, fa->request);
    if (args->has("json")) {
        nlohmann::ordered_json j;
        j["machine"] = machine_json(machine);
        j["device"] = dev.name;
        j["budget_base_bytes"] = dev.base_bytes;
        j["model"] = model;
        j["architecture"] = h.architecture;
        j["weight_bytes"] = h.weight_bytes;
        j["parameters"] = h.parameters;
        j["context"] = fa->request.context;
        j["seqs"] = fa->request.seqs;
        j["kv"] = nlohmann::ordered_json::array();
        for (KvDtype t : kAllKvDtypes) {
            FitRequest r = fa->request;
            r.kv_dtype = t;
            const FitEstimate e = estimate_fit(c, h.weight_bytes, dev, r);
            j["kv"].push_back({{"kv_dtype", kv_dtype_name(t)},
                               {"kv_bytes", e.kv_bytes},
                               {"need_bytes", e.need_bytes},
                               {"budget_bytes", e.budget_bytes},
                               {"fits", e.fits}});
        }
        j["advice"] = {{"fits", advice.fits},
                       {"kv_cache_dtype", kv_dtype_name(advice.kv_dtype)},
                       {"gpu_memory_utilization", advice.gpu_memory_utilization},
                       {"max_num_seqs", advice.max_num_seqs},
                       {"quantization", advice.quantization},
                       {"quantization_context", advice.quantization_context},
                       {"summary", advice.summary}};
        std::puts(j.dump(2).c_str());
        return 0;
    }
    print_machine(machine);
    std::printf("model:   %s (%s, %d layers, %d KV heads x %d, context %d)\n", model.c_str(),
                h.architecture.c_str(), c.num_layers, c.num_kv_heads, c.head_dim, c.max_position);
    std::printf("         weights %s, %.2f B parameters, types %s\n",
                discovery_gib(h.weight_bytes).c_str(), double(h.parameters) / 1e9,
                h.types_text().c_str());
    std::printf("request: %lld tokens x %d sequence(s) on %s, utilization %.2f\n\n",
                static_cast<long long>(fa->request.context), fa->request.seqs, dev.name.c_str(),
                fa->request.utilization);
    std::printf("%-9s %12s %12s %12s  %s\n", "kv dtype", "KV", "need", "budget", "fits");
    for (KvDtype t : kAllKvDtypes) {
        FitRequest r = fa->request;
        r.kv_dtype = t;
        const FitEstimate e = estimate_fit(c, h.weight_bytes, dev, r);
        std::printf("%-9s %12s %12s %12s  %s\n", kv_dtype_name(t),
                    discovery_gib(e.kv_bytes).c_str(), discovery_gib(e.need_bytes).c_str(),
                    discovery_gib(e.budget_bytes).c_str(), e.fits ? "yes" : "no");
    }
    std::printf("\nadvice: %s\n", advice.summary.c_str());
    if (advice.fits)
        std::printf("  --kv-cache-dtype %s --gpu-memory-utilization %.2f --max-num-seqs %d\n",
                    kv_dtype_name(advice.kv_dtype), advice.gpu_memory_utilization,
                    advice.max_num_seqs);
    return 0;
}

} // namespace llmwb::cli
