// llmwb info / make-model.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_model.h"
#include "app/cli/cli_output.h"
#include "app/cli/commands.h"
#include "engine/backend/cuda_executor.h"
#include "engine/model/model_info.h"
#include "engine/model/model_shapes.h"
#include "engine/model/model_writer.h"
#include "engine/model/quantize.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/rope.h"

namespace llmwb::cli {

namespace {

std::string human_bytes(double b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u ? "%.2f %s" : "%.0f %s", b, units[u]);
    return buf;
}

const char* rope_style_name(RopeStyle s) {
    return s == RopeStyle::Interleaved ? "interleaved" : "rotate-half";
}

// Llama 3 scaling lives in config.json for safetensors and in a rope_freqs tensor for GGUF.
const char* rope_scaling_name(const LoadedModel& m) {
    if (m.config.rope_scaling.kind == RopeScaling::Kind::Llama3)
        return "llama3";
    if (m.config.rope_scaling.kind == RopeScaling::Kind::LongRope) // rope.h: one set per model
        return longrope_uses_long_factors(m.config) ? "longrope (long factors)"
                                                    : "longrope (short factors)";
    if (m.weights.rope_freqs.present())
        return "llama3 (rope_freqs)";
    if (m.config.rope_scaling.kind == RopeScaling::Kind::Linear)
        return "linear";
    return "none";
}

// Tokens whose K/V fit in 1 GiB as `t` (whole blocks of the default size).
int64_t kv_tokens_per_gib(const ModelConfig& c, KvDtype t) {
    const int64_t bpb = kv_bytes_per_block(c, KvCacheStorage::kDefaultBlockSize, t);
    return bpb > 0 ? (int64_t{1} << 30) / bpb * KvCacheStorage::kDefaultBlockSize : 0;
}

} // namespace

