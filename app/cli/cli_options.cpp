#include "app/cli/cli_options.h"

#include <algorithm>

namespace llmwb::cli {

OptionNames& OptionNames::add(const OptionNames& other) {
    values.insert(other.values.begin(), other.values.end());
    flags.insert(other.flags.begin(), other.flags.end());
    return *this;
}

Result<CliArgs> OptionNames::parse(const std::vector<std::string>& argv) const {
    return CliArgs::parse(argv, values, flags);
}

// ---- device

const char* kDeviceOptionsHelp =
    "  --device auto|cpu|cuda    backend (default auto: CUDA when the plugin and a GPU are\n"
    "                            present, else the CPU)\n"
    "  --kv-cache-dtype T        element type of the KV cache (vLLM's name; --kv-dtype is an\n"
    "                            alias): auto (default: f16, on the CPU as on CUDA), f32, f16,\n"
    "                            bf16, fp8 (= fp8_e4m3), fp8_e4m3, fp8_e5m2, int8 (one fp32\n"
    "                            scale per token and KV head); a type the backend cannot store\n"
    "                            is refused\n"
    "  --calculate-kv-scales     fp8: per-layer K/V scales from the model's K/V ranges over a\n"
    "                            short built-in text before the run (default: scales of 1.0, as\n"
    "                            vLLM)\n"
    "  --dtype auto|bfloat16     float weights (vLLM's flag): auto (default) runs every\n"
    "                            matrix as stored; bfloat16 casts the F32 / F16 matrices to\n"
    "                            BF16 at load on the CPU (round to nearest even: no more\n"
    "                            memory, faster prefill with AVX512_BF16; outputs change by the\n"
    "                            rounding, `llmwb kld --dtype bfloat16` measures it)\n"
    "  --no-cuda-graphs          run CUDA decode steps eagerly (no CUDA graphs)\n"
    "  --threads N               CPU threads (default: all cores)\n";

const OptionNames& device_option_names() {
    // kv-int8-experiment: measurement only (scripts/kv-fidelity.sh), not in --help.
    static const OptionNames n{
        {"device", "kv-cache-dtype", "kv-dtype", "dtype", "threads", "kv-int8-experiment"},
        {"no-cuda-graphs", "calculate-kv-scales"}};
    return n;
}

std::string kv_dtype_option_name(const std::optional<KvDtype>& t) {
    return t ? kv_dtype_name(*t) : "auto";
}

Result<DeviceOptions> parse_device_options(const CliArgs& a) {
    DeviceOptions o;
    const std::string device = a.get_or("device", "auto");
    const auto pref = parse_device_preference(device);
    if (!pref)
        return make_error("--device must be auto, cpu or cuda, got '" + device + "'");
    o.device = *pref;
    if (a.has("kv-cache-dtype") && a.has("kv-dtype"))
        return make_error("give --kv-cache-dtype or its alias --kv-dtype, not both");
    const char* kv_flag = a.has("kv-dtype") ? "--kv-dtype" : "--kv-cache-dtype";
    const std::string kv = a.get("kv-dtype").value_or(a.get_or("kv-cache-dtype", "auto"));
    if (kv != "auto") {
        const auto t = parse_kv_dtype(kv);
        if (!t)
            return make_error(std::string(kv_flag) + " must be one of " + kv_dtype_choices() +
                              ", got '" + kv + "'");
        o.kv_dtype = *t;
    }
    o.calculate_kv_scales = a.has("calculate-kv-scales");
    if (o.calculate_kv_scales && !(o.kv_dtype && kv_dtype_is_fp8(*o.kv_dtype)))
        return make_error("--calculate-kv-scales needs an fp8 --kv-cache-dtype (fp8, fp8_e4m3, "
                          "fp8_e5m2), got " +
                          kv_dtype_option_name(o.kv_dtype));
    if (auto e = a.get("kv-int8-experiment")) {
        if (*e == "tokenhead")
            o.int8_experiment = KvInt8Experiment::TokenHead;
        else if (*e == "token")
            o.int8_experiment = KvInt8Experiment::Token;
        else if (*e == "kchannel")
            o.int8_experiment = KvInt8Experiment::KeyChannel;
        else if (*e != "off")
            return make_error(
                "--kv-int8-experiment must be tokenhead, token, kchannel or off, got '" + *e + "'");
        if (o.int8_experiment != KvInt8Experiment::Off && o.kv_dtype && *o.kv_dtype != KvDtype::F32)
            return make_error("--kv-int8-experiment simulates int8 on an f32 KV cache: give "
                              "--kv-cache-dtype f32 or auto");
        if (o.int8_experiment != KvInt8Experiment::Off && o.device == DevicePreference::Cuda)
            return make_error("--kv-int8-experiment runs on the CPU only");
        if (o.int8_experiment != KvInt8Experiment::Off) {
            o.device = DevicePreference::Cpu;
            o.kv_dtype = KvDtype::F32; // auto is f16: the simulation needs the f32 pool
        }
    }
    o.cuda_graphs = !a.has("no-cuda-graphs");
    if (const auto d = a.get("dtype")) {
        const auto w = parse_weight_dtype(*d);
        if (!w)
            return make_error("--dtype must be auto or bfloat16 (bf16), got '" + d->substr(0, 64) +
                              "'");
        o.weight_dtype = *w;
    }
    auto threads = a.get_int("threads", 1, 1024);
    if (!threads)
        return threads.error();
    o.threads = static_cast<int>(threads->value_or(0));
    return o;
}

// ---- engine

const char* kEngineOptionsHelp =
    "  --block-size N            KV block size: 8, 16 or 32 (default 16)\n"
    "  --max-num-seqs N          requests running at once (default 64)\n"
    "  --max-num-batched-tokens N  token budget of one step (default 512)\n"
    "  --kv-budget-mb MB         KV cache size (default: what the requests can use, within\n"
    "                            gpu-memory-utilization x memory - weights - workspace)\n"
    "  --gpu-memory-utilization F  fraction of the GPU's memory the engine may use (default\n"
    "                            0.9); on the CPU a share of the memory available to it, the\n"
    "                            pool at most 4 full contexts, committed as blocks fill\n"
    "  --no-prefix-caching       disable prefix caching\n"
    "  --no-device-greedy        CUDA: copy logits back for greedy requests too (default: argmax\n"
    "                            on the device when every request of a step is greedy)\n";

const char* kSpeculativeOptionsHelp =
    "speculative decoding:\n"
    "  --speculative-method ngram|draft|self-q4|off  ngram: drafts by prompt lookup; draft: by\n"
    "                            --draft-model; self-q4: by the model's own weights re-quantized\n"
    "                            to 4 bits at load (default off)\n"
    "  --draft-model M           the draft model (GGUF file or Hugging Face folder) with the\n"
    "                            target's vocabulary\n"
    "  --num-speculative-tokens K|auto  draft tokens verified per step, 0..16 (default 4 with\n"
    "                            ngram); auto: up to 8, chosen per request and step from the\n"
    "                            measured acceptance and step cost (none where they do not pay)\n"
    "  --prompt-lookup-min N     shortest n-gram looked up (default 2)\n"
    "  --prompt-lookup-max N     longest n-gram looked up (default 5)\n";

const OptionNames& engine_option_names() {
    static const OptionNames n = [] {
        OptionNames o{{"block-size", "max-num-seqs", "max-num-batched-tokens", "kv-budget-mb",
                       "gpu-memory-utilization"},
                      {"no-prefix-caching", "no-device-greedy"}};
        return o.add(speculative_option_names());
    }();
    return n;
}

const OptionNames& speculative_option_names() {
    static const OptionNames n{{"speculative-method", "num-speculative-tokens", "prompt-lookup-min",
                                "prompt-lookup-max", "draft-model"},
                               {}};
    return n;
}

Result<SpeculativeConfig> parse_speculative_options(const CliArgs& a) {
    SpeculativeConfig c;
    const std::string method = a.get_or("speculative-method", "off");
    if (method == "ngram" || method == "draft" || method == "self-q4") {
        c.method = method == "ngram"   ? SpeculativeMethod::Ngram
                   : method == "draft" ? SpeculativeMethod::Draft
                                       : SpeculativeMethod::SelfQ4;
        c.num_speculative_tokens = 4;
    } else if (method != "off") {
        return make_error("--speculative-method must be ngram, draft, self-q4 or off, got '" +
                          method + "'");
    }
    if (auto d = a.get("draft-model")) {
        if (c.method != SpeculativeMethod::Draft)
            return make_error("--draft-model needs --speculative-method draft");
        c.draft_model = *d;
    } else if (c.method == SpeculativeMethod::Draft) {
        return make_error("--speculative-method draft needs --draft-model M");
    }
    if (a.get("num-speculative-tokens") == std::optional<std::string>("auto")) {
        if (c.method == SpeculativeMethod::Off)
            return make_error("--num-speculative-tokens needs --speculative-method");
        c.auto_k = true;
        c.num_speculative_tokens = kAutoSpeculativeTokens;
    }
    auto k = c.auto_k ? Result<std::optional<int64_t>>(std::optional<int64_t>())
                      : a.get_int("num-speculative-tokens", 0, kMaxSpeculativeTokens);
    if (!k)
        return k.error();
    if (*k) {
        if (c.method == SpeculativeMethod::Off && **k > 0)
            return make_error("--num-speculative-tokens needs --speculative-method");
        c.num_speculative_tokens = static_cast<int32_t>(**k);
    }
    auto lo = a.get_int("prompt-lookup-min", 1, 64);
    if (!lo)
        return lo.error();
    auto hi = a.get_int("prompt-lookup-max", 1, 64);
    if (!hi)
        return hi.error();
    if (*lo)
        c.prompt_lookup_min = static_cast<int32_t>(**lo);
    if (*hi)
        c.prompt_lookup_max = static_cast<int32_t>(**hi);
    if (*lo && !*hi)
        c.prompt_lookup_max = std::max(c.prompt_lookup_max, c.prompt_lookup_min);
    if (*hi && !*lo)
        c.prompt_lookup_min = std::min(c.prompt_lookup_min, c.prompt_lookup_max);
    if (Status st = c.validate(); !st)
        return st.error();
    return c;
}

Result<EngineOptions> parse_engine_options(const CliArgs& a) {
    EngineOptions o;
    EngineConfig& c = o.config;
    auto bs = a.get_int("block-size", INT32_MIN, INT32_MAX);
    if (!bs)
        return bs.error();
    if (*bs) {
        if (Status st = check_kv_block_size(**bs, "--block-size"); !st)
            return st.error();
        c.block_size = static_cast<int32_t>(**bs);
    }
    auto seqs = a.get_int("max-num-seqs", 1, 1 << 16);
    if (!seqs)
        return seqs.error();
    if (*seqs)
        c.max_num_seqs = static_cast<int32_t>(**seqs);
    auto toks = a.get_int("max-num-batched-tokens", 1, 1 << 20);
    if (!toks)
        return toks.error();
    if (*toks)
        c.max_num_batched_tokens = static_cast<int32_t>(**toks);
    auto kv = a.get_double("kv-budget-mb", 0.001, 1 << 24);
    if (!kv)
        return kv.error();
    if (*kv)
        c.memory.kv_bytes = static_cast<int64_t>(**kv * 1024.0 * 1024.0);
    auto util = a.get_double("gpu-memory-utilization", 0.0001, 1.0);
    if (!util)
        return util.error();
    if (*util)
        c.memory.utilization = **util;
    o.memory_given = kv->has_value() || util->has_value();
    if (a.has("no-prefix-caching"))
        c.enable_prefix_caching = false;
    if (a.has("no-device-greedy"))
        c.device_greedy = false;
    auto spec = parse_speculative_options(a);
    if (!spec)
        return spec.error();
    c.speculative = *spec;
    return o;
}

void EngineOptions::size_to_need(int64_t tokens, int64_t seqs) {
    if (memory_given)
        return;
    config.memory.need_tokens = std::max<int64_t>(1, tokens);
    config.memory.need_seqs = static_cast<int32_t>(std::clamp<int64_t>(seqs, 1, INT32_MAX));
}

// ---- sampling

const OptionNames& sampling_option_names() {
    static const OptionNames n = [] {
        OptionNames o;
        for (const SamplingField& f : sampling_fields())
            (f.type == SamplingFieldType::Flag ? o.flags : o.values)
                .insert(sampling_flag(f).substr(2));
        return o;
    }();
    return n;
}

std::string sampling_options_help() {
    std::string s;
    for (const SamplingField& f : sampling_fields()) {
        std::string left = "  " + sampling_flag(f);
        if (f.type != SamplingFieldType::Flag)
            left += f.type == SamplingFieldType::Strings    ? " S"
                    : f.type == SamplingFieldType::TokenIds ? " LIST"
                                                            : " X";
        left.resize(std::max<size_t>(left.size() + 1, 28), ' ');
        s += left + std::string(f.help);
        if (f.type == SamplingFieldType::Real || f.type == SamplingFieldType::Integer)
            s += "; " + std::string(f.range);
        s += "\n";
    }
    return s;
}

Result<SamplingParams> parse_sampling_options(const CliArgs& a, SamplingParams p) {
    for (const SamplingField& f : sampling_fields()) {
        const std::string flag = sampling_flag(f);
        const std::string name = flag.substr(2);
        if (!a.has(name))
            continue;
        if (f.type == SamplingFieldType::Flag) {
            if (Status st = set_sampling_text(p, f, "true"); !st)
                return make_error(flag + ": " + st.message());
            continue;
        }
        if (f.type == SamplingFieldType::Strings)
            p.stop.clear();
        for (const std::string& v : f.type == SamplingFieldType::Strings
                                        ? a.get_all(name)
                                        : std::vector<std::string>{*a.get(name)})
            if (Status st = set_sampling_text(p, f, v); !st)
                return make_error(flag + ": " + st.message());
    }
    return p;
}

} // namespace llmwb::cli
