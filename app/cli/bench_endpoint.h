// `llmwb bench --endpoint URL --model NAME`: bench's workload sent to an OpenAI-compatible
// endpoint (app/remote/endpoint_bench.h), with the same printed block, the same JSON keys (the
// engine-side ones from the server's /metrics where it has them: KV usage, preemptions, prefix
// cache; null where neither the client nor /metrics can tell), vLLM's result file (endpoint_type
// "openai" / "openai-chat", base_url) and the benchmark report.
//
// Prompts are text. With a local tokenizer (--tokenizer PATH, or --model when it is a local
// model), the random workload's token ids are decoded to text (special tokens skipped) and the
// workload's lengths are the tokenizer's; JSONL lines with "ids" are decoded the same way.
// Without one, a random prompt is input_len words drawn (seeded) from a fixed list of common
// English words (about one token each), "ids" lines are refused, and the input and output counts
// come from the server's usage (when a server sends no usage: output tokens = token chunks).
#pragma once

#include "app/cli/bench_options.h"

namespace llmwb::cli {

// Runs o (o.endpoint set); the command's exit status.
int run_bench_endpoint(const BenchOptions& o);

} // namespace llmwb::cli
