#include "app/cli/bench_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>

namespace llmwb::cli {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Unsupported {
    std::string_view name;
    std::string_view reason;
};

constexpr std::string_view kInProcess =
    "llmwb bench's HTTP client (--endpoint) sends the model, prompt and lengths only";
constexpr std::string_view kTokenizer =
    "llmwb bench uses the model's own tokenizer (--tokenizer is a local model for --endpoint runs)";
constexpr std::string_view kGreedy =
    "every llmwb bench request is greedy (temperature 0) and ignores EOS, as vLLM's default "
    "random-dataset run";
constexpr std::string_view kDatasets =
    "llmwb bench has the random dataset (--dataset-name random) and --dataset FILE.jsonl";
constexpr std::string_view kFigures =
    "llmwb bench reports no goodput; it reports the mean, median, std and the percentiles "
    "(--metric-percentiles) of TTFT, TPOT, ITL and E2EL";

constexpr Unsupported kUnsupported[] = {
    {"host", "give the server as --endpoint http://HOST:PORT (or --base-url)"},
    {"port", "give the server as --endpoint http://HOST:PORT (or --base-url)"},
    {"header", kInProcess},
    {"lora-modules", kInProcess},
    {"request-id-prefix", kInProcess},
    {"ready-check-timeout-sec", kInProcess},
    {"extra-body", kInProcess},
    {"trust-remote-code", kInProcess},
    {"tokenizer-mode", kTokenizer},
    {"temperature", kGreedy},
    {"top-p", kGreedy},
    {"top-k", kGreedy},
    {"min-p", kGreedy},
    {"frequency-penalty", kGreedy},
    {"presence-penalty", kGreedy},
    {"repetition-penalty", kGreedy},
    {"logprobs", kGreedy},
    {"use-beam-search", kGreedy},
    {"dataset-path", kDatasets},
    {"sharegpt-output-len", kDatasets},
    {"sonnet-input-len", kDatasets},
    {"sonnet-output-len", kDatasets},
    {"sonnet-prefix-len", kDatasets},
    {"custom-output-len", kDatasets},
    {"custom-skip-chat-template", kDatasets},
    {"hf-subset", kDatasets},
    {"hf-split", kDatasets},
    {"hf-output-len", kDatasets},
    {"hf-name", kDatasets},
    {"random-batch-size", kDatasets},
    {"no-oversample", kDatasets},
    {"skip-chat-template", kDatasets},
    {"disable-shuffle", kDatasets},
    {"goodput", kFigures},
    {"append-result", "each run writes its own result file"},
    {"metadata", "the result file holds llmwb's own fields only"},
    {"profile", "llmwb has no torch profiler"},
    {"num-warmups", "llmwb bench runs no warm-up requests"},
    {"ramp-up-strategy", "the request rate is constant (--request-rate, --burstiness)"},
    {"ramp-up-start-rps", "the request rate is constant (--request-rate, --burstiness)"},
    {"ramp-up-end-rps", "the request rate is constant (--request-rate, --burstiness)"},
};

// vLLM names that mean the same as llmwb's own.
struct Alias {
    const char* own;
    const char* vllm;
};
constexpr Alias kAliases[] = {{"input-len", "random-input-len"},
                              {"output-len", "random-output-len"},
                              {"range-ratio", "random-range-ratio"},
                              {"prefix-len", "random-prefix-len"}};

// The name of an option given under either of its names (an error when both are given).
Result<std::string> alias_given(const CliArgs& a, const Alias& al) {
    if (a.has(al.own) && a.has(al.vllm))
        return make_error(std::string("give --") + al.own + " or --" + al.vllm + ", not both");
    return std::string(a.has(al.vllm) ? al.vllm : al.own);
}

Status read_int(const CliArgs& a, const std::string& name, int64_t lo, int64_t hi, int32_t& field) {
    auto v = a.get_int(name, lo, hi);
    if (!v)
        return v.error();
    if (*v)
        field = static_cast<int32_t>(**v);
    return ok_status();
}

// A rate or burstiness: a positive number or "inf".
Result<std::optional<double>> positive_or_inf(const CliArgs& a, const std::string& name) {
    auto s = a.get(name);
    if (!s)
        return std::optional<double>{};
    if (*s == "inf")
        return std::optional<double>{kInf};
    auto v = a.get_double(name, 0, 1e9);
    if (!v)
        return v.error();
    if (!(**v > 0))
        return make_error("--" + name + " must be > 0 or inf, got " + *s);
    return *v;
}

Result<std::vector<BenchPolicy>> parse_policies(const std::string& list) {
    std::vector<BenchPolicy> out;
    std::stringstream ss(list);
    std::string name;
    while (std::getline(ss, name, ',')) {
        if (name == "continuous")
            out.push_back({name, SchedulerPolicy::Continuous});
        else if (name == "static")
            out.push_back({name, SchedulerPolicy::Static});
        else if (name == "sequential")
            out.push_back({name, SchedulerPolicy::Sequential});
        else
            return make_error("--policy: unknown policy '" + name +
                              "' (continuous, static, sequential)");
    }
    if (out.empty())
        return make_error("--policy: no policy given");
    return out;
}

} // namespace

