#include "engine/serving/bench_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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
