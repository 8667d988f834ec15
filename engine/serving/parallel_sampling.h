// Parallel sampling (n > 1): the choices of one prompt. Engine::add_request_group prefills the
// prompt once and forks a sequence per choice from it (engine.h); this file says what the
// choices of "n samples of these params" are.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/runtime/sampling_params.h"
#include "engine/serving/generation.h"

namespace llmwb {

// n copies of `params` (n >= 1); with a seed s, choice i samples with seed s + i, so the n
// choices equal n single requests with seeds s ... s + n - 1 (without a seed each choice draws
// its own). This is what the CLI's --n and the server's n > 1 ask for.
std::vector<SamplingParams> parallel_sampling_choices(const SamplingParams& params, int n);

// The choices of one prompt run to their ends (a loop over Engine::step, as generate()): one
// result per choice, in order (ids, text, finish, stop, logprobs when asked; ttft_ms and
// total_ms from the call's start). Errors: add_request_group's, or a backend failure.
Result<std::vector<GenerationResult>> generate_choices(Engine& engine,
                                                       std::vector<int32_t> prompt_ids,
                                                       std::span<const SamplingParams> choices);

// Sum of a result's token logprobs (they must have been asked for: params.logprobs >= 1).
double cumulative_logprob(const GenerationResult& r);

// best_of (OpenAI completions): of best_of samples, the n ranked best. CumulativeLogprob ranks
// by the sum of token logprobs (OpenAI's and vLLM's), MeanLogprob by that sum / tokens (longer
// samples are not penalised for their length). Equal scores keep the sample order.
enum class BestOfRank : uint8_t { CumulativeLogprob, MeanLogprob };
// "logprob" | "mean-logprob"
const char* best_of_rank_name(BestOfRank r);
double best_of_score(const GenerationResult& r, BestOfRank rank);
// Indices of `results`, best first, at most n.
std::vector<size_t> best_of_order(std::span<const GenerationResult> results, size_t n,
                                  BestOfRank rank);

} // namespace llmwb
