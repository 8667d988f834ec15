// Sampling of the next token from a logits row, with Hugging Face / vLLM semantics.
//
// Order: penalties (repetition over prompt + output, HF style: positive logits divided,
// negative multiplied; presence/frequency over output tokens, OpenAI style:
// l -= frequency * count + presence * (count > 0)), then temperature (0 = greedy: argmax,
// lowest id on ties), top-k, top-p, min-p, then a draw from the request's own RNG
// (std::mt19937_64 from `seed`; no seed -> std::random_device).
//
// Logprobs are those of the RAW model distribution (log_softmax of the logits before penalties
// and temperature), as vLLM returns by default: they describe the model, not the sampler, and
// agree with `llmwb perplexity`.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/runtime/sampling_params.h"
#include "engine/util/result.h"

namespace llmwb {

struct TokenLogprob {
    int32_t id = -1;
    float logprob = 0.0f;
};

struct SampledToken {
    int32_t id = -1;
    float logprob = 0.0f;          // raw model logprob of `id` (when logprobs were asked)
    std::vector<TokenLogprob> top; // top-N raw logprobs, best first (N = params.logprobs)
};

// Index of the first largest value (greedy decoding); NaNs are ignored, an all-NaN row gives 0.
int32_t argmax_first(std::span<const float> logits);

// Raw log_softmax helpers (also used by perplexity).
// log p(id) for one logits row.
double log_softmax_at(std::span<const float> logits, int32_t id);
// The n largest logprobs of a row, best first (lowest id first on ties).
std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, int n);

// One request's sampler: keeps its RNG and the token counts the penalties need.
class Sampler {
  public:
    explicit Sampler(const SamplingParams& params); // params must validate()

    // Tokens of the prompt (for the repetition penalty). Resets the output counts.
    void set_prompt(std::span<const int32_t> prompt_ids);
    // Records a generated token (for all penalties).
    void accept(int32_t id);

    // Picks the next token from one row of logits [vocab]. Does not accept() it.
    SampledToken sample(std::span<const float> logits);

    // Speculative decoding with a one-hot draft (prompt lookup): the next token given that a
    // proposer suggested `draft`. Greedy: the argmax (the draft is accepted when it equals it).
    // Sampling: exact rejection sampling — the draft is accepted with probability p(draft) under
    // the processed distribution p (penalties, temperature, top-k/top-p/min-p as in sample());
    // otherwise a token is drawn from p with the draft removed, renormalised. The result is
    // distributed exactly as sample()'s. *accepted says which happened. Does not accept() it.
    SampledToken verify(std::span<const float> logits, int32_t draft, bool* accepted);

    // The processed logits after penalties and temperature and with every token that top-k,
    // top-p and min-p remove set to -inf (temperature 0: penalties only). For tests.
    std::vector<float> processed_logits(std::span<const float> logits);

  private:
    struct Candidate {
        float logit;
        int32_t id;
    };
    void apply_penalties(std::vector<float>& l) const;
    // Fills cand_ with the surviving tokens (sorted best first) of the temperature-scaled logits.
    void filter(const std::vector<float>& l);
    double uniform01();

    SamplingParams p_;
    std::mt19937_64 rng_;
    void mark_seen(int32_t id);

    std::vector<uint8_t> seen_flag_;                 // [vocab] grown on demand: prompt|output
    std::vector<int32_t> seen_ids_;                  // ids with seen_flag_ set
    std::unordered_map<int32_t, int32_t> out_count_; // output token -> count
    std::vector<float> work_;                        // [vocab]
    std::vector<Candidate> cand_;
};

} // namespace llmwb
