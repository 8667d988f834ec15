// Benchmark workloads: synthetic prompts drawn around an input/output length with a range
// ratio (vLLM's random dataset: lengths uniform in [len x (1 - r), len x (1 + r)], random token
// ids, an optional shared prefix), and arrival times (all at once or Poisson at a rate).
#pragma once

#include <cstdint>
#include <vector>

namespace llmwb {

struct BenchRequest {
    std::vector<int32_t> prompt;
    int32_t output_len = 0; // tokens to generate (generation ignores EOS)
};

struct RandomWorkloadSpec {
    int32_t num_prompts = 32;
    int32_t input_len = 128;
    int32_t output_len = 128;
    double range_ratio = 0.0; // [0, 1)
    int32_t prefix_len = 0;   // shared prefix before every prompt (not counted in input_len)
    uint64_t seed = 0;
};

// Token ids are uniform in [0, vocab_size). Deterministic in the spec.
std::vector<BenchRequest> make_random_workload(const RandomWorkloadSpec& spec, int32_t vocab_size);

// Arrival offsets in seconds from the start: all 0 for an infinite rate, else gaps drawn from a
// gamma distribution with shape = burstiness and mean 1 / rate, as vLLM's `bench serve` (1:
// exponential gaps, a Poisson process; < 1 burstier; > 1 more regular; inf: constant gaps).
// Deterministic in seed.
std::vector<double> make_arrival_times(int32_t n, double request_rate, uint64_t seed,
                                       double burstiness = 1.0);

} // namespace llmwb
