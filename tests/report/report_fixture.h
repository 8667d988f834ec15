// A three-run report for the report tests: a continuous run, a speculative one and a cancelled
// one whose error holds a comma, a quote, a newline and CJK text; doubles that need all 17
// digits; settings in a non-alphabetical order.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>

#include "app/report/bench_report.h"

namespace llmwb::report_test {

inline LatencyStats stats(double base, const std::vector<double>& qs) {
    LatencyStats s;
    s.mean = base / 3.0;
    s.std = base / 7.0;
    for (double q : qs)
        s.percentiles.emplace_back(q, base * (1.0 + q / 300.0) + 1.0 / 3.0);
    s.median = base * (1.0 + 50 / 300.0) + 1.0 / 3.0;
    for (const auto& [q, v] : s.percentiles)
        if (q == 99)
            s.p99 = v;
    return s;
}

inline BenchRun make_run(int k, const std::string& name, int n_requests, int n_steps) {
    BenchRun r;
    r.name = name;
    r.policy = k == 2 ? "static" : "continuous";
    r.date = "20261201-21300" + std::to_string(k);
    r.model_id = "qwen2.5-0.5b-instruct-q8_0.gguf";
    r.sweep_setting = "max_num_seqs";
    r.sweep_value = 4.0 * (k + 1);
    const std::vector<double> qs = {50, 90, 99, 99.9};
    r.settings = nlohmann::ordered_json::parse(
        R"({"workload": {"num_prompts": )" + std::to_string(n_requests) +
        R"(, "input_len": 128, "output_len": 64, "request_rate": 4.5, "seed": 7},
            "engine": {"max_num_seqs": )" +
        std::to_string(4 * (k + 1)) + R"(, "block_size": 16, "gpu_memory_utilization": 0.9}})");
    BenchResult& f = r.figures;
    f.completed = n_requests - (k == 2 ? 3 : 0);
    f.failed = k == 2 ? 3 : 0;
    f.request_rate = k == 2 ? std::numeric_limits<double>::infinity() : 4.5;
    f.burstiness = 1.0;
    f.max_concurrency = k == 1 ? 8 : 0;
    f.max_output_tokens_per_s = 1234.0 + k;
    f.max_concurrent_requests = 6 + k;
    f.duration_s = 12.345678901234567 + k / 3.0;
    f.total_input_tokens = 128LL * n_requests;
    f.total_output_tokens = 64LL * f.completed;
    f.request_throughput = f.completed / f.duration_s;
    f.output_throughput = double(f.total_output_tokens) / f.duration_s;
    f.total_token_throughput = double(f.total_input_tokens + f.total_output_tokens) / f.duration_s;
    f.ttft_ms = stats(40.0 + k, qs);
    f.tpot_ms = stats(11.0 + k, qs);
    f.itl_ms = stats(10.5 + k, qs);
    f.e2el_ms = stats(700.0 + k, qs);
    f.num_blocks = 512;
    f.block_size = 16;
    f.mean_kv_usage = 0.1 * (k + 1) / 3.0;
    f.peak_kv_usage = 0.7 + k / 30.0;
    f.kv_waste_vs_contiguous = 0.01 / 3.0;
    f.kv_waste_vs_allocated = 0.02 / 7.0;
    f.contiguous_waste = 0.6 / 9.0;
    f.prefix_cache_queries = 1000 + k;
    f.prefix_cache_hits = 333;
    f.prefix_cache_hit_rate = 333.0 / double(1000 + k);
    f.preemptions = k;
    f.steps = n_steps;
    f.mean_batch_size = 5.0 / 3.0 + k;
    for (int i = 0; i < f.completed; ++i)
        f.per_request_ttft_ms.push_back(30.0 + i / 7.0);
    if (k == 1) {
        f.speculative.num_drafts = 300;
        f.speculative.num_draft_tokens = 900;
        f.speculative.num_accepted_tokens = 60 + 40 + 20;
        f.speculative.accepted_per_pos = {60, 40, 20};
    }
    if (k == 2) {
        r.status = BenchRunStatus::Cancelled;
        r.error = "cancelled, by \"the user\"\nsecond line: 用户取消了运行";
    }
    for (int i = 0; i < n_requests; ++i) {
        BenchRequestRow q;
        q.index = i;
        q.arrival_s = i / 4.5;
        q.first_token_s = q.arrival_s + 0.04 + i / 1000.0 / 3.0;
        q.finish_s = q.arrival_s + 0.7 + i * 0.01 / 3.0;
        q.input_tokens = 128 + i;
        q.output_tokens = 64;
        q.preemptions = i % 3 == 0 ? 1 : 0;
        q.prefix_hit_tokens = 16 * (i % 4);
        if (k == 2 && i >= n_requests - 3) {
            q.first_token_s = i == n_requests - 3 ? q.first_token_s : -1;
            q.finish_s = -1;
            q.output_tokens = i == n_requests - 3 ? 5 : 0;
            q.error = r.error;
        }
        r.requests.push_back(q);
    }
    for (int i = 0; i < n_steps; ++i) {
        BenchStepRow s;
        s.time_s = 0.05 + i * 0.0213 / 3.0;
        s.step_ms = 7.0 + (i % 5) / 3.0;
        s.prefill_tokens = i % 7 == 0 ? 256 : 0;
        s.decode_tokens = 1 + i % 8;
        s.running = 1 + i % 8;
        s.waiting = i % 3;
        s.preempted = i % 11 == 10 ? 1 : 0;
        s.kv_usage = std::fmod(0.013 * i, 1.0) / 3.0;
        if (k == 1) {
            s.draft_tokens = 3 * s.decode_tokens;
            s.accepted_tokens = s.decode_tokens;
        }
        r.steps.push_back(s);
    }
    return r;
}

inline BenchReport make_report() {
    BenchReport rep;
    rep.title = "Sweep of max_num_seqs — 最大序列数";
    rep.environment = nlohmann::ordered_json::parse(
        R"({"cpu_model": "AMD EPYC 7B13", "simd": "AVX2", "cores": 2, "ram_bytes": 8589934592,
            "os": "Debian 12", "app_version": "0.1.0", "model": {"file": "m.gguf", "sha256":
            "ab12"}})");
    rep.runs.push_back(make_run(0, "max_num_seqs=4", 12, 40));
    rep.runs.push_back(make_run(1, "max_num_seqs=8 (ngram k=3)", 12, 30));
    rep.runs.push_back(make_run(2, "max_num_seqs=12, cancelled", 9, 20));
    return rep;
}

inline bool same_bits(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

} // namespace llmwb::report_test
