// llmwb bench: an in-process serving benchmark over the engine. Synthetic prompts (vLLM's
// random dataset: lengths drawn with a range ratio, optional shared prefix) or a JSONL file;
// all at once or Poisson arrivals; a concurrency cap. Prints vLLM's benchmark figures under the
// same names, plus KV usage and the prefix-cache hit rate; writes llmwb's report (--json FILE)
// and vLLM's result file (--save-result), and the benchmark report (--report OUT.zip or a
// folder: report.html, results.json, requests.csv, steps.csv, environment.json). Several
// policies (--policy continuous,static,sequential) run the same workload in one run, and the
// throughput ratios against the first are printed. With --endpoint URL the same workload goes to
// an OpenAI-compatible server instead (bench_endpoint.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/cli/bench_endpoint.h"
#include "app/cli/bench_options.h"
#include "app/cli/bench_records.h"
#include "app/cli/bench_report.h"
#include "app/cli/cli_model.h"
#include "app/cli/commands.h"
#include "app/cli/progress_line.h"
#include "app/cli/prompts_jsonl.h"
#include "app/cli/report_io.h"
#include "app/report/engine_settings.h"
#include "app/report/environment.h"
#include "engine/backend/cuda_plugin.h"
#include "engine/model/model_info.h"
#include "engine/serving/bench_session.h"

namespace llmwb::cli {

namespace {

// The KV tokens a policy's run can use at once: every request's prompt + output, or for padded
// static batches, the largest batch's rows at its longest prompt + output.
int64_t kv_need(const std::vector<BenchRequest>& reqs, bool padded_batches, int32_t batch_size) {
    int64_t need = 0;
    if (!padded_batches) {
        for (const BenchRequest& r : reqs)
            need += static_cast<int64_t>(r.prompt.size()) + r.output_len;
        return need;
    }
    for (size_t b = 0; b < reqs.size(); b += static_cast<size_t>(batch_size)) {
        const size_t e = std::min(reqs.size(), b + static_cast<size_t>(batch_size));
        size_t mp = 0;
        int32_t mo = 0;
        for (size_t k = b; k < e; ++k) {
            mp = std::max(mp, reqs[k].prompt.size());
            mo = std::max(mo, reqs[k].output_len);
        }
        need = std::max(need, static_cast<int64_t>(e - b) * static_cast<int64_t>(mp + mo));
    }
    return need;
}

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v)
        out += (out.empty() ? "" : ",") + s;
    return out;
}

// The weights' type as a user names it: the types of the attention and FFN tensors, the most
// common first ("Q8_0", "Q4_K/Q6_K").
std::string weight_dtype(const LoadedModel& m) {
    std::map<std::string, int> counts;
    for (const TensorGroupTypes& g : tensor_group_types(m))
        if (g.group == "attention" || g.group == "ffn")
            for (const auto& [t, n] : g.dtype_counts)
                counts[t] += n;
    std::vector<std::pair<int, std::string>> order;
    for (const auto& [t, n] : counts)
        order.emplace_back(-n, t);
    std::sort(order.begin(), order.end());
    std::string out;
    for (const auto& [n, t] : order)
        out += (out.empty() ? "" : "/") + t;
    return out.empty() ? "unknown" : out;
}

// The workload of a run under vLLM's names: request_rate "inf" and max_concurrency null as
// vLLM writes them; the dataset by its file name (a path would tell where the user keeps it).
nlohmann::ordered_json workload_settings(const BenchOptions& o, size_t num_prompts) {
    nlohmann::ordered_json j;
    j["num_prompts"] = num_prompts;
    j["dataset"] =
        o.dataset ? std::filesystem::path(*o.dataset).filename().string() : std::string("random");
    if (!o.dataset) {
        j["input_len"] = o.spec.input_len;
        j["output_len"] = o.spec.output_len;
        j["range_ratio"] = o.spec.range_ratio;
        j["prefix_len"] = o.spec.prefix_len;
    } else {
        j["output_len"] = o.spec.output_len; // the default max_tokens of its lines
    }
    j["seed"] = o.spec.seed;
    put_load_keys(j, o);
    return j;
}

Status write_json(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    f << text << "\n";
    if (!f)
        return make_error(path + ": cannot write");
    return ok_status();
}

} // namespace

