// llmwb bench: an in-process serving benchmark over the engine. Synthetic prompts (vLLM's
// random dataset: lengths drawn with a range ratio, optional shared prefix) or a JSONL file;
// all at once or Poisson arrivals; a concurrency cap. Prints (and writes with --json) vLLM's
// benchmark figures under the same names, plus KV usage and the prefix-cache hit rate. Several
// policies (--policy continuous,static,sequential) run the same workload in one run, and the
// throughput ratios against the first are printed.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_engine.h"
#include "app/cli/cli_model.h"
#include "app/cli/cli_output.h"
#include "app/cli/commands.h"
#include "app/cli/prompts_jsonl.h"
#include "engine/serving/bench_runner.h"

namespace llmwb::cli {

namespace {

const char* kHelp =
    "llmwb bench [--model M] [options]\n"
    "workload:\n"
    "  --input-len N --output-len N   synthetic prompt/output lengths (default 128 / 128)\n"
    "  --range-ratio R           lengths uniform in [len*(1-R), len*(1+R)] (default 0)\n"
    "  --num-prompts N           requests (default 32)\n"
    "  --prefix-len N            shared prefix tokens before every prompt (default 0)\n"
    "  --dataset FILE.jsonl      prompts from a file (\"prompt\"/\"ids\", optional max_tokens)\n"
    "  --seed S                  workload and arrival seed (default 0)\n"
    "  --request-rate R          Poisson arrivals, requests/s (default inf: all at once)\n"
    "  --max-concurrency N       requests in flight at most (default: no cap)\n"
    "engine:\n"
    "  --policy P[,P...]         continuous | static | sequential (default continuous);\n"
    "                            several: the same workload under each, ratios vs the first\n"
    "  --baseline-prompts N      run only the first N requests under 'sequential' (it is slow)\n"
    "  --static-no-padding       'static' without padding (default: batches padded to their\n"
    "                            longest prompt and output, as generate() runs a batch)\n"
    "  --threads N               CPU threads (default: all cores)\n";

struct Policy {
    std::string name;
    SchedulerPolicy policy;
};

nlohmann::json result_json(const BenchResult& r) {
    nlohmann::json j;
    j["completed"] = r.completed;
    j["duration"] = r.duration_s;
    j["total_input_tokens"] = r.total_input_tokens;
    j["total_output_tokens"] = r.total_output_tokens;
    j["request_throughput"] = r.request_throughput;
    j["output_throughput"] = r.output_throughput;
    j["total_token_throughput"] = r.total_token_throughput;
    auto put = [&](const char* name, const LatencyStats& s) {
        const std::string n(name);
        j["mean_" + n + "_ms"] = s.mean;
        j["median_" + n + "_ms"] = s.median;
        j["std_" + n + "_ms"] = s.std;
        j["p99_" + n + "_ms"] = s.p99;
    };
    put("ttft", r.ttft_ms);
    put("tpot", r.tpot_ms);
    put("itl", r.itl_ms);
    put("e2el", r.e2el_ms);
    j["kv_cache_blocks"] = r.num_blocks;
    j["block_size"] = r.block_size;
    j["mean_kv_cache_usage"] = r.mean_kv_usage;
    j["peak_kv_cache_usage"] = r.peak_kv_usage;
    j["kv_waste_vs_contiguous"] = r.kv_waste_vs_contiguous;
    j["kv_waste_vs_allocated"] = r.kv_waste_vs_allocated;
    j["contiguous_preallocation_waste"] = r.contiguous_waste;
    j["prefix_cache_queries"] = r.prefix_cache_queries;
    j["prefix_cache_hits"] = r.prefix_cache_hits;
    j["prefix_cache_hit_rate"] = r.prefix_cache_hit_rate;
    j["num_preemptions"] = r.preemptions;
    j["num_steps"] = r.steps;
    j["mean_batch_size"] = r.mean_batch_size;
    j["ttfts_ms"] = r.per_request_ttft_ms;
    return j;
}

void print_result(const std::string& policy, const BenchResult& r) {
    auto line = [](const char* k, double v, int prec = 2) {
        std::printf("%-40s %.*f\n", k, prec, v);
    };
    std::printf("============ Serving Benchmark Result (%s) ============\n", policy.c_str());
    std::printf("%-40s %d\n", "Successful requests:", r.completed);
    line("Benchmark duration (s):", r.duration_s);
    std::printf("%-40s %lld\n",
                "Total input tokens:", static_cast<long long>(r.total_input_tokens));
    std::printf("%-40s %lld\n",
                "Total generated tokens:", static_cast<long long>(r.total_output_tokens));
    line("Request throughput (req/s):", r.request_throughput);
    line("Output token throughput (tok/s):", r.output_throughput);
    line("Total Token throughput (tok/s):", r.total_token_throughput);
    auto section = [&](const char* title, const char* abbr, const LatencyStats& s) {
        std::printf("%s\n", title);
        char k[64];
        std::snprintf(k, sizeof k, "Mean %s (ms):", abbr);
        line(k, s.mean);
        std::snprintf(k, sizeof k, "Median %s (ms):", abbr);
        line(k, s.median);
        std::snprintf(k, sizeof k, "P99 %s (ms):", abbr);
        line(k, s.p99);
    };
    section("---------------Time to First Token----------------", "TTFT", r.ttft_ms);
    section("-----Time per Output Token (excl. 1st token)------", "TPOT", r.tpot_ms);
    section("---------------Inter-token Latency----------------", "ITL", r.itl_ms);
    section("----------------End-to-end Latency----------------", "E2EL", r.e2el_ms);
    std::printf("----------------------KV cache--------------------\n");
    std::printf("%-40s %d x %d tokens\n", "Blocks:", r.num_blocks, r.block_size);
    line("Mean KV cache usage (%):", 100 * r.mean_kv_usage);
    line("Peak KV cache usage (%):", 100 * r.peak_kv_usage);
    line("KV waste vs contiguous prealloc (%):", 100 * r.kv_waste_vs_contiguous);
    line("KV waste vs allocated slots (%):", 100 * r.kv_waste_vs_allocated);
    line("Contiguous prealloc waste (%):", 100 * r.contiguous_waste);
    line("Prefix cache hit rate (%):", 100 * r.prefix_cache_hit_rate);
    std::printf("%-40s %lld\n", "Preemptions:", static_cast<long long>(r.preemptions));
    std::printf("%-40s %lld (mean batch %.1f)\n", "Engine steps:", static_cast<long long>(r.steps),
                r.mean_batch_size);
    std::printf("==================================================\n");
}

} // namespace

int cmd_bench(const Args& argv) {
    const char* cmd = "bench";
    std::set<std::string> values = {
        "model",        "threads",         "input-len",  "output-len", "range-ratio", "num-prompts",
        "request-rate", "max-concurrency", "prefix-len", "seed",       "dataset",     "policy",
        "json",         "baseline-prompts"};
    std::set<std::string> flags = {"help", "quiet", "static-no-padding"};
    auto args = parse_engine_command_args(argv, std::move(values), std::move(flags));
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        print_engine_command_help(kHelp);
        return 0;
    }
    RandomWorkloadSpec spec;
    auto get_i = [&](const char* name, int64_t lo, int64_t hi, int32_t& field) -> Status {
        auto v = args->get_int(name, lo, hi);
        if (!v)
            return v.error();
        if (*v)
            field = static_cast<int32_t>(**v);
        return ok_status();
    };
    int32_t max_conc = 0, baseline_prompts = 0;
    for (Status st : {get_i("input-len", 1, 1 << 20, spec.input_len),
                      get_i("output-len", 1, 1 << 20, spec.output_len),
                      get_i("num-prompts", 1, 1 << 20, spec.num_prompts),
                      get_i("prefix-len", 0, 1 << 20, spec.prefix_len),
                      get_i("max-concurrency", 1, 1 << 20, max_conc),
                      get_i("baseline-prompts", 1, 1 << 20, baseline_prompts)})
        if (!st)
            return fail(cmd, st.message());
    auto rr = args->get_double("range-ratio", 0, 0.999);
    if (!rr)
        return fail(cmd, rr.message());
    if (*rr)
        spec.range_ratio = **rr;
    auto seed = args->get_int("seed", 0, INT64_MAX);
    if (!seed)
        return fail(cmd, seed.message());
    if (*seed)
        spec.seed = static_cast<uint64_t>(**seed);
    double rate = std::numeric_limits<double>::infinity();
    if (auto r = args->get("request-rate"); r && *r != "inf") {
        auto v = args->get_double("request-rate", 1e-6, 1e9);
        if (!v)
            return fail(cmd, v.message());
        rate = **v;
    }
    auto threads = args->get_int("threads", 1, 1024);
    if (!threads)
        return fail(cmd, threads.message());