int cmd_info(const Args& argv) {
    const char* cmd = "info";
    auto args = CliArgs::parse(argv, {"model", "context"}, {"json", "help"});
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::puts("llmwb info --model M [--context N] [--json]\n"
                  "  Architecture, parameters, tensor types per group, the type histogram\n"
                  "  (tensors, parameters and bytes per type), the average bits per weight (over\n"
                  "  the weight matrices and over all tensors), context length, KV bytes per\n"
                  "  token and the estimated memory for N tokens of context (default: the\n"
                  "  model's).");
        return 0;
    }
    auto mo = open_cli_model(*args);
    if (!mo)
        return fail(cmd, mo.message());
    const LoadedModel& m = *(*mo)->model;
    const ModelConfig& c = m.config;
    auto ctx = args->get_int("context", 1, 1 << 24);
    if (!ctx)
        return fail(cmd, ctx.message());
    int64_t context = ctx->value_or(c.max_position);
    int64_t kv_tok = kv_bytes_per_token(c);
    int64_t kv_total = kv_tok * context;
    auto groups = tensor_group_types(m);
    // The CUDA backend's bf16 weight cache for prefill (memory_plan.h): a copy of every quantized
    // matrix; the memory plan takes what fits.
    int64_t cache_bytes = 0;
    int32_t cache_matrices = 0;
    const std::vector<int64_t> cache = cuda_weight_cache_candidates(m);
    const auto cache_slots = static_cast<int32_t>(cache.size());
    for (int64_t b : cache) {
        cache_bytes += b;
        cache_matrices += b > 0 ? 1 : 0;
    }
    const TypeHistogram hist = type_histogram(m);

    if (args->has("json")) {
        nlohmann::ordered_json j;
        j["path"] = m.path;
        j["format"] = m.format;
        j["name"] = m.name;
        j["architecture"] = c.arch_name;
        j["parameters"] = m.parameter_count;
        if (c.is_moe()) {
            const ParameterCounts pc = parameter_counts(m);
            j["experts"] = {{"count", c.num_experts},
                            {"used_per_token", c.num_experts_used},
                            {"intermediate_size", c.expert_intermediate_size},
                            {"renormalize_top_k", c.expert_norm_topk}};
            j["active_parameters"] = pc.active;
            j["active_weight_bytes"] = pc.active_bytes;
        }
        j["weight_bytes"] = m.weight_bytes;
        j["vocab_size"] = c.vocab_size;
        j["hidden_size"] = c.hidden_size;
        j["intermediate_size"] = c.intermediate_size;
        j["layers"] = c.num_layers;
        j["heads"] = c.num_heads;
        j["kv_heads"] = c.num_kv_heads;
        j["head_dim"] = c.head_dim;
        j["context_length"] = c.max_position;
        j["rope_theta"] = c.rope_theta;
        j["rope_style"] = rope_style_name(c.rope_style);
        j["rope_scaling"] = rope_scaling_name(m);
        j["rotary_dim"] = c.rotary_dims();
        j["sliding_window"] = c.sliding_window;
        j["rms_norm_eps"] = c.rms_norm_eps;
        if (c.sliding_window > 0) {
            int sliding = 0;
            for (int l = 0; l < c.num_layers; ++l)
                sliding += c.window_for_layer(l) > 0;
            j["sliding_window"] = c.sliding_window;
            j["sliding_layers"] = sliding;
        }
        if (c.attn_logit_softcap > 0)
            j["attn_logit_softcap"] = c.attn_logit_softcap;
        if (c.final_logit_softcap > 0)
            j["final_logit_softcap"] = c.final_logit_softcap;
        if (c.rope_theta_local > 0)
            j["rope_theta_local"] = c.rope_theta_local;
        j["tied_embeddings"] = c.tie_word_embeddings;
        j["chat_template"] = m.chat_template.has_value();
        j["kv_bytes_per_token"] = kv_tok;
        j["estimated_context_tokens"] = context;
        j["estimated_kv_bytes"] = kv_total;
        j["estimated_memory_bytes"] = m.weight_bytes + kv_total;
        nlohmann::ordered_json by_type = nlohmann::ordered_json::array();
        for (KvDtype t : kAllKvDtypes) {
            const int64_t bpb = kv_bytes_per_block(c, KvCacheStorage::kDefaultBlockSize, t);
            by_type.push_back({{"kv_cache_dtype", kv_dtype_name(t)},
                               {"bytes_per_block", bpb},
                               {"block_size", KvCacheStorage::kDefaultBlockSize},
                               {"tokens_per_gib", kv_tokens_per_gib(c, t)}});
        }
        j["kv_cache_by_dtype"] = by_type;
        nlohmann::ordered_json types = nlohmann::ordered_json::object();
        for (const auto& g : groups) {
            types[g.group]["bytes"] = g.bytes;
            types[g.group]["parameters"] = g.parameters;
            types[g.group]["bits_per_weight"] = g.bits_per_weight();
            for (const auto& [t, n] : g.dtype_counts)
                types[g.group]["types"][t] = n;
        }
        j["tensor_types"] = types;
        nlohmann::ordered_json histogram = nlohmann::ordered_json::array();
        for (const DTypeCount& e : hist.types) {
            nlohmann::ordered_json row;
            row["type"] = dtype_name(e.type);
            row["tensors"] = e.tensors;
            row["parameters"] = e.parameters;
            row["bytes"] = e.bytes;
            row["bits_per_weight"] = e.bits_per_weight();
            histogram.push_back(row);
        }
        j["type_histogram"] = histogram;
        j["bits_per_weight"] = {{"weight_matrices", hist.matrix_bits_per_weight()},
                                {"all_tensors", hist.bits_per_weight()}};
        j["weight_matrices"] = {{"tensors", hist.matrix_tensors},
                                {"parameters", hist.matrix_parameters},
                                {"bytes", hist.matrix_bytes}};
        j["bf16_weight_cache"] = {
            {"bytes", cache_bytes}, {"matrices", cache_matrices}, {"of_matrices", cache_slots}};
        j["devices"] = describe_cuda_devices();
        std::cout << dump_json(j) << "\n";
        return 0;
    }
    std::printf("model          %s\n", m.path.c_str());
    std::printf("name           %s\n", m.name.c_str());
    std::printf("format         %s\n", m.format.c_str());
    std::printf("architecture   %s\n", c.arch_name.c_str());
    std::printf("parameters     %lld (%.3f B)\n", static_cast<long long>(m.parameter_count),
                m.parameter_count / 1e9);
    std::printf("weights        %s\n", human_bytes(static_cast<double>(m.weight_bytes)).c_str());
    if (c.is_moe()) {
        const ParameterCounts pc = parameter_counts(m);
        std::printf("experts        %d, %d used per token (%s), intermediate %d\n", c.num_experts,
                    c.num_experts_used,
                    c.expert_norm_topk ? "top-k renormalised" : "softmax weights",
                    c.expert_intermediate_size);
        std::printf("active / total %.3f B / %.3f B parameters (%s / %s per token)\n",
                    pc.active / 1e9, pc.total / 1e9,
                    human_bytes(static_cast<double>(pc.active_bytes)).c_str(),
                    human_bytes(static_cast<double>(pc.total_bytes)).c_str());
    }
    std::printf("layers         %d, hidden %d, intermediate %d, vocab %d\n", c.num_layers,
                c.hidden_size, c.intermediate_size, c.vocab_size);
    std::printf("attention      %d heads, %d KV heads (GQA %d:1), head dim %d%s%s\n", c.num_heads,
                c.num_kv_heads, c.num_kv_heads ? c.num_heads / c.num_kv_heads : 0, c.head_dim,
                c.attention_bias ? ", q/k/v bias" : "", c.qk_norm ? ", q/k norm" : "");
    std::printf("rope           theta %g, %s, scaling %s\n", c.rope_theta,
                rope_style_name(c.rope_style), rope_scaling_name(m));
    if (c.rope_scaling.kind == RopeScaling::Kind::Linear)
        std::printf("               factor %g%s\n", c.rope_scaling.factor,
                    c.rope_theta_local > 0 ? " (global layers)" : "");
    if (c.rope_theta_local > 0)
        std::printf("               sliding layers: theta %g, no scaling\n", c.rope_theta_local);
    if (c.rotary_dims() != c.head_dim)
        std::printf("rotary         %d of %d dims per head\n", c.rotary_dims(), c.head_dim);
    if (c.sliding_window > 0) {
        int sliding = 0;
        for (int l = 0; l < c.num_layers; ++l)
            sliding += c.window_for_layer(l) > 0;
        std::printf("window         %d tokens on %d of %d layers\n", c.sliding_window, sliding,
                    c.num_layers);
    }
    if (c.attn_logit_softcap > 0 || c.final_logit_softcap > 0)
        std::printf("soft-caps      attention logits %g, final logits %g (0 = none)\n",
                    c.attn_logit_softcap, c.final_logit_softcap);
    std::printf("context        %d tokens\n", c.max_position);
    std::printf("embeddings     %s\n", c.tie_word_embeddings ? "tied" : "untied");
    std::printf("chat template  %s\n", m.chat_template ? "yes" : "no");
    std::printf("tensor types\n");
    for (const auto& g : groups) {
        std::string types;
        for (const auto& [t, n] : g.dtype_counts)
            types += (types.empty() ? "" : ", ") + t + " x" + std::to_string(n);
        std::printf("  %-12s %-34s %10s  %6.2f bpw\n", g.group.c_str(), types.c_str(),
                    human_bytes(static_cast<double>(g.bytes)).c_str(), g.bits_per_weight());
    }
    std::printf("type histogram\n  %-8s %8s %14s %12s %8s\n", "type", "tensors", "parameters",
                "bytes", "bpw");
    for (const DTypeCount& e : hist.types)
        std::printf("  %-8s %8d %14lld %12s %8.3f\n", dtype_name(e.type), e.tensors,
                    static_cast<long long>(e.parameters),
                    human_bytes(static_cast<double>(e.bytes)).c_str(), e.bits_per_weight());
    std::printf("bits per weight %.3f over the weight matrices (%d tensors), %.3f over all %d "
                "tensors\n",
                hist.matrix_bits_per_weight(), hist.matrix_tensors, hist.bits_per_weight(),
                hist.tensors);
    std::printf("KV cache       %s per token (fp32)\n",
                human_bytes(static_cast<double>(kv_tok)).c_str());
    // What each --kv-cache-dtype holds in the same memory (blocks of 16, int8 with its scales).
    const int64_t f32_tokens = kv_tokens_per_gib(c, KvDtype::F32);
    std::printf("KV by type     ");
    for (KvDtype t : kAllKvDtypes) {
        const int64_t n = kv_tokens_per_gib(c, t);
        std::printf("%s%s %lld tok/GiB (%.2fx)", t == KvDtype::F32 ? "" : ", ", kv_dtype_name(t),
                    static_cast<long long>(n),
                    f32_tokens > 0 ? static_cast<double>(n) / static_cast<double>(f32_tokens)
                                   : 0.0);
    }
    std::printf("\n");
    std::printf("bf16 cache     %s (%d of %d matrices quantized; CUDA prefill, taken as the "
                "memory plan allows)\n",
                human_bytes(static_cast<double>(cache_bytes)).c_str(), cache_matrices, cache_slots);
    for (const std::string& d : describe_cuda_devices())
        std::printf("device         %s\n", d.c_str());
    std::printf("memory         %s weights + %s KV for %lld tokens = %s\n",
                human_bytes(static_cast<double>(m.weight_bytes)).c_str(),
                human_bytes(static_cast<double>(kv_total)).c_str(), static_cast<long long>(context),
                human_bytes(static_cast<double>(m.weight_bytes + kv_total)).c_str());
    return 0;
}