const char* kBenchHelp =
    "llmwb bench [--model M] [options]\n"
    "workload (vLLM's `vllm bench serve` names in brackets):\n"
    "  --input-len N --output-len N   synthetic prompt/output lengths (default 128 / 128)\n"
    "                            [--random-input-len, --random-output-len]\n"
    "  --range-ratio R           lengths uniform in [len*(1-R), len*(1+R)] (default 0)\n"
    "                            [--random-range-ratio]\n"
    "  --prefix-len N            shared prefix tokens before every prompt (default 0)\n"
    "                            [--random-prefix-len]\n"
    "  --num-prompts N           requests (default 32)\n"
    "  --dataset-name random     the synthetic workload above (the only vLLM dataset here)\n"
    "  --dataset FILE.jsonl      prompts from a file (\"prompt\"/\"ids\", optional max_tokens)\n"
    "  --seed S                  workload and arrival seed (default 0)\n"
    "  --request-rate R          arrivals, requests/s (default inf: all at once)\n"
    "  --burstiness B            gamma shape of the arrival gaps; 1 (default) = Poisson\n"
    "  --max-concurrency N       requests in flight at most (default: no cap)\n"
    "  --ignore-eos              accepted: bench requests always ignore EOS\n"
    "engine:\n"
    "  --policy P[,P...]         continuous | static | sequential (default continuous);\n"
    "                            several: the same workload under each, ratios vs the first\n"
    "  --baseline-prompts N      run only the first N requests under 'sequential' (it is slow)\n"
    "  --static-no-padding       'static' without padding (default: batches padded to their\n"
    "                            longest prompt and output, as generate() runs a batch)\n"
    "output:\n"
    "  --json FILE               llmwb's report of every policy (KV usage, prefix cache ...)\n"
    "  --save-result             vLLM's result JSON (its keys) for the run (one policy)\n"
    "  --save-detailed           ... with per-request input_lens, output_lens, ttfts, itls,\n"
    "                            generated_texts, errors and output_ids\n"
    "  --result-dir D --result-filename F   where (default: "
    "./llmwb-<rate>qps-<model>-<date>.json;\n"
    "                            either implies --save-result)\n"
    "  --label L                 the result's label (default llmwb)\n"
    "  --percentile-metrics L    latencies given percentiles, of ttft,tpot,itl,e2el (default\n"
    "                            all four): the printed lines and the p<q>_<metric>_ms keys\n"
    "  --metric-percentiles L    the percentiles, e.g. 50,90,99 (default 99)\n"
    "  --report OUT              the benchmark report of every policy: OUT.zip (report.html,\n"
    "                            results.json, requests.csv, steps.csv, environment.json) or a\n"
    "                            folder OUT of the same files (`llmwb report show OUT`)\n"
    "  --quiet | --disable-tqdm  no progress line (drawn only when stderr is a terminal)\n"
    "remote endpoint (an OpenAI-compatible server: vLLM, SGLang, llama.cpp, Ollama, llmwb serve):\n"
    "  --endpoint URL            send the workload to URL (http[s]://host:port[/v1]) instead of\n"
    "                            running the engine here; --model NAME is the served model\n"
    "                            [--base-url URL with --endpoint /v1/completions as vLLM]\n"
    "                            (without --max-concurrency: at most 256 connections)\n"
    "  --endpoint-type T         completions (default) | chat [--backend openai|openai-chat]\n"
    "  --api-key K               sent as Authorization: Bearer (default $OPENAI_API_KEY)\n"
    "  --served-model-name N     the model name sent when --model is a local path\n"
    "  --tokenizer PATH          a local model whose tokenizer turns the workload's token ids\n"
    "                            into text and counts tokens when the server sends no usage\n"
    "                            (default: --model when it is a local path; else prompts are\n"
    "                            random words and the server's usage gives the counts)\n"
    "Other `vllm bench serve` options (--host, --header, --temperature, --goodput ...)\n"
    "are refused with the reason.\n";

