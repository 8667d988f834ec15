// The keys `vllm bench serve --save-result` writes first, in its order (through
// max_concurrent_requests; the latency keys follow, as --percentile-metrics chooses). The tests of
// llmwb's result files and reports check for them.
#pragma once

namespace llmwb::test {

inline constexpr const char* kVllmResultHeadKeys[] = {"date",
                                                      "backend",
                                                      "model_id",
                                                      "num_prompts",
                                                      "request_rate",
                                                      "burstiness",
                                                      "max_concurrency",
                                                      "duration",
                                                      "completed",
                                                      "failed",
                                                      "total_input_tokens",
                                                      "total_output_tokens",
                                                      "request_throughput",
                                                      "output_throughput",
                                                      "total_token_throughput",
                                                      "max_output_tokens_per_s",
                                                      "max_concurrent_requests"};

} // namespace llmwb::test