int cmd_make_model(const Args& argv) {
    const char* cmd = "make-model";
    auto args = CliArgs::parse(argv,
                               {"out",
                                "arch",
                                "format",
                                "type",
                                "shape",
                                "tokenizer",
                                "seed",
                                "hidden",
                                "intermediate",
                                "layers",
                                "heads",
                                "kv-heads",
                                "head-dim",
                                "vocab",
                                "context",
                                "rope-theta",
                                "tie",
                                "rope-scaling",
                                "name",
                                "embedding-std",
                                "rotary-dim",
                                "sliding-window",
                                "original-context",
                                "experts",
                                "experts-used",
                                "expert-intermediate"},
                               {"json", "help"});
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        std::string shapes;
        for (const auto& s : known_model_shapes())
            shapes += " " + s;
        std::string types;
        for (WeightType t : all_weight_types())
            types += std::string(" ") + weight_type_name(t);
        std::printf(
            "llmwb make-model --out PATH [--shape NAME]\n"
            "                 [--arch llama|mistral|qwen2|qwen3|gemma2|gemma3|phi3]\n"
            "                 [--format gguf|safetensors] [--type T]\n"
            "                 [--tokenizer DIR] [--seed S] [--hidden N] [--intermediate N]\n"
            "                 [--layers N] [--heads N] [--kv-heads N] [--head-dim N] [--vocab N]\n"
            "                 [--context N] [--rope-theta X] [--tie true|false]\n"
            "                 [--rope-scaling none|llama3|longrope] [--name TEXT]\n"
            "                 [--embedding-std X] [--rotary-dim N] [--sliding-window N]\n"
            "                 [--original-context N] [--experts N] [--experts-used K]\n"
            "                 [--expert-intermediate N] [--json]\n"
            "  Writes a deterministic model with RANDOM weights (for tests and benchmarks).\n"
            "  GGUF: PATH is the file; safetensors: PATH is a folder. Without --tokenizer the\n"
            "  built-in demo tokenizer is used; DIR holds tokenizer.json (+ "
            "tokenizer_config.json).\n"
            "  phi3: --rope-scaling longrope writes synthetic short/long factor sets for the\n"
            "  original context --original-context N (default 4096); --rotary-dim N rotates\n"
            "  the first N dims of each head. --sliding-window N: gemma2/3, phi3, or llama as a\n"
            "  mistral config.json (GGUF llama/mistral files carry no window).\n"
            "  --embedding-std X: std of the token embedding and lm_head (default 0.02; e.g. 0.3\n"
            "  gives peaked next-token distributions, as trained models have, for llmwb kld).\n"
            "  --arch qwen3moe: mixture of experts (default 8 experts, 2 used, expert\n"
            "  intermediate = intermediate / 2).\n"
            "  shapes:%s (default tiny)\n"
            "  types (default f32; safetensors: f32, f16, bf16):%s\n"
            "  A preset mix gives each tensor the type the recipes of %s choose,\n"
            "  with its fallbacks for row lengths a type cannot hold.\n",
            shapes.c_str(), types.c_str(), quantize_recipe_version());
        return 0;
    }
    auto out = args->get("out");
    if (!out)
        return fail(cmd, "give --out PATH");
    auto spec_or = writer_spec_for_shape(args->get_or("shape", "tiny"));
    if (!spec_or)
        return fail(cmd, spec_or.message());
    ModelWriterSpec spec = *spec_or;
    if (auto a = args->get("arch")) {
        if (*a == "llama" || *a == "mistral")
            spec.arch = Architecture::Llama;
        else if (*a == "qwen2")
            spec.arch = Architecture::Qwen2;
        else if (*a == "qwen3")
            spec.arch = Architecture::Qwen3;
        else if (*a == "gemma2" || *a == "gemma3")
            spec =
                gemma_spec_from(spec, *a == "gemma2" ? Architecture::Gemma2 : Architecture::Gemma3);
        else if (*a == "phi3")
            spec.arch = Architecture::Phi3;
        else if (*a == "qwen3moe")
            spec.arch = Architecture::Qwen3Moe;
        else
            return fail(cmd, "--arch: '" + *a +
                                 "' is not llama, mistral, qwen2, qwen3, gemma2, gemma3, phi3 or "
                                 "qwen3moe");
        if (spec.arch != Architecture::Phi3) { // a phi3 shape's extras do not carry over
            spec.rotary_dim = 0;
            if (spec.rope_scaling.kind == RopeScaling::Kind::LongRope)
                spec.rope_scaling = RopeScaling{};
        }
    }
    std::string format = args->get_or("format", "gguf");
    if (format == "gguf")
        spec.format = ModelFileFormat::Gguf;
    else if (format == "safetensors")
        spec.format = ModelFileFormat::Safetensors;
    else
        return fail(cmd, "--format: '" + format + "' is not gguf or safetensors");
    if (auto t = args->get("type")) {
        auto wt = parse_weight_type(*t);
        if (!wt)
            return fail(cmd, "--type: " + wt.message());
        spec.weight_type = *wt;
    }
    struct IntField {
        const char* name;
        int* field;
        int64_t lo, hi;
    };
    for (IntField f :
         {IntField{"hidden", &spec.hidden_size, 1, 65536},
          IntField{"intermediate", &spec.intermediate_size, 1, 1 << 20},
          IntField{"layers", &spec.num_layers, 1, 1024},
          IntField{"heads", &spec.num_heads, 1, 1024},
          IntField{"kv-heads", &spec.num_kv_heads, 1, 1024},
          IntField{"head-dim", &spec.head_dim, 2, 1024},
          IntField{"vocab", &spec.vocab_size, 0, 1 << 24},
          IntField{"context", &spec.max_position, 1, 1 << 24},
          IntField{"rotary-dim", &spec.rotary_dim, 2, 1024},
          IntField{"sliding-window", &spec.sliding_window, 1, 1 << 24},
          IntField{"experts", &spec.num_experts, 1, 1024},
          IntField{"experts-used", &spec.num_experts_used, 1, 1024},
          IntField{"expert-intermediate", &spec.expert_intermediate_size, 1, 1 << 20}}) {
        auto v = args->get_int(f.name, f.lo, f.hi);
        if (!v)
            return fail(cmd, v.message());
        if (*v)
            *f.field = static_cast<int>(**v);
    }
    if (spec.arch == Architecture::Qwen3Moe) { // defaults for shapes without experts
        if (spec.num_experts == 0)
            spec.num_experts = 8;
        if (spec.num_experts_used == 0)
            spec.num_experts_used = std::min(2, spec.num_experts);
        if (spec.expert_intermediate_size == 0)
            spec.expert_intermediate_size = std::max(1, spec.intermediate_size / 2);
    }
    auto seed = args->get_int("seed", 0, INT64_MAX);
    if (!seed)
        return fail(cmd, seed.message());
    if (*seed)
        spec.seed = static_cast<uint64_t>(**seed);
    auto emb_std = args->get_double("embedding-std", 1e-6, 10);
    if (!emb_std)
        return fail(cmd, emb_std.message());
    if (*emb_std)
        spec.embedding_std = static_cast<float>(**emb_std);
    auto theta = args->get_double("rope-theta", 1, 1e12);
    if (!theta)
        return fail(cmd, theta.message());
    if (*theta)
        spec.rope_theta = static_cast<float>(**theta);
    auto tie = args->get_bool("tie");
    if (!tie)
        return fail(cmd, tie.message());
    if (*tie)
        spec.tie_word_embeddings = **tie;
    if (auto rs = args->get("rope-scaling")) {
        if (*rs == "none")
            spec.rope_scaling = RopeScaling{};
        else if (*rs == "llama3") {
            spec.rope_scaling.kind = RopeScaling::Kind::Llama3;
            spec.rope_scaling.factor = 8.0f;
            spec.rope_scaling.low_freq_factor = 1.0f;
            spec.rope_scaling.high_freq_factor = 4.0f;
            spec.rope_scaling.original_max_position = 8192;
        } else if (*rs == "longrope") {
            if (spec.rope_scaling.kind != RopeScaling::Kind::LongRope) {
                spec.rope_scaling = RopeScaling{};
                spec.rope_scaling.kind = RopeScaling::Kind::LongRope;
                spec.rope_scaling.original_max_position = 4096;
            }
        } else
            return fail(cmd, "--rope-scaling: '" + *rs + "' is not none, llama3 or longrope");
    }
    auto orig = args->get_int("original-context", 2, 1 << 24);
    if (!orig)
        return fail(cmd, orig.message());
    // LongRoPE factor sets sized for the final rotary dims (a shape's, or regenerated).
    if (spec.rope_scaling.kind == RopeScaling::Kind::LongRope) {
        const int hd = spec.head_dim > 0 ? spec.head_dim : spec.hidden_size / spec.num_heads;
        const size_t n = size_t((spec.rotary_dim > 0 ? spec.rotary_dim : hd) / 2);
        if (*orig || spec.rope_scaling.short_factor.size() != n)
            set_synthetic_longrope(spec, *orig ? static_cast<int>(**orig)
                                         : spec.rope_scaling.original_max_position > 2
                                             ? spec.rope_scaling.original_max_position
                                             : 4096);
    }
    if (auto n = args->get("name"))
        spec.name = *n;
    spec.tokenizer_dir = args->get_or("tokenizer", "");

    ModelWriteReport report;
    if (auto st = write_model(spec, *out, &report); !st)
        return fail(cmd, st.message());
    if (args->has("json")) {
        nlohmann::json j;
        j["path"] = *out;
        j["parameters"] = report.parameter_count;
        j["weight_bytes"] = report.weight_bytes;
        j["tensors"] = report.tensors.size();
        j["fallback_tensors"] = report.fallback_tensors;
        std::cout << dump_json(j) << "\n";
    } else {
        std::printf("wrote %s: %s, %lld parameters, %zu tensors, %s%s\n", out->c_str(),
                    architecture_name(spec.arch), static_cast<long long>(report.parameter_count),
                    report.tensors.size(),
                    human_bytes(static_cast<double>(report.weight_bytes)).c_str(),
                    report.fallback_tensors
                        ? (" (" + std::to_string(report.fallback_tensors) +
                           " tensors in a fallback type: row length not a multiple of the block)")
                              .c_str()
                        : "");
    }
    return 0;
}

} // namespace llmwb::cli
