#include "app/cli/bench_report.h"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace llmwb::cli {

namespace {

// vLLM's keys for one latency: mean_/median_/std_/p99_<name>_ms.
template <class Json> void put_latency(Json& j, const std::string& name, const LatencyStats& s) {
    j["mean_" + name + "_ms"] = s.mean;
    j["median_" + name + "_ms"] = s.median;
    j["std_" + name + "_ms"] = s.std;
    j["p99_" + name + "_ms"] = s.p99;
}

const LatencyStats& latency_of(const BenchResult& r, const std::string& metric) {
    if (metric == "ttft")
        return r.ttft_ms;
    if (metric == "tpot")
        return r.tpot_ms;
    if (metric == "itl")
        return r.itl_ms;
    return r.e2el_ms;
}

// vLLM's keys for the chosen latencies: mean_/median_/std_<m>_ms and p<q>_<m>_ms for each
// percentile the figures hold (p99 when they hold none).
template <class Json>
void put_chosen_latencies(Json& j, const std::vector<std::string>& metrics, const BenchResult& r) {
    for (const std::string& m : metrics) {
        const LatencyStats& s = latency_of(r, m);
        j["mean_" + m + "_ms"] = s.mean;
        j["median_" + m + "_ms"] = s.median;
        j["std_" + m + "_ms"] = s.std;
        if (s.percentiles.empty())
            j["p99_" + m + "_ms"] = s.p99;
        for (const auto& [q, v] : s.percentiles)
            j["p" + vllm_percentile_name(q) + "_" + m + "_ms"] = v;
    }
}

} // namespace

void print_bench_result(const std::string& title, const BenchResult& r,
                        const std::vector<std::string>& metrics, bool engine_figures) {
    auto line = [](const char* k, double v, int prec = 2) {
        std::printf("%-40s %.*f\n", k, prec, v);
    };
    std::printf("============ Serving Benchmark Result (%s) ============\n", title.c_str());
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
        if (s.percentiles.empty()) {
            std::snprintf(k, sizeof k, "P99 %s (ms):", abbr);
            line(k, s.p99);
        }
        for (const auto& [q, v] : s.percentiles) {
            std::snprintf(k, sizeof k, "P%s %s (ms):", vllm_percentile_name(q).c_str(), abbr);
            line(k, v);
        }
    };
    for (const std::string& m : metrics) {
        if (m == "ttft")
            section("---------------Time to First Token----------------", "TTFT", r.ttft_ms);
        else if (m == "tpot")
            section("-----Time per Output Token (excl. 1st token)------", "TPOT", r.tpot_ms);
        else if (m == "itl")
            section("---------------Inter-token Latency----------------", "ITL", r.itl_ms);
        else if (m == "e2el")
            section("----------------End-to-end Latency----------------", "E2EL", r.e2el_ms);
    }
    if (!engine_figures) {
        std::printf("%-40s %d\n", "Failed requests:", r.failed);
        std::printf("KV blocks, steps, batch sizes: unavailable (remote endpoint)\n");
        return; // the caller prints what the server's /metrics gave, and the closing line
    }
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
    const SpeculativeStats& sp = r.speculative;
    if (sp.num_drafts > 0) {
        std::printf("---------------Speculative Decoding---------------\n");
        line("Acceptance rate (%):", 100 * sp.acceptance_rate());
        line("Acceptance length:", sp.mean_acceptance_length());
        std::printf("%-40s %lld\n", "Drafts:", static_cast<long long>(sp.num_drafts));
        std::printf("%-40s %lld\n", "Draft tokens:", static_cast<long long>(sp.num_draft_tokens));
        std::printf("%-40s %lld\n",
                    "Accepted tokens:", static_cast<long long>(sp.num_accepted_tokens));
        std::printf("Per-position acceptance (%%):\n");
        for (size_t i = 0; i < sp.accepted_per_pos.size(); ++i) {
            char k[64];
            std::snprintf(k, sizeof k, "  Position %zu:", i);
            line(k, 100.0 * double(sp.accepted_per_pos[i]) / double(sp.num_drafts));
        }
    }
    std::printf("==================================================\n");
}

nlohmann::json bench_result_json(const BenchResult& r) {
    nlohmann::json j;
    j["completed"] = r.completed;
    j["duration"] = r.duration_s;
    j["total_input_tokens"] = r.total_input_tokens;
    j["total_output_tokens"] = r.total_output_tokens;
    j["request_throughput"] = r.request_throughput;
    j["output_throughput"] = r.output_throughput;
    j["total_token_throughput"] = r.total_token_throughput;
    put_latency(j, "ttft", r.ttft_ms);
    put_latency(j, "tpot", r.tpot_ms);
    put_latency(j, "itl", r.itl_ms);
    put_latency(j, "e2el", r.e2el_ms);
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
    if (r.speculative.num_drafts > 0) {
        const SpeculativeStats& sp = r.speculative;
        std::vector<double> per_pos;
        for (int64_t a : sp.accepted_per_pos)
            per_pos.push_back(double(a) / double(sp.num_drafts));
        j["spec_decode_acceptance_rate"] = 100 * sp.acceptance_rate();
        j["spec_decode_acceptance_length"] = sp.mean_acceptance_length();
        j["spec_decode_num_drafts"] = sp.num_drafts;
        j["spec_decode_draft_tokens"] = sp.num_draft_tokens;
        j["spec_decode_accepted_tokens"] = sp.num_accepted_tokens;
        j["spec_decode_per_position_acceptance_rates"] = per_pos;
    }
    j["ttfts_ms"] = r.per_request_ttft_ms;
    return j;
}

