#include "engine/serving/bench_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "engine/serving/bench_session.h"

namespace llmwb {

namespace {

double percentile(const std::vector<double>& sorted, double q) { // numpy "linear"
    if (sorted.empty())
        return 0;
    q = std::clamp(q, 0.0, 100.0);
    const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

} // namespace

LatencyStats latency_stats(std::vector<double> v, const std::vector<double>& percentiles) {
    LatencyStats s;
    for (double q : percentiles)
        s.percentiles.emplace_back(q, 0.0);
    if (v.empty())
        return s;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v)
        sum += x;
    s.mean = sum / static_cast<double>(v.size());
    double var = 0;
    for (double x : v)
        var += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(var / static_cast<double>(v.size()));
    s.median = percentile(v, 50);
    s.p99 = percentile(v, 99);
    for (auto& [q, value] : s.percentiles)
        value = percentile(v, q);
    return s;
}

void put_request_figures(BenchResult& res, const std::vector<BenchRequestRow>& rows,
                         const std::vector<std::vector<double>>& token_s,
                         const std::vector<double>& itls_ms,
                         const std::vector<double>& percentiles) {
    std::vector<double> ttft, tpot, e2el;
    double min_start = std::numeric_limits<double>::infinity(), max_end = 0;
    int32_t succeeded = 0;
    for (const BenchRequestRow& row : rows) {
        if (row.finish_s < 0 || !row.error.empty())
            continue;
        ++succeeded;
        res.total_input_tokens += row.input_tokens;
        res.total_output_tokens += row.output_tokens;
        min_start = std::min(min_start, row.arrival_s);
        max_end = std::max(max_end, row.finish_s);
        if (row.output_tokens == 0)
            continue;
        const double first = (row.first_token_s - row.arrival_s) * 1000.0;
        const double e2e = (row.finish_s - row.arrival_s) * 1000.0;
        ttft.push_back(first);
        e2el.push_back(e2e);
        if (row.output_tokens > 1)
            tpot.push_back((e2e - first) / (row.output_tokens - 1));
        res.per_request_ttft_ms.push_back(first);
    }
    res.ttft_ms = latency_stats(ttft, percentiles);
    res.tpot_ms = latency_stats(tpot, percentiles);
    res.itl_ms = latency_stats(itls_ms, percentiles);
    res.e2el_ms = latency_stats(e2el, percentiles);
    if (res.duration_s > 0) {
        res.request_throughput = res.completed / res.duration_s;
        res.output_throughput = static_cast<double>(res.total_output_tokens) / res.duration_s;
        res.total_token_throughput =
            static_cast<double>(res.total_input_tokens + res.total_output_tokens) / res.duration_s;
    }

    // vLLM's peak figures over the successful requests: one-second buckets from the earliest
    // start; the most output tokens sampled in one bucket, and the most requests whose
    // [start, end] span touches one bucket.
    if (succeeded > 0) {
        const auto buckets = static_cast<size_t>(std::ceil(max_end - min_start)) + 1;
        std::vector<double> tokens(buckets, 0);
        std::vector<int32_t> concurrent(buckets, 0);
        for (size_t i = 0; i < rows.size(); ++i) {
            const BenchRequestRow& row = rows[i];
            if (row.finish_s < 0 || !row.error.empty())
                continue;
            if (i < token_s.size())
                for (double t : token_s[i]) {
                    const auto b = static_cast<size_t>(std::max(0.0, t - min_start));
                    if (b < buckets)
                        tokens[b] += 1;
                }
            const auto s0 = static_cast<size_t>(std::max(0.0, row.arrival_s - min_start));
            const auto s1 = static_cast<size_t>(std::max(0.0, row.finish_s - min_start));
            for (size_t b = s0; b <= s1 && b < buckets; ++b)
                ++concurrent[b];
        }
        res.max_output_tokens_per_s = *std::max_element(tokens.begin(), tokens.end());
        res.max_concurrent_requests = *std::max_element(concurrent.begin(), concurrent.end());
    }
}

Result<BenchResult> run_bench(Engine& engine, const std::vector<BenchRequest>& requests,
                              const BenchRunOptions& options) {
    BenchSession session(engine, requests, options);
    while (!session.done()) {
        auto wait = session.advance();
        if (!wait)
            return wait.error();
        if (*wait > 0)
            std::this_thread::sleep_for(std::chrono::duration<double>(std::min(*wait, 0.05)));
    }
    return session.result();
}

} // namespace llmwb
