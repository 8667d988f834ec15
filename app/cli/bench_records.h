// Per-request records of one `llmwb bench` run, collected from the engine's step outputs (the
// BenchRunOptions::on_step hook of the bench session): what vLLM's --save-detailed writes
// (input_lens, output_lens, ttfts, itls, generated_texts, errors) plus the output ids. They come
// from the outputs themselves, not from the session's figures, so the two can be checked against
// each other. (vLLM's peak figures, max_output_tokens_per_s and max_concurrent_requests, are the
// session's: BenchResult.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/serving/bench_workload.h"
#include "engine/serving/engine.h"

namespace llmwb::cli {

struct BenchRequestRecord {
    int32_t input_len = 0; // prompt tokens as the workload gave them (no padding)
    int32_t wanted = 0;    // output tokens asked for
    std::vector<int32_t> output_ids;
    std::vector<EngineClock::time_point> token_times; // when each output token was sampled
    double ttft_s = 0; // arrival -> first token (the engine's request metrics)
    bool finished = false;
    std::string error;
};

class BenchRecorder {
  public:
    // `requests` in submission order: on a fresh engine (llmwb bench makes one per policy) the
    // session submits request k as the engine's k-th request, so its id is k (checked: an id
    // out of range is an error).
    explicit BenchRecorder(const std::vector<BenchRequest>& requests);

    // Call after every step (the session's on_step).
    void on_step(const StepOutputs& so);
    // Ok when every request finished and every output belonged to a known request.
    Status check() const;

    const std::vector<BenchRequestRecord>& records() const { return records_; }
    // Inter-token latencies of request i, in seconds (vLLM's itls).
    std::vector<double> itls_s(size_t i) const;

  private:
    std::vector<BenchRequestRecord> records_;
    std::string error_;
};

} // namespace llmwb::cli