    std::vector<Policy> policies;
    {
        std::stringstream ss(args->get_or("policy", "continuous"));
        std::string name;
        while (std::getline(ss, name, ',')) {
            if (name == "continuous")
                policies.push_back({name, SchedulerPolicy::Continuous});
            else if (name == "static")
                policies.push_back({name, SchedulerPolicy::Static});
            else if (name == "sequential")
                policies.push_back({name, SchedulerPolicy::Sequential});
            else
                return fail(cmd, "--policy: unknown policy '" + name +
                                     "' (continuous, static, sequential)");
        }
        if (policies.empty())
            return fail(cmd, "--policy: no policy given");
    }
    EngineConfig base;
    if (Status st = engine_config_from_args(*args, base); !st)
        return fail(cmd, st.message());

    auto mo = open_cli_model(*args);
    if (!mo)
        return fail(cmd, mo.message());
    CliModel& m = **mo;
    std::vector<BenchRequest> workload;
    if (auto ds = args->get("dataset")) {
        SamplingParams d;
        d.max_tokens = spec.output_len;
        auto lines = read_prompts_jsonl(*ds, d);
        if (!lines)
            return fail(cmd, lines.message());
        for (const PromptLine& pl : *lines) {
            BenchRequest r;
            r.prompt = pl.ids ? *pl.ids : m.tokenizer->encode(*pl.prompt, true);
            r.output_len = pl.params.max_tokens;
            workload.push_back(std::move(r));
        }
    } else {
        const int32_t vocab = m.model->config.vocab_size;
        workload = make_random_workload(spec, vocab);
    }
    m.pool = std::make_unique<kernels::ThreadPool>(static_cast<int>(threads->value_or(0)));
    m.transformer = std::make_unique<Transformer>(*m.model, *m.pool);
    auto exec = m.open_executor(*args, m.pool->size(), base.max_num_batched_tokens,
                                base.max_num_seqs);
    if (!exec)
        return fail(cmd, exec.message());

