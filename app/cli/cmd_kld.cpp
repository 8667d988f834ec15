// llmwb kld: how far a model's next-token distributions are from a base model's over the same
// tokens (engine/runtime/kl_divergence.h): mean / median / p99 / max KL divergence, top-1
// agreement and both perplexities.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_model.h"
#include "app/cli/cli_output.h"
#include "app/cli/commands.h"
#include "app/cli/kv_int8_experiment.h"
#include "engine/runtime/kl_divergence.h"
#include "engine/runtime/kv_block_size.h"

namespace llmwb::cli {

namespace {

const char* kKldHelp =
    "llmwb kld [--base B] --model M (--file TEXT | --ids 1,2,3 | --text T) [--ctx N]\n"
    "          [--max-tokens N] [--margin P] [--kv-cache-dtype T [--base-kv-cache-dtype T]]\n"
    "          [--dtype bfloat16] [--json]\n"
    "  Runs both models over the same tokens and compares their next-token distributions at\n"
    "  every position: KL(P_base || P_model) (mean, median, p99, max, in nats), top-1\n"
    "  agreement (all positions, and positions where the base's top-2 probability margin\n"
    "  exceeds --margin, default 0.1), both perplexities and PPL(M) / PPL(B).\n"
    "  Text is tokenized with B's tokenizer (with its special tokens, as HF does); the models\n"
    "  must have vocabularies of the same size and tokenize the text alike.\n"
    "  KV-cache fidelity: the same weights with a KV type against an f32 KV cache, e.g.\n"
    "    llmwb kld --model M --kv-cache-dtype int8 --file TEXT\n"
    "  and weights cast at load against the same file as stored:\n"
    "    llmwb kld --model M --dtype bfloat16 --file TEXT\n"
    "  --base B        the base model (default: M itself)\n"
    "  --kv-cache-dtype T  the KV type of M (device options below; default f32, as the\n"
    "                  base's: without it the comparison is of the weights alone; auto: the\n"
    "                  backend's own, f16)\n"
    "  --base-kv-cache-dtype T  the KV type of B (default f32, whatever --kv-cache-dtype is)\n"
    "  --dtype D       M's float weights (device options below); B's run as stored\n"
    "  --ctx N         tokens per window (default min(512, the models' context)); a longer text\n"
    "                  is cut into windows, each run from an empty cache, all positions scored\n"
    "  --max-tokens N  use only the first N tokens\n";

constexpr int64_t kMaxTextBytes = int64_t{64} << 20;

Result<std::string> read_bounded_text(const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > static_cast<uintmax_t>(kMaxTextBytes))
        return make_error(path + ": " + std::to_string(size) + " bytes is more than the " +
                          std::to_string(kMaxTextBytes >> 20) + " MiB a text file may have");
    return read_text_file(path);
}

// The ids to evaluate, tokenized with the base's tokenizer and checked against the model's.
Result<std::vector<int32_t>> token_ids(const CliArgs& args, const CliModel& base,
                                       const CliModel& model) {
    const Tokenizer& tb = *base.tokenizer;
    const Tokenizer& tm = *model.tokenizer;
    std::optional<std::string> text = args.get("text");
    if (auto f = args.get("file")) {
        auto content = read_bounded_text(*f);
        if (!content)
            return content.error();
        text = std::move(content.value());
    }
    if (text) {
        std::vector<int32_t> ids = tb.encode(*text, true);
        std::vector<int32_t> other = tm.encode(*text, true);
        if (ids != other) {
            size_t i = 0;
            while (i < ids.size() && i < other.size() && ids[i] == other[i])
                ++i;
            auto at = [](const std::vector<int32_t>& v, size_t k) {
                return k < v.size() ? std::to_string(v[k]) : std::string("(end)");
            };
            return make_error("the two models' tokenizers differ on the text: token " +
                              std::to_string(i) + " is " + at(ids, i) + " for the base and " +
                              at(other, i) + " for the model");
        }
        return ids;
    }
    auto ids = args.get_ids("ids");
    if (!ids)
        return ids.error();
    for (int32_t id : *ids)
        if (!tb.valid_id(id) || !tm.valid_id(id))
            return make_error("token id " + std::to_string(id) +
                              " is outside the vocabulary (size " +
                              std::to_string(std::min(tb.vocab_size(), tm.vocab_size())) + ")");
    if (tb.decode(*ids) != tm.decode(*ids))
        return make_error("the two models' tokenizers differ on these ids (they decode to "
                          "different texts)");
    return ids;
}

} // namespace

