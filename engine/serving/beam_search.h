// Beam search over the serving Engine, with Hugging Face's rules (generate(num_beams=w)):
//   - w live beams; each step every beam's next-token raw logprobs (log_softmax of the logits,
//     no temperature) extend its sum; of all beams x vocabulary the 2w best candidates are
//     taken, best first (equal scores: lower beam, then lower token id).
//   - a candidate ending in a stop token (eos/eot, stop_token_ids; none with ignore_eos) among
//     the first w becomes a finished hypothesis; the others fill the next w beams.
//   - a hypothesis scores sum_logprobs / length^length_penalty, length = the generated tokens
//     before its stop token (at least 1); the w best hypotheses are kept.
//   - early_stopping: True: done once w hypotheses are finished; False: done when no live beam
//     can still beat the worst kept hypothesis at the current length; Never: at the longest
//     length (max_tokens) when length_penalty > 0 (the exact bound).
//   - at max_tokens the live beams become hypotheses too (unless the search was done).
// On the block pool: the prompt is prefilled once; a beam chosen k times continues in its own
// request and k - 1 forks of it (its blocks shared, copy-on-write on the first write); beams
// not chosen are aborted and their blocks return to the pool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/serving/engine.h"

namespace llmwb {

enum class EarlyStopping : uint8_t { False, True, Never };
// "true" | "false" | "never"
const char* early_stopping_name(EarlyStopping e);
Result<EarlyStopping> parse_early_stopping(std::string_view text);

struct BeamSearchParams {
    int32_t width = 4; // [1, 64]
    float length_penalty = 1.0f;
    EarlyStopping early_stopping = EarlyStopping::False;
    // max_tokens, stop_token_ids and ignore_eos are read; sampling fields do not apply (the
    // scores are raw logprobs) and stop strings are refused.
    SamplingParams params;
};

struct BeamHypothesis {
    std::vector<int32_t> ids; // generated ids, with the final stop token if it has one
    std::string text;         // decoded (special tokens skipped), without the stop token
    double sum_logprob = 0;
    double score = 0;                         // sum_logprob / length^length_penalty
    FinishReason finish = FinishReason::None; // Stop (a stop token) or Length
};

struct BeamSearchResult {
    std::vector<BeamHypothesis> hypotheses; // best score first, at most width
    int32_t steps = 0;                      // search rounds (tokens per beam)
    int64_t forks = 0, aborted = 0;         // beam requests forked and pruned
    int64_t peak_used_blocks = 0;           // the pool during the search
};

// Runs the search to its end on `engine` (other requests may share its steps). Errors: bad
// params, add_request's, a backend failure.
Result<BeamSearchResult> beam_search(Engine& engine, std::vector<int32_t> prompt_ids,
                                     const BeamSearchParams& params);

} // namespace llmwb