    nlohmann::json out;
    out["model"] = m.model->name;
    out["workload"] = {{"num_prompts", workload.size()},
                       {"input_len", spec.input_len},
                       {"output_len", spec.output_len},
                       {"range_ratio", spec.range_ratio},
                       {"prefix_len", spec.prefix_len},
                       {"seed", spec.seed},
                       {"request_rate", std::isinf(rate) ? -1.0 : rate},
                       {"max_concurrency", max_conc},
                       {"dataset", args->get_or("dataset", "")}};
    out["threads"] = m.pool->size();
    out["device"] = (*exec)->device_name();
    std::vector<BenchResult> results;
    for (const Policy& p : policies) {
        std::vector<BenchRequest> reqs = workload;
        if (p.policy == SchedulerPolicy::Sequential && baseline_prompts > 0 &&
            static_cast<size_t>(baseline_prompts) < reqs.size())
            reqs.resize(static_cast<size_t>(baseline_prompts));
        EngineConfig ec = base;
        ec.policy = p.policy;
        BenchRunOptions ro;
        ro.request_rate = rate;
        ro.max_concurrency = max_conc;
        ro.seed = spec.seed;
        if (p.policy == SchedulerPolicy::Static) {
            ro.static_batches = true;
            ro.batch_size = max_conc > 0 ? max_conc : static_cast<int32_t>(reqs.size());
            ec.max_num_seqs = ro.batch_size;
        }
        int64_t need = 0;
        for (const BenchRequest& r : reqs)
            need += static_cast<int64_t>(r.prompt.size()) + r.output_len;
        if (p.policy == SchedulerPolicy::Static && !args->has("static-no-padding")) {
            // Padded batches: every row of a batch is as long as its longest prompt + output.
            need = 0;
            for (size_t b = 0; b < reqs.size(); b += static_cast<size_t>(ro.batch_size)) {
                const size_t e = std::min(reqs.size(), b + static_cast<size_t>(ro.batch_size));
                size_t mp = 0;
                int32_t mo = 0;
                for (size_t k = b; k < e; ++k) {
                    mp = std::max(mp, reqs[k].prompt.size());
                    mo = std::max(mo, reqs[k].output_len);
                }
                need = std::max(need, static_cast<int64_t>(e - b) * static_cast<int64_t>(mp + mo));
            }
        }
        ro.static_padding = !args->has("static-no-padding");
        default_kv_to_need(*args, ec, need, static_cast<int64_t>(reqs.size()));
        auto engine = Engine::create(**exec, *m.tokenizer, ec);
        if (!engine)
            return fail(cmd, engine.message());
        if (!args->has("quiet")) {
            ro.on_step = [&](const StepOutputs&, int32_t done, int32_t total) {
                std::fprintf(stderr, "\r[%s] %d/%d requests done", p.name.c_str(), done, total);
            };
        }
        auto r = run_bench(**engine, reqs, ro);
        if (!args->has("quiet"))
            std::fprintf(stderr, "\n");
        if (!r)
            return fail(cmd, r.message());
        std::string label = p.name;
        if (p.policy == SchedulerPolicy::Static)
            label += std::string(ro.static_padding ? ", padded" : ", unpadded") + " batches of " +
                     std::to_string(ro.batch_size);
        print_result(label + (reqs.size() < workload.size()
                                   ? ", first " + std::to_string(reqs.size()) + " requests"
                                   : ""),
                     *r);
        nlohmann::json rj = result_json(*r);
        rj["max_num_seqs"] = ec.max_num_seqs;
        if (p.policy == SchedulerPolicy::Static)
            rj["static_padding"] = ro.static_padding;
        rj["max_num_batched_tokens"] = ec.max_num_batched_tokens;
        rj["prefix_caching"] = ec.enable_prefix_caching;
        out["results"][p.name] = rj;
        results.push_back(std::move(r.value()));
    }
    if (results.size() > 1) {
        std::printf("Ratios vs %s:\n", policies[0].name.c_str());
        for (size_t i = 1; i < results.size(); ++i) {
            const double ot = results[i].output_throughput > 0
                                  ? results[0].output_throughput / results[i].output_throughput
                                  : 0;
            std::printf("  output_throughput %s / %s: %.2fx\n", policies[0].name.c_str(),
                        policies[i].name.c_str(), ot);
            out["ratios"]["output_throughput_" + policies[0].name + "_over_" + policies[i].name] =
                ot;
        }
    }
    if (auto path = args->get("json")) {
        std::ofstream f(*path);
        f << out.dump(2) << "\n";
        if (!f)
            return fail(cmd, *path + ": cannot write");
    }
    return 0;
}

} // namespace llmwb::cli