const OptionNames& bench_option_names() {
    static const OptionNames n = [] {
        OptionNames o{{"model",
                       "input-len",
                       "output-len",
                       "range-ratio",
                       "num-prompts",
                       "request-rate",
                       "burstiness",
                       "max-concurrency",
                       "prefix-len",
                       "seed",
                       "dataset",
                       "dataset-name",
                       "policy",
                       "json",
                       "baseline-prompts",
                       "random-input-len",
                       "random-output-len",
                       "random-range-ratio",
                       "random-prefix-len",
                       "result-dir",
                       "result-filename",
                       "label",
                       "percentile-metrics",
                       "metric-percentiles",
                       "report",
                       "endpoint",
                       "base-url",
                       "endpoint-type",
                       "backend",
                       "api-key",
                       "served-model-name",
                       "tokenizer"},
                      {"help", "quiet", "disable-tqdm", "static-no-padding", "ignore-eos",
                       "save-result", "save-detailed"}};
        return o.add(device_option_names()).add(engine_option_names());
    }();
    return n;
}

std::optional<std::string> unsupported_vllm_option(std::string_view name) {
    for (const Unsupported& u : kUnsupported)
        if (u.name == name)
            return std::string(u.reason);
    if (name.rfind("random-mm-", 0) == 0 || name.rfind("prefix-repetition-", 0) == 0 ||
        name.rfind("spec-bench-", 0) == 0)
        return std::string(kDatasets);
    return std::nullopt;
}

std::string vllm_percentile_name(double q) {
    if (std::isfinite(q) && q == std::floor(q) && std::fabs(q) < 1e15)
        return std::to_string(static_cast<int64_t>(q));
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, q); // shortest, as Python's repr
    return ec == std::errc() ? std::string(buf, end) : std::to_string(q);
}

namespace {

std::vector<std::string> split_commas(const std::string& list) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (true) {
        const size_t comma = list.find(',', pos);
        out.push_back(
            list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        if (comma == std::string::npos)
            return out;
        pos = comma + 1;
    }
}

} // namespace

Result<std::vector<std::string>> parse_percentile_metrics(const std::string& list) {
    std::vector<std::string> out;
    for (const std::string& m : split_commas(list)) {
        if (m != "ttft" && m != "tpot" && m != "itl" && m != "e2el")
            return make_error("--percentile-metrics: unknown metric '" + m +
                              "' (ttft, tpot, itl, e2el)");
        if (std::find(out.begin(), out.end(), m) != out.end())
            return make_error("--percentile-metrics: '" + m + "' given twice");
        out.push_back(m);
    }
    return out;
}

