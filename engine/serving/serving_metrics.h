// ServingMetrics: the engine's figures as Prometheus metrics with vLLM's names, types and labels
// (vllm:num_requests_running, vllm:time_to_first_token_seconds, ...), so that dashboards and
// tools written for vLLM read `llmwb serve`'s /metrics unchanged. Fed on the engine's thread
// after every step; rendered on any thread (an HTTP handler) in the Prometheus text format.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/serving/engine.h"

namespace llmwb {

class ServingMetrics {
  public:
    explicit ServingMetrics(std::string model_name);
    // max_model_len: the top of the token-count histograms' buckets (1, 2, 5, 10, ... as vLLM);
    // without it they come from the first engine observed (its model's context length).
    ServingMetrics(std::string model_name, int64_t max_model_len);
    ~ServingMetrics();
    ServingMetrics(const ServingMetrics&) = delete;
    ServingMetrics& operator=(const ServingMetrics&) = delete;

    // Engine thread, after every Engine::step(out) (also one that scheduled nothing): counters
    // and histograms from the step's outputs, gauges from the engine's state after the step.
    // Requests aborted before the step (StepOutputs::aborted) enter the latency and token
    // histograms here; their request_success count comes from observe_aborted.
    void observe_step(const StepOutputs& out, const Engine& engine);
    // Engine thread, after Engine::abort(id) returned true (a client went away): the request
    // counts as finished with finished_reason "abort".
    void observe_aborted(RequestId id);

    // Any thread: the Prometheus text exposition format (version 0.0.4).
    std::string render_prometheus() const;

  private:
    struct State;
    std::unique_ptr<State> state_;
};

} // namespace llmwb