int cmd_bench(const Args& argv) {
    const char* cmd = "bench";
    for (const std::string& a : argv)
        if (a == "--help") {
            std::fputs(kBenchHelp, stdout);
            std::fputs(kEngineOptionsHelp, stdout);
            std::fputs(kSpeculativeOptionsHelp, stdout);
            std::fputs(kDeviceOptionsHelp, stdout);
            return 0;
        }
    auto opt = parse_bench_options(argv);
    if (!opt)
        return fail(cmd, opt.message());
    if (opt->endpoint)
        return run_bench_endpoint(*opt);
    auto mo = open_cli_model(opt->model);
    if (!mo)
        return fail(cmd, mo.message());
    CliModel& m = **mo;
    const RandomWorkloadSpec& spec = opt->spec;
    std::vector<BenchRequest> workload;
    std::optional<std::vector<int>> lines_of_dataset; // the file line of each request
    if (opt->dataset) {
        lines_of_dataset.emplace();
        SamplingParams d;
        d.max_tokens = spec.output_len;
        auto lines = read_prompts_jsonl(*opt->dataset, d);
        if (!lines)
            return fail(cmd, lines.message());
        for (const PromptLine& pl : *lines) {
            if (!pl.ok())
                return fail(cmd, *opt->dataset + ":" + std::to_string(pl.line) + ": " + pl.error);
            BenchRequest r;
            r.prompt = pl.ids ? *pl.ids : m.tokenizer->encode(*pl.prompt, true);
            r.output_len = pl.params.max_tokens;
            workload.push_back(std::move(r));
            lines_of_dataset->push_back(pl.line);
        }
    } else {
        workload = make_random_workload(spec, m.model->config.vocab_size);
    }
    // The length rule (resolve_max_tokens) for every request before anything runs: a bench
    // measures the lengths it was asked for, or refuses.
    for (size_t i = 0; i < workload.size(); ++i) {
        SamplingParams p;
        p.max_tokens = workload[i].output_len;
        p.max_tokens_set = true;
        auto ok = resolve_max_tokens(p, static_cast<int64_t>(workload[i].prompt.size()),
                                     m.model->config.max_position);
        if (!ok)
            return fail(cmd, (opt->dataset ? *opt->dataset + ":" +
                                                 std::to_string((*lines_of_dataset)[i]) + ": "
                                           : "request " + std::to_string(i) + ": ") +
                                 ok.message());
    }
    const EngineConfig& base = opt->engine.config;
    auto exec = m.open_executor(opt->device, base.max_num_batched_tokens, base.max_num_seqs);
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
                       {"request_rate", std::isinf(opt->request_rate) ? -1.0 : opt->request_rate},
                       {"burstiness", opt->burstiness},
                       {"max_concurrency", opt->max_concurrency},
                       {"dataset", opt->dataset.value_or("")}};
    out["threads"] = m.threads();
    out["device"] = (*exec)->device_name();
    out["kv_cache_dtype"] = kv_dtype_name((*exec)->kv_dtype());
    out["dtype"] = weight_dtype_name(opt->device.weight_dtype);
    if (opt->report)
        if (Status st = check_report_target(*opt->report); !st)
            return fail(cmd, st.message());
    BenchReport report;
    std::vector<BenchResult> results;
    for (const BenchPolicy& p : opt->policies) {
        std::vector<BenchRequest> reqs = workload;
        if (p.policy == SchedulerPolicy::Sequential && opt->baseline_prompts > 0 &&
            static_cast<size_t>(opt->baseline_prompts) < reqs.size())
            reqs.resize(static_cast<size_t>(opt->baseline_prompts));
        EngineOptions eo = opt->engine;
        EngineConfig& ec = eo.config;
        ec.policy = p.policy;
        BenchRunOptions ro;
        ro.request_rate = opt->request_rate;
        ro.burstiness = opt->burstiness;
        ro.max_concurrency = opt->max_concurrency;
        ro.seed = spec.seed;
        ro.static_padding = opt->static_padding;
        const bool is_static = p.policy == SchedulerPolicy::Static;
        if (is_static) {
            ro.static_batches = true;
            ro.batch_size =
                opt->max_concurrency > 0 ? opt->max_concurrency : static_cast<int32_t>(reqs.size());
            ec.max_num_seqs = ro.batch_size;
        }
        eo.size_to_need(kv_need(reqs, is_static && ro.static_padding, ro.batch_size),
                        static_cast<int64_t>(reqs.size()));
        std::unique_ptr<DraftModelProposer> draft; // outlives the engine
        auto engine = Engine::create(**exec, *m.tokenizer, ec);
        if (!engine)
            return fail(cmd, engine.message());
        auto attached = attach_draft_model(m, **engine);
        if (!attached)
            return fail(cmd, attached.message());
        draft = std::move(attached.value());
        BenchRecorder recorder(reqs);
        ProgressLine progress(opt->progress);
        ro.on_step = [&](const StepOutputs& so, int32_t done, int32_t total) {
            recorder.on_step(so);
            progress.update("[" + p.name + "] " + std::to_string(done) + "/" +
                                std::to_string(total) + " requests done",
                            done == total);
        };
        const std::string date = now_stamp();
        BenchSession session(**engine, reqs, ro);
        while (!session.done()) {
            auto wait = session.advance();
            if (!wait) {
                progress.finish();
                return fail(cmd, wait.message());
            }
            if (*wait > 0)
                std::this_thread::sleep_for(std::chrono::duration<double>(std::min(*wait, 0.05)));
        }
        progress.finish();
        Result<BenchResult> r = session.result(opt->metric_percentiles);
        if (Status st = recorder.check(); !st)
            return fail(cmd, st.message());
        std::string label = p.name;
        if (is_static)
            label += std::string(ro.static_padding ? ", padded" : ", unpadded") + " batches of " +
                     std::to_string(ro.batch_size);
        if (reqs.size() < workload.size())
            label += ", first " + std::to_string(reqs.size()) + " requests";
        print_bench_result(label, *r, opt->percentile_metrics);
        {
            const MemoryPlan& pl = (*engine)->memory_plan();
            std::printf(
                "KV cache: %s, %d blocks of %d tokens (%lld tokens), %lld bytes per block\n",
                kv_dtype_name(pl.kv_dtype), pl.num_blocks, pl.block_size,
                static_cast<long long>(pl.num_blocks) * pl.block_size,
                static_cast<long long>(pl.bytes_per_block));
        }
        nlohmann::json rj = bench_result_json(*r);
        rj["max_num_seqs"] = ec.max_num_seqs;
        if (is_static)
            rj["static_padding"] = ro.static_padding;
        rj["max_num_batched_tokens"] = ec.max_num_batched_tokens;
        rj["prefix_caching"] = ec.enable_prefix_caching;
        const MemoryPlan& plan = (*engine)->memory_plan();
        rj["kv_pool_limit"] = kv_pool_limit_name(plan.limit);
        rj["kv_cache_dtype"] = kv_dtype_name(plan.kv_dtype);
        rj["kv_bytes_per_block"] = plan.bytes_per_block;
        rj["kv_cache_tokens"] = static_cast<int64_t>(plan.num_blocks) * plan.block_size;
        out["results"][p.name] = rj;
        if (opt->save_result) {
            const std::string path = vllm_result_path(*opt, m.model->name);
            auto vj = vllm_result_json(*opt, m.model->path, *r, recorder, *m.tokenizer,
                                       opt->save_detailed);
            if (Status st = write_json(
                    path, vj.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
                !st)
                return fail(cmd, st.message());
        }
        if (opt->report) {
            BenchRun run;
            run.name = p.name;
            run.policy = p.name;
            run.date = date;
            run.model_id = m.model->name;
            run.percentile_metrics = join(opt->percentile_metrics);
            run.settings["workload"] = workload_settings(*opt, reqs.size());
            run.settings["engine"] =
                engine_settings_json((*engine)->config(), (*engine)->memory_plan(),
                                     kv_dtype_name((*exec)->kv_dtype()), &ro);
            run.figures = *r;
            run.requests = session.request_rows();
            run.steps = session.step_rows();
            report.runs.push_back(std::move(run));
        }
        results.push_back(std::move(r.value()));
    }
    if (results.size() > 1) {
        const auto& policies = opt->policies;
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
    if (opt->json_path)
        if (Status st = write_json(*opt->json_path, out.dump(2)); !st)
            return fail(cmd, st.message());
    if (opt->report) {
        std::vector<std::string> names;
        for (const BenchPolicy& p : opt->policies)
            names.push_back(p.name);
        report.title = "llmwb bench: " + m.model->name + ", " + join(names);
        EnvironmentInputs in;
        in.model_path = m.model->path;
        in.model_name = m.model->name;
        in.weight_dtype = weight_dtype(*m.model);
        in.kv_dtype = kv_dtype_name((*exec)->kv_dtype());
        in.device = (*exec)->device_name();
        in.threads = (*exec)->kind() == DeviceKind::Cpu ? m.threads() : 0;
        if ((*exec)->kind() == DeviceKind::Cuda)
            if (auto plugin = CudaPlugin::load())
                describe_cuda_device(in, **plugin);
        if (!report.runs.empty())
            in.engine_settings = report.runs.front().settings["engine"];
        report.environment = probe_environment(in);
        if (Status st = write_report(*opt->report, report); !st)
            return fail(cmd, st.message());
    }
    return 0;
}

} // namespace llmwb::cli
