#include "app/cli/bench_endpoint.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "app/cli/bench_report.h"
#include "app/cli/cli_model.h"
#include "app/cli/commands.h"
#include "app/cli/progress_line.h"
#include "app/cli/prompts_jsonl.h"
#include "app/cli/report_io.h"
#include "app/report/environment.h"
#include "engine/serving/bench_workload.h"

#ifdef LLMWB_HAVE_REMOTE
#include "app/remote/endpoint_bench.h"
#endif

namespace llmwb::cli {

#ifndef LLMWB_HAVE_REMOTE

int run_bench_endpoint(const BenchOptions&) {
    return fail("bench", "built without remote endpoints: cpp-httplib was not found");
}

#else

namespace {

constexpr const char* kCmd = "bench";

// Common English words, about one token each in every BPE vocabulary.
constexpr const char* kWords[] = {
    "the",   "of",    "and",   "to",    "in",    "is",    "that",  "for",  "it",    "as",
    "was",   "with",  "be",    "by",    "on",    "not",   "he",    "this", "are",   "or",
    "his",   "from",  "at",    "which", "but",   "have",  "an",    "had",  "they",  "you",
    "were",  "their", "one",   "all",   "we",    "can",   "her",   "has",  "there", "been",
    "if",    "more",  "when",  "will",  "would", "who",   "so",    "no",   "time",  "water",
    "house", "world", "light", "river", "stone", "green", "music", "city", "night", "paper"};

std::string random_words(std::mt19937_64& rng, int32_t n) {
    std::uniform_int_distribution<size_t> pick(0, std::size(kWords) - 1);
    std::string out;
    for (int32_t i = 0; i < n; ++i)
        out += (i ? " " : "") + std::string(kWords[pick(rng)]);
    return out;
}

Status write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    f << text << "\n";
    if (!f)
        return make_error(path + ": cannot write");
    return ok_status();
}

// The workload as text prompts (see the header).
Result<std::vector<remote::EndpointBenchRequest>> make_prompts(const BenchOptions& o,
                                                               const CliModel* tok_model) {
    std::vector<remote::EndpointBenchRequest> out;
    const Tokenizer* tok = tok_model ? tok_model->tokenizer.get() : nullptr;
    auto count = [&](const std::string& text, int32_t fallback) {
        return tok ? static_cast<int32_t>(tok->encode(text, true).size()) : fallback;
    };
    if (o.dataset) {
        SamplingParams d;
        d.max_tokens = o.spec.output_len;
        auto lines = read_prompts_jsonl(*o.dataset, d);
        if (!lines)
            return lines.error();
        for (const PromptLine& pl : *lines) {
            const std::string at = *o.dataset + ":" + std::to_string(pl.line) + ": ";
            if (!pl.ok())
                return make_error(at + pl.error);
            remote::EndpointBenchRequest r;
            if (pl.prompt) {
                r.prompt = *pl.prompt;
                r.input_tokens = count(r.prompt, 0);
            } else {
                if (!tok)
                    return make_error(at + "\"ids\" need a local tokenizer for an --endpoint "
                                           "run (--tokenizer PATH)");
                r.prompt = tok->decode(*pl.ids, true);
                r.input_tokens = static_cast<int32_t>(pl.ids->size());
            }
            r.output_len = pl.params.max_tokens;
            out.push_back(std::move(r));
        }
        return out;
    }
    if (tok) {
        for (BenchRequest& b : make_random_workload(o.spec, tok_model->model->config.vocab_size)) {
            remote::EndpointBenchRequest r;
            r.prompt = tok->decode(b.prompt, true);
            r.input_tokens = static_cast<int32_t>(b.prompt.size());
            r.output_len = b.output_len;
            out.push_back(std::move(r));
        }
        return out;
    }
    // Lengths as make_random_workload draws them, in words.
    std::mt19937_64 rng(o.spec.seed ^ 0x776f726473ULL);
    const std::string prefix = random_words(rng, o.spec.prefix_len);
    auto range = [&](int32_t len) {
        const double r = o.spec.range_ratio;
        const auto lo = std::max<int32_t>(1, static_cast<int32_t>(std::floor(len * (1 - r))));
        const auto hi = std::max<int32_t>(lo, static_cast<int32_t>(std::ceil(len * (1 + r))));
        return std::uniform_int_distribution<int32_t>(lo, hi);
    };
    auto in_len = range(o.spec.input_len);
    auto out_len = range(o.spec.output_len);
    for (int32_t i = 0; i < o.spec.num_prompts; ++i) {
        remote::EndpointBenchRequest r;
        const int32_t n = in_len(rng);
        r.prompt = (prefix.empty() ? "" : prefix + " ") + random_words(rng, n);
        r.input_tokens = n + o.spec.prefix_len;
        r.output_len = out_len(rng);
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace

int run_bench_endpoint(const BenchOptions& o) {
    const BenchEndpoint& ep = *o.endpoint;
    std::unique_ptr<CliModel> tok_model;
    if (ep.tokenizer) {
        auto m = open_cli_model(*ep.tokenizer);
        if (!m)
            return fail(kCmd, "--tokenizer " + *ep.tokenizer + ": " + m.message());
        tok_model = std::move(m.value());
    }
    auto prompts = make_prompts(o, tok_model.get());
    if (!prompts)
        return fail(kCmd, prompts.message());
    if (o.report)
        if (Status st = check_report_target(*o.report); !st)
            return fail(kCmd, st.message());

    remote::EndpointBenchOptions bo;
    bo.endpoint.base_url = ep.base_url;
    bo.endpoint.api_key = ep.api_key;
    bo.endpoint.model = ep.model;
    bo.type = ep.type == "chat" ? remote::EndpointType::Chat : remote::EndpointType::Completions;
    bo.request_rate = o.request_rate;
    bo.burstiness = o.burstiness;
    bo.max_concurrency = o.max_concurrency;
    bo.seed = o.spec.seed;
    bo.percentiles = o.metric_percentiles;
    if (tok_model)
        bo.count_tokens = [t = tok_model->tokenizer.get()](const std::string& s) {
            return static_cast<int32_t>(t->encode(s, false).size());
        };

    // The endpoint answers, and serves the model (a warning only: some servers list aliases).
    auto probe = remote::OpenAiClient::create(bo.endpoint);
    if (!probe)
        return fail(kCmd, "--endpoint: " + probe.message());
    const std::string base_url = (*probe)->url().text();
    auto models = (*probe)->list_models();
    if (!models)
        return fail(kCmd, models.message());
    bool listed = false;
    std::string names;
    for (const remote::ModelEntry& m : *models) {
        listed = listed || m.id == ep.model;
        names += (names.empty() ? "" : ", ") + m.id;
    }
    if (!listed)
        std::fprintf(stderr,
                     "llmwb bench: warning: %s/v1/models does not list '%s' (it lists: %s)\n",
                     base_url.c_str(), ep.model.c_str(), names.c_str());

    ProgressLine progress(o.progress);
    bo.on_progress = [&](int32_t done, int32_t total) {
        progress.update("[endpoint] " + std::to_string(done) + "/" + std::to_string(total) +
                            " requests done",
                        done == total);
    };
    const std::string date = now_stamp();
    auto run = remote::run_endpoint_bench(*prompts, bo);
    progress.finish();
    if (!run)
        return fail(kCmd, run.message());
    const BenchResult& r = run->result;
    const std::string type_name = remote::endpoint_type_name(bo.type);
    const std::string vllm_type = bo.type == remote::EndpointType::Chat ? "openai-chat" : "openai";
    print_bench_result("endpoint " + type_name + " " + base_url, r, o.percentile_metrics, false);
    const std::optional<remote::ServerFigures>& sf = run->server;
    if (sf) {
        std::printf("-----------Server /metrics (%s, %d scrapes)----------\n",
                    sf->server_kind.empty() ? "unknown" : sf->server_kind.c_str(), sf->scrapes);
        auto line = [](const char* k, const std::optional<double>& v, double scale) {
            if (v)
                std::printf("%-40s %.2f\n", k, scale * *v);
            else
                std::printf("%-40s %s\n", k, "unavailable");
        };
        line("Mean KV cache usage (%):", sf->mean_kv_usage, 100);
        line("Peak KV cache usage (%):", sf->peak_kv_usage, 100);
        if (sf->preemptions)
            std::printf("%-40s %lld\n", "Preemptions:", static_cast<long long>(*sf->preemptions));
        else
            std::printf("%-40s %s\n", "Preemptions:", "unavailable");
        std::optional<double> hit;
        if (sf->prefix_cache_queries && sf->prefix_cache_hits && *sf->prefix_cache_queries > 0)
            hit = static_cast<double>(*sf->prefix_cache_hits) /
                  static_cast<double>(*sf->prefix_cache_queries);
        line("Prefix cache hit rate (%):", hit, 100);
    } else {
        std::printf("Server /metrics: unavailable (%s)\n", run->metrics_error.c_str());
    }
    std::printf("==================================================\n");
    std::string first_error;
    for (const auto& rec : run->records)
        if (!rec.error.empty()) {
            first_error = rec.error;
            break;
        }
    if (!first_error.empty())
        std::fprintf(stderr, "llmwb bench: %d of %zu requests failed; the first: %s\n", r.failed,
                     prompts->size(), first_error.c_str());

    nlohmann::json out;
    out["model"] = ep.model;
    out["endpoint_type"] = type_name;
    out["base_url"] = base_url;
    out["workload"] = {{"num_prompts", prompts->size()},
                       {"input_len", o.spec.input_len},
                       {"output_len", o.spec.output_len},
                       {"range_ratio", o.spec.range_ratio},
                       {"prefix_len", o.spec.prefix_len},
                       {"seed", o.spec.seed},
                       {"request_rate", std::isinf(o.request_rate) ? -1.0 : o.request_rate},
                       {"burstiness", o.burstiness},
                       {"max_concurrency", o.max_concurrency},
                       {"dataset", o.dataset.value_or("")}};
    out["threads"] = nullptr;
    out["device"] = nullptr;
    out["kv_cache_dtype"] = nullptr;
    out["dtype"] = nullptr; // the server's weights: not known from here
    nlohmann::json rj = bench_result_json(r);
    null_engine_keys(rj);
    if (sf) { // what the server's /metrics gave
        if (sf->mean_kv_usage)
            rj["mean_kv_cache_usage"] = *sf->mean_kv_usage;
        if (sf->peak_kv_usage)
            rj["peak_kv_cache_usage"] = *sf->peak_kv_usage;
        if (sf->preemptions)
            rj["num_preemptions"] = *sf->preemptions;
        if (sf->prefix_cache_queries && sf->prefix_cache_hits) {
            rj["prefix_cache_queries"] = *sf->prefix_cache_queries;
            rj["prefix_cache_hits"] = *sf->prefix_cache_hits;
            rj["prefix_cache_hit_rate"] = r.prefix_cache_hit_rate;
        }
        rj["server_metrics"] = {{"server_kind", sf->server_kind}, {"scrapes", sf->scrapes}};
    } else {
        rj["server_metrics"] = {{"error", run->metrics_error}};
    }
    for (const char* k :
         {"max_num_seqs", "max_num_batched_tokens", "prefix_caching", "kv_pool_limit",
          "kv_cache_dtype", "kv_bytes_per_block", "kv_cache_tokens"})
        rj[k] = nullptr; // the server's engine settings: not visible from here
    rj["endpoint_type"] = type_name;
    rj["base_url"] = base_url;
    rj["failed"] = r.failed;
    out["results"]["endpoint"] = rj;
    if (o.json_path)
        if (Status st = write_text(
                *o.json_path, out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
            !st)
            return fail(kCmd, st.message());

    if (o.save_result) {
        VllmDetails d;
        for (size_t i = 0; i < run->rows.size(); ++i) {
            const BenchRequestRow& row = run->rows[i];
            const remote::EndpointRequestRecord& rec = run->records[i];
            d.input_lens.push_back(row.input_tokens);
            d.output_lens.push_back(row.output_tokens);
            d.ttfts.push_back(rec.error.empty() ? rec.out.ttft_s : 0.0);
            d.itls.push_back(rec.error.empty() ? rec.out.itl_s : std::vector<double>{});
            d.generated_texts.push_back(rec.out.text);
            d.errors.push_back(rec.error);
        }
        ResultSource src{vllm_type, vllm_type, base_url};
        auto vj =
            vllm_result_json(o, ep.model, r, prompts->size(), src, o.save_detailed ? &d : nullptr);
        if (Status st = write_text(
                vllm_result_path(o, ep.model),
                vj.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
            !st)
            return fail(kCmd, st.message());
    }

    if (o.report) {
        BenchReport report;
        BenchRun br;
        br.name = "endpoint";
        br.policy = "endpoint";
        br.backend = vllm_type;
        br.date = date;
        br.model_id = ep.model;
        std::string pm;
        for (const std::string& m : o.percentile_metrics)
            pm += (pm.empty() ? "" : ",") + m;
        br.percentile_metrics = pm;
        nlohmann::ordered_json w;
        w["num_prompts"] = prompts->size();
        w["dataset"] = o.dataset ? std::filesystem::path(*o.dataset).filename().string()
                                 : std::string("random");
        w["input_len"] = o.spec.input_len;
        w["output_len"] = o.spec.output_len;
        w["range_ratio"] = o.spec.range_ratio;
        w["prefix_len"] = o.spec.prefix_len;
        w["seed"] = o.spec.seed;
        put_load_keys(w, o);
        br.settings["workload"] = w;
        br.settings["engine"] = {
            {"endpoint_type", type_name}, {"base_url", base_url}, {"served_model_name", ep.model}};
        br.figures = r;
        br.requests = run->rows;
        report.runs.push_back(std::move(br));
        report.title = "llmwb bench: " + ep.model + " at " + base_url;
        EnvironmentInputs in;
        in.model_name = ep.model;
        in.device = "remote endpoint " + base_url;
        in.engine_settings = report.runs.front().settings["engine"];
        report.environment = probe_environment(in, false);
        if (Status st = write_report(*o.report, report); !st)
            return fail(kCmd, st.message());
    }
    return r.completed > 0 ? 0 : fail(kCmd, "no request completed: " + first_error);
}

#endif

} // namespace llmwb::cli
