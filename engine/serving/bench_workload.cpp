#include "engine/serving/bench_workload.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace llmwb {

namespace {

int32_t draw_len(std::mt19937_64& rng, int32_t len, double ratio) {
    const auto lo = std::max<int64_t>(1, static_cast<int64_t>(len * (1.0 - ratio)));
    const auto hi = std::max<int64_t>(lo, static_cast<int64_t>(len * (1.0 + ratio)));
    return static_cast<int32_t>(std::uniform_int_distribution<int64_t>(lo, hi)(rng));
}

} // namespace

std::vector<BenchRequest> make_random_workload(const RandomWorkloadSpec& spec, int32_t vocab_size) {
    std::mt19937_64 rng(spec.seed);
    std::uniform_int_distribution<int32_t> tok(0, std::max(1, vocab_size) - 1);
    std::vector<int32_t> prefix(static_cast<size_t>(std::max(0, spec.prefix_len)));
    for (int32_t& t : prefix)
        t = tok(rng);
    std::vector<BenchRequest> out(static_cast<size_t>(std::max(0, spec.num_prompts)));
    for (BenchRequest& r : out) {
        const int32_t in = draw_len(rng, spec.input_len, spec.range_ratio);
        r.output_len = draw_len(rng, spec.output_len, spec.range_ratio);
        r.prompt = prefix;
        for (int32_t i = 0; i < in; ++i)
            r.prompt.push_back(tok(rng));
    }
    return out;
}

std::vector<double> make_arrival_times(int32_t n, double request_rate, uint64_t seed,
                                       double burstiness) {
    std::vector<double> t(static_cast<size_t>(std::max(0, n)), 0.0);
    if (!(request_rate > 0) || std::isinf(request_rate))
        return t;
    std::mt19937_64 rng(seed ^ 0x5eedULL);
    // Gamma(shape k, scale 1 / (rate k)) has mean 1 / rate; k = 1 is the exponential (drawn as
    // before, so Poisson runs keep their arrival times).
    const bool constant = std::isinf(burstiness);
    std::exponential_distribution<double> poisson(request_rate);
    std::gamma_distribution<double> gamma(constant ? 1.0 : burstiness,
                                          constant ? 1.0 : 1.0 / (request_rate * burstiness));
    double now = 0;
    for (double& x : t) {
        x = now;
        now += constant ? 1.0 / request_rate : burstiness == 1.0 ? poisson(rng) : gamma(rng);
    }
    return t;
}

} // namespace llmwb