Result<std::vector<double>> parse_metric_percentiles(const std::string& list) {
    constexpr size_t kMax = 32;
    std::vector<double> out;
    for (const std::string& item : split_commas(list)) {
        double q = 0;
        const char* b = item.data();
        const char* e = b + item.size();
        auto [end, ec] = std::from_chars(b, e, q);
        if (item.empty() || ec != std::errc() || end != e || !std::isfinite(q))
            return make_error("--metric-percentiles: '" + item + "' is not a number");
        if (q < 0 || q > 100)
            return make_error("--metric-percentiles: " + item + " is outside [0, 100]");
        if (std::find(out.begin(), out.end(), q) != out.end())
            return make_error("--metric-percentiles: " + item + " given twice");
        if (out.size() == kMax)
            return make_error("--metric-percentiles: more than " + std::to_string(kMax) +
                              " percentiles");
        out.push_back(q);
    }
    return out;
}

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The endpoint options (nullopt without --endpoint or --base-url).
Result<std::optional<BenchEndpoint>> parse_bench_endpoint(const CliArgs& a) {
    auto endpoint = a.get("endpoint");
    auto base = a.get("base-url");
    if (!endpoint && !base)
        return std::optional<BenchEndpoint>{};
    BenchEndpoint e;
    std::string path; // vLLM's --endpoint: the API route under --base-url
    if (base) {
        e.base_url = *base;
        if (endpoint) {
            if (endpoint->empty() || (*endpoint)[0] != '/')
                return make_error("--endpoint with --base-url is the API route, e.g. "
                                  "/v1/completions (vLLM's meaning); got '" +
                                  *endpoint + "'");
            path = *endpoint;
        }
    } else if (!endpoint->empty() && (*endpoint)[0] == '/') {
        return make_error("--endpoint " + *endpoint +
                          " is a route: give the server too (--base-url http://HOST:PORT), or "
                          "the whole URL as --endpoint");
    } else {
        e.base_url = *endpoint;
    }
    // A URL that names the route itself: ".../v1/chat/completions".
    std::string route_type;
    for (const auto& [tail, type] :
         {std::pair<std::string, std::string>{"/chat/completions", "chat"},
          {"/completions", "completions"}}) {
        if (!path.empty() && ends_with(path, tail)) {
            route_type = type;
            break;
        }
        if (path.empty() && ends_with(e.base_url, tail)) {
            e.base_url.resize(e.base_url.size() - tail.size());
            route_type = type;
            break;
        }
    }
    if (!path.empty() && route_type.empty())
        return make_error("--endpoint " + path +
                          ": llmwb bench sends /v1/completions or /v1/chat/completions");
    std::string type = route_type.empty() ? "completions" : route_type;
    if (auto b = a.get("backend")) {
        if (*b == "openai" || *b == "vllm")
            type = "completions";
        else if (*b == "openai-chat")
            type = "chat";
        else
            return make_error("--backend " + *b +
                              ": llmwb bench speaks the OpenAI API (openai, vllm, openai-chat)");
    }
    if (auto t = a.get("endpoint-type")) {
        if (*t != "completions" && *t != "chat")
            return make_error("--endpoint-type: '" + *t + "' is not completions or chat");
        type = *t;
    }
    if (!route_type.empty() && type != route_type)
        return make_error("the endpoint's route is " + route_type + " but the type asked is " +
                          type);
    e.type = type;
    auto model = a.get("model");
    auto served = a.get("served-model-name");
    if (!model && !served)
        return make_error("--endpoint: give --model NAME (the served model)");
    e.model = served ? *served : *model;
    if (auto k = a.get("api-key"))
        e.api_key = *k;
    else if (const char* env = std::getenv("OPENAI_API_KEY"))
        e.api_key = env;
    if (auto t = a.get("tokenizer"))
        e.tokenizer = *t;
    else if (model && std::filesystem::exists(*model))
        e.tokenizer = *model;
    return std::optional<BenchEndpoint>(std::move(e));
}

} // namespace

