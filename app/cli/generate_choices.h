// `llmwb generate` spending more compute on one prompt (issue 20): --n N samples forked from one
// prefill, --best-of M (the n best of M by logprob), --vote PATTERN (self-consistency over the
// samples), --beam-width W (beam search). Parsed once; run over an engine the command built for
// max(n, best_of) sequences.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "app/cli/cli_options.h"
#include "engine/serving/answer_vote.h"
#include "engine/serving/beam_search.h"
#include "engine/serving/parallel_sampling.h"

namespace llmwb::cli {

struct ChoiceOptions {
    int32_t n = 1;
    int32_t best_of = 0; // 0: off (n samples); else >= n samples of which the n best are kept
    BestOfRank rank = BestOfRank::CumulativeLogprob;
    std::optional<AnswerPattern> vote;
    int32_t beam_width = 0; // > 0: beam search (--beam-width), the other modes off
    float length_penalty = 1.0f;
    EarlyStopping early_stopping = EarlyStopping::False;

    // More than one plain generation: run_choices prints them.
    bool active() const { return n > 1 || best_of > 0 || vote.has_value() || beam_width > 0; }
    // Sequences the engine runs at once.
    int32_t sequences() const { return std::max({n, best_of, beam_width, int32_t{1}}); }
};

const OptionNames& choice_option_names();
extern const char* kChoiceOptionsHelp;
// Errors: "--n: ...", "--best-of 2 must be >= --n 4", "--vote: answer pattern ...".
Result<ChoiceOptions> parse_choice_options(const CliArgs& args);

// Runs the choices and prints them: text (each sample under a header, then the vote) or one
// JSON object (--json: choices [{index, seed, ids, text, finish_reason, cumulative_logprob,
// answer}], vote {answer, votes, tie, tied, no_answer, tally}, kv_cache {peak_used_blocks,
// cow_copies}). Returns the exit code.
int run_choices(const char* cmd, Engine& engine, std::vector<int32_t> prompt,
                const SamplingParams& params, const ChoiceOptions& opt, bool json);

} // namespace llmwb::cli
