// Self-consistency: the final answer of each of n samples, extracted by a pattern the user
// picks, and their majority vote. Patterns:
//   "last-number"  the last number in the text ("-1,234.50" -> "-1234.5")
//   "boxed"        the content of the last \boxed{...} (braces balanced; a number inside is
//                  normalised as above)
//   any other text a regex (PCRE2) with exactly one capture group: the group of its last match
// A sample without an answer counts as "no answer"; answers equal after normalisation (numbers)
// or trimming (text) share their votes. Ties at the top are reported, never hidden: the winner
// of a tie is the tied answer that appeared first.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/result.h"

namespace llmwb {

class AnswerPattern {
  public:
    enum class Kind : uint8_t { LastNumber, Boxed, Regex };
    // Errors: an empty spec, a regex that does not compile (PCRE2's message and offset), a
    // regex without exactly one capture group, a regex where PCRE2 is not built in.
    static Result<AnswerPattern> parse(std::string_view spec);

    // The answer in `text`, or nullopt. A regex match that runs past PCRE2's limits (a
    // pathological pattern) is no answer, never a hang.
    std::optional<std::string> extract(std::string_view text) const;

    Kind kind() const { return kind_; }
    const std::string& spec() const { return spec_; }

    struct Code; // the compiled regex (pcre2_code)

  private:
    Kind kind_ = Kind::LastNumber;
    std::string spec_;
    std::shared_ptr<const Code> code_;
};

// "-01,234.500" -> "-1234.5", "+3" -> "3", "-0.0" -> "0"; nullopt when `s` is not one number
// (optional sign, digits with optional thousands commas, optional fraction).
std::optional<std::string> normalize_number(std::string_view s);

struct AnswerVotes {
    std::string answer;
    int32_t votes = 0;
};

struct VoteResult {
    std::vector<std::optional<std::string>> answers; // per sample, in order
    std::vector<AnswerVotes> tally;    // most votes first; equal votes: first seen first
    int32_t no_answer = 0;             // samples without an answer
    std::optional<std::string> winner; // nullopt: no sample had an answer
    int32_t winner_votes = 0;
    int32_t tied = 0; // answers sharing the top count (a tie when >= 2)
    bool tie() const { return tied >= 2; }
};

// The vote over answers already extracted.
VoteResult tally_answers(std::vector<std::optional<std::string>> answers);
// Extracts every sample's answer with `pattern`, then tallies.
VoteResult majority_vote(const AnswerPattern& pattern, std::span<const std::string> samples);

} // namespace llmwb