Result<BenchOptions> parse_bench_options(const std::vector<std::string>& argv) {
    const OptionNames& names = bench_option_names();
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& s = argv[i];
        if (s.rfind("--", 0) != 0)
            continue;
        const std::string name =
            s.substr(2, s.find('=') == std::string::npos ? std::string::npos : s.find('=') - 2);
        if (auto why = unsupported_vllm_option(name))
            return make_error(
                "--" + name +
                " is a vllm bench serve option llmwb bench does not support: " + *why);
        if (names.values.count(name) && s.find('=') == std::string::npos)
            ++i; // its value
    }
    auto parsed = names.parse(argv);
    if (!parsed)
        return parsed.error();
    const CliArgs& a = *parsed;
    BenchOptions o;
    o.model = a.get("model");
    RandomWorkloadSpec& spec = o.spec;
    std::string given[4];
    for (int k = 0; k < 4; ++k) {
        auto g = alias_given(a, kAliases[k]);
        if (!g)
            return g.error();
        given[k] = *g;
    }
    for (Status st : {read_int(a, given[0], 1, 1 << 20, spec.input_len),
                      read_int(a, given[1], 1, 1 << 20, spec.output_len),
                      read_int(a, given[3], 0, 1 << 20, spec.prefix_len),
                      read_int(a, "num-prompts", 1, 1 << 20, spec.num_prompts),
                      read_int(a, "max-concurrency", 1, 1 << 20, o.max_concurrency),
                      read_int(a, "baseline-prompts", 1, 1 << 20, o.baseline_prompts)})
        if (!st)
            return st.error();
    auto rr = a.get_double(given[2], 0, 0.999);
    if (!rr)
        return rr.error();
    if (*rr)
        spec.range_ratio = **rr;
    auto seed = a.get_int("seed", 0, INT64_MAX);
    if (!seed)
        return seed.error();
    if (*seed)
        spec.seed = static_cast<uint64_t>(**seed);
    auto rate = positive_or_inf(a, "request-rate");
    if (!rate)
        return rate.error();
    o.request_rate = rate->value_or(kInf);
    auto burst = positive_or_inf(a, "burstiness");
    if (!burst)
        return burst.error();
    o.burstiness = burst->value_or(1.0);
    if (auto ds = a.get("dataset-name"); ds && *ds != "random")
        return make_error("--dataset-name " + *ds +
                          " is a vllm bench serve dataset llmwb bench does not support: " +
                          std::string(kDatasets));
    o.dataset = a.get("dataset");
    if (o.dataset && a.has("dataset-name"))
        return make_error("give --dataset FILE.jsonl or --dataset-name random, not both");
    auto policies = parse_policies(a.get_or("policy", "continuous"));
    if (!policies)
        return policies.error();
    o.policies = std::move(policies.value());
    o.static_padding = !a.has("static-no-padding");
    o.progress = !a.has("quiet") && !a.has("disable-tqdm");
    o.json_path = a.get("json");
    o.save_detailed = a.has("save-detailed");
    o.result_dir = a.get_or("result-dir", "");
    o.result_filename = a.get_or("result-filename", "");
    o.save_result =
        a.has("save-result") || o.save_detailed || a.has("result-dir") || a.has("result-filename");
    o.label = a.get_or("label", "llmwb");
    if (auto pm = a.get("percentile-metrics")) {
        auto m = parse_percentile_metrics(*pm);
        if (!m)
            return m.error();
        o.percentile_metrics = std::move(m.value());
    }
    if (auto mp = a.get("metric-percentiles")) {
        auto q = parse_metric_percentiles(*mp);
        if (!q)
            return q.error();
        o.metric_percentiles = std::move(q.value());
    }
    o.report = a.get("report");
    if (o.report && o.report->empty())
        return make_error("--report: give a file name ending in .zip or a folder");
    if (o.save_result && o.policies.size() != 1)
        return make_error("--save-result writes the result of one run: give one --policy");
    if (Status st = parse_serving_options(a, o); !st)
        return st.error();
    auto ep = parse_bench_endpoint(a);
    if (!ep)
        return ep.error();
    o.endpoint = std::move(ep.value());
    if (o.endpoint) {
        OptionNames engine_side = device_option_names();
        engine_side.add(engine_option_names());
        for (const std::string& n : engine_side.values)
            if (a.has(n))
                return make_error("--" + n +
                                  " sets the engine here; it does not apply to an --endpoint run");
        for (const std::string& n : engine_side.flags)
            if (a.has(n))
                return make_error("--" + n +
                                  " sets the engine here; it does not apply to an --endpoint run");
        for (const char* n : {"policy", "baseline-prompts", "static-no-padding"})
            if (a.has(n))
                return make_error(
                    std::string("--") + n +
                    " chooses the engine's scheduling; it does not apply to an --endpoint run");
    } else {
        for (const char* n :
             {"endpoint-type", "backend", "api-key", "served-model-name", "tokenizer"})
            if (a.has(n))
                return make_error(std::string("--") + n + " needs --endpoint URL (a remote run)");
    }
    return o;
}

} // namespace llmwb::cli