int cmd_kld(const Args& argv) {
    const char* cmd = "kld";
    OptionNames names{{"base", "model", "text", "file", "ids", "ctx", "max-tokens", "margin",
                       "base-kv-cache-dtype"},
                      {"json", "help"}};
    auto args = names.add(device_option_names()).parse(argv);
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::fputs(kKldHelp, stdout);
        std::fputs(kDeviceOptionsHelp, stdout);
        return 0;
    }
    if (!args->has("model"))
        return fail(cmd, "give --model M (and --base B, default M)");
    if (args->has("text") + args->has("file") + args->has("ids") != 1)
        return fail(cmd, "give exactly one of --file, --ids, --text");
    auto ctx_opt = args->get_int("ctx", 2, 1 << 20);
    if (!ctx_opt)
        return fail(cmd, ctx_opt.message());
    auto max_tokens = args->get_int("max-tokens", 2, int64_t{1} << 26);
    if (!max_tokens)
        return fail(cmd, max_tokens.message());
    auto margin = args->get_double("margin", 0, 1);
    if (!margin)
        return fail(cmd, margin.message());
    auto device = parse_device_options(*args);
    if (!device)
        return fail(cmd, device.message());
    // M without --kv-cache-dtype: f32 KV as the base's (not the backend's auto, f16 on the
    // CPU too), so that two weight files are compared on the weights alone. An explicit
    // "auto" is the backend's own type.
    if (!device->kv_dtype && !args->has("kv-cache-dtype") && !args->has("kv-dtype"))
        device->kv_dtype = KvDtype::F32;
    // The base: f32 KV (the reference) unless --base-kv-cache-dtype; never an int8 experiment.
    DeviceOptions base_device = *device;
    base_device.kv_dtype = KvDtype::F32;
    base_device.int8_experiment = KvInt8Experiment::Off;
    base_device.weight_dtype = WeightDtype::Auto;
    if (auto t = args->get("base-kv-cache-dtype")) {
        if (*t == "auto") {
            base_device.kv_dtype.reset();
        } else {
            const auto parsed = parse_kv_dtype(*t);
            if (!parsed)
                return fail(cmd, "--base-kv-cache-dtype must be one of " +
                                     std::string(kv_dtype_choices()) + ", got '" + *t + "'");
            base_device.kv_dtype = *parsed;
        }
    }
    base_device.calculate_kv_scales = device->calculate_kv_scales && base_device.kv_dtype &&
                                      kv_dtype_is_fp8(*base_device.kv_dtype);
    const std::string base_path = args->get("base").value_or(*args->get("model"));

    auto base = open_cli_model(base_path);
    if (!base)
        return fail(cmd, "--base: " + base.message());
    auto model = open_cli_model(args->get("model"));
    if (!model)
        return fail(cmd, "--model: " + model.message());
    const ModelConfig& cb = (*base)->model->config;
    const ModelConfig& cm = (*model)->model->config;
    if (cb.vocab_size != cm.vocab_size)
        return fail(cmd, "the vocabularies differ in size (base " + std::to_string(cb.vocab_size) +
                             ", model " + std::to_string(cm.vocab_size) + ")");
    auto ids = token_ids(*args, **base, **model);
    if (!ids)
        return fail(cmd, ids.message());
    if (*max_tokens && static_cast<int64_t>(ids->size()) > **max_tokens)
        ids->resize(static_cast<size_t>(**max_tokens));
    if (ids->size() < 2)
        return fail(cmd, "needs at least 2 tokens, got " + std::to_string(ids->size()));

    // One window's worth of KV slots per model; the chunk bounds the logits rows held.
    int64_t context = std::min(cb.max_position, cm.max_position);
    if (context <= 0)
        context = std::max(cb.max_position, cm.max_position);
    int64_t ctx = ctx_opt->value_or(std::min<int64_t>(512, context > 0 ? context : 512));
    if (context > 0 && ctx > context)
        return fail(cmd, "--ctx " + std::to_string(ctx) + " is beyond the models' context of " +
                             std::to_string(context) + " tokens");
    ctx = std::min<int64_t>(ctx, static_cast<int64_t>(ids->size()));
    const auto chunk = static_cast<int32_t>(
        std::clamp<int64_t>((int64_t{16} << 20) / std::max(1, cb.vocab_size), 1, 512));
    const auto blocks = static_cast<int32_t>((ctx + kDefaultKvBlockSize - 1) / kDefaultKvBlockSize);
    ModelExecutor* exec[2] = {nullptr, nullptr};
    CliModel* m[2] = {base.value().get(), model.value().get()};
    for (int i = 0; i < 2; ++i) {
        auto e = m[i]->open_executor(i ? *device : base_device,
                                     std::min<int32_t>(chunk, static_cast<int32_t>(ctx)), 1);
        if (!e)
            return fail(cmd, std::string(i ? "--model: " : "--base: ") + e.message());
        if (Status st = (*e)->resize_kv(blocks, kDefaultKvBlockSize, {}); !st)
            return fail(cmd, std::string(i ? "--model: " : "--base: ") + st.message());
        exec[i] = *e;
    }
    KldOptions opt;
    opt.ctx = static_cast<int32_t>(ctx);
    opt.chunk = chunk;
    opt.margin = margin->value_or(0.1);
    // A simulated int8 variant changes the cache when a block fills: the model runs one block
    // per forward so that later tokens read the quantized values.
    if (device->int8_experiment != KvInt8Experiment::Off)
        opt.model_chunk = kDefaultKvBlockSize;
    const std::string kv_model = kv_dtype_name(exec[1]->kv_dtype());
    const std::string kv_base = kv_dtype_name(exec[0]->kv_dtype());
    auto scales_of = [](const ModelExecutor& e, bool calibrated) {
        return !kv_dtype_is_fp8(e.kv_dtype()) ? "none" : calibrated ? "calibrated" : "1.0";
    };
    auto r = kl_divergence(*exec[0], *exec[1], *ids, opt);
    if (!r)
        return fail(cmd, r.message());
    if (args->has("json")) {
        nlohmann::ordered_json j;
        j["base"] = (*base)->model->path;
        j["model"] = (*model)->model->path;
        j["tokens"] = r->tokens;
        j["positions"] = r->positions;
        j["windows"] = r->windows;
        j["ctx"] = ctx;
        j["kv_cache_dtype"] = kv_model;
        j["base_kv_cache_dtype"] = kv_base;
        j["dtype"] = weight_dtype_name(device->weight_dtype);
        j["kv_scales"] = scales_of(*exec[1], device->calculate_kv_scales);
        j["base_kv_scales"] = scales_of(*exec[0], base_device.calculate_kv_scales);
        if (device->int8_experiment != KvInt8Experiment::Off)
            j["kv_int8_experiment"] = kv_int8_experiment_name(device->int8_experiment);
        j["mean_kld"] = r->mean_kld;
        j["median_kld"] = r->median_kld;
        j["p99_kld"] = r->p99_kld;
        j["max_kld"] = r->max_kld;
        j["top1_agreement_pct"] = r->top1_agreement;
        j["margin"] = r->margin;
        j["confident_positions"] = r->confident_positions;
        j["top1_agreement_confident_pct"] = r->top1_agreement_confident;
        j["ppl_base"] = r->ppl_base;
        j["ppl_model"] = r->ppl_model;
        j["ppl_ratio"] = r->ppl_ratio;
        j["seconds"] = r->seconds;
        std::cout << dump_json(j) << "\n";
        return 0;
    }
    std::printf("base             %s\n", (*base)->model->path.c_str());
    std::printf("model            %s\n", (*model)->model->path.c_str());
    std::string kv_line = kv_model;
    if (kv_dtype_is_fp8(exec[1]->kv_dtype()))
        kv_line +=
            std::string(" (scales ") + scales_of(*exec[1], device->calculate_kv_scales) + ")";
    if (device->int8_experiment != KvInt8Experiment::Off)
        kv_line +=
            std::string(", simulated int8 ") + kv_int8_experiment_name(device->int8_experiment);
    std::printf("KV cache         model %s, base %s\n", kv_line.c_str(), kv_base.c_str());
    std::printf("tokens           %lld (%lld window%s of up to %lld, %lld positions scored)\n",
                static_cast<long long>(r->tokens), static_cast<long long>(r->windows),
                r->windows == 1 ? "" : "s", static_cast<long long>(ctx),
                static_cast<long long>(r->positions));
    std::printf("KL divergence    mean %.6g, median %.6g, p99 %.6g, max %.6g\n", r->mean_kld,
                r->median_kld, r->p99_kld, r->max_kld);
    std::printf("top-1 agreement  %.2f %% of all positions; ", r->top1_agreement);
    if (r->confident_positions > 0)
        std::printf("%.2f %% of the %lld where the base's top-2 margin > %g\n",
                    r->top1_agreement_confident, static_cast<long long>(r->confident_positions),
                    r->margin);
    else
        std::printf("no position has a base top-2 margin > %g\n", r->margin);
    std::printf("perplexity       base %.4f, model %.4f, ratio %.6f\n", r->ppl_base, r->ppl_model,
                r->ppl_ratio);
    std::printf("seconds          %.2f\n", r->seconds);
    return 0;
}

} // namespace llmwb::cli