void null_engine_keys(nlohmann::json& j) {
    for (const char* k :
         {"kv_cache_blocks", "block_size", "mean_kv_cache_usage", "peak_kv_cache_usage",
          "kv_waste_vs_contiguous", "kv_waste_vs_allocated", "contiguous_preallocation_waste",
          "prefix_cache_queries", "prefix_cache_hits", "prefix_cache_hit_rate", "num_preemptions",
          "num_steps", "mean_batch_size"})
        j[k] = nullptr;
}

namespace {

std::string rate_text(double rate) {
    if (std::isinf(rate))
        return "inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", rate);
    return buf;
}

} // namespace

void put_load_keys(nlohmann::ordered_json& j, const BenchOptions& o) {
    if (std::isinf(o.request_rate))
        j["request_rate"] = "inf";
    else
        j["request_rate"] = o.request_rate;
    j["burstiness"] = o.burstiness;
    if (o.max_concurrency > 0)
        j["max_concurrency"] = o.max_concurrency;
    else
        j["max_concurrency"] = nullptr;
}

nlohmann::ordered_json vllm_result_json(const BenchOptions& o, const std::string& model_id,
                                        const BenchResult& r, size_t num_prompts,
                                        const ResultSource& source, const VllmDetails* details) {
    nlohmann::ordered_json j;
    j["date"] = now_stamp();
    j["endpoint_type"] = source.endpoint_type;
    j["backend"] = source.backend;
    if (!source.base_url.empty())
        j["base_url"] = source.base_url;
    j["label"] = o.label;
    j["model_id"] = model_id;
    j["tokenizer_id"] = model_id;
    j["num_prompts"] = num_prompts;
    put_load_keys(j, o);
    j["duration"] = r.duration_s;
    j["completed"] = r.completed;
    j["failed"] = r.failed;
    j["total_input_tokens"] = r.total_input_tokens;
    j["total_output_tokens"] = r.total_output_tokens;
    j["request_throughput"] = r.request_throughput;
    j["request_goodput"] = nullptr;
    j["output_throughput"] = r.output_throughput;
    j["total_token_throughput"] = r.total_token_throughput;
    if (details) {
        j["input_lens"] = details->input_lens;
        j["output_lens"] = details->output_lens;
        j["ttfts"] = details->ttfts;
        j["itls"] = details->itls;
        j["generated_texts"] = details->generated_texts;
        j["errors"] = details->errors;
        if (details->output_ids)
            j["output_ids"] = *details->output_ids;
    }
    j["max_output_tokens_per_s"] = r.max_output_tokens_per_s;
    j["max_concurrent_requests"] = r.max_concurrent_requests;
    put_chosen_latencies(j, o.percentile_metrics, r);
    return j;
}

nlohmann::ordered_json vllm_result_json(const BenchOptions& o, const std::string& model_id,
                                        const BenchResult& r, const BenchRecorder& records,
                                        const Tokenizer& tokenizer, bool detailed) {
    std::optional<VllmDetails> d;
    if (detailed) {
        d.emplace();
        d->output_ids = nlohmann::ordered_json::array();
        for (size_t i = 0; i < records.records().size(); ++i) {
            const BenchRequestRecord& rec = records.records()[i];
            d->input_lens.push_back(rec.input_len);
            d->output_lens.push_back(rec.output_ids.size());
            d->ttfts.push_back(rec.ttft_s);
            d->itls.push_back(records.itls_s(i));
            d->generated_texts.push_back(tokenizer.decode(rec.output_ids, true));
            d->errors.push_back(rec.error);
            d->output_ids->push_back(rec.output_ids);
        }
    }
    return vllm_result_json(o, model_id, r, records.records().size(), ResultSource{},
                            d ? &*d : nullptr);
}

std::string vllm_result_path(const BenchOptions& o, const std::string& model_name) {
    std::string file = o.result_filename;
    if (file.empty()) {
        std::string base = model_name;
        if (auto slash = base.find_last_of('/'); slash != std::string::npos)
            base = base.substr(slash + 1);
        file = o.label + "-" + rate_text(o.request_rate) + "qps" +
               (o.max_concurrency > 0 ? "-concurrency" + std::to_string(o.max_concurrency) : "") +
               "-" + base + "-" + now_stamp() + ".json";
    }
    return o.result_dir.empty() ? file : o.result_dir + "/" + file;
}

std::string now_stamp() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    return buf;
}

} // namespace llmwb::cli
