// A test-time-compute ladder ("Think harder", issue 20): rungs that spend more compute per
// question (n samples with a self-consistency vote, a thinking budget on models with <think>, a
// beam width), the scoring of one question's outputs against its known answer, and a rung's
// result (accuracy, tokens spent, wall time, per question the samples and the vote) as JSON.
// Shared by `llmwb think` and the app's Think harder page: one definition of what a rung asks
// and how it is counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/runtime/sampling_params.h"
#include "engine/serving/answer_vote.h"
#include "engine/serving/beam_search.h"
#include "engine/serving/reasoning_tasks.h"

namespace llmwb {

enum class ThinkRungKind : uint8_t { Samples, ThinkingBudget, Beam };
// "n" | "think" | "beam"
const char* think_rung_kind_name(ThinkRungKind k);

struct ThinkRung {
    ThinkRungKind kind = ThinkRungKind::Samples;
    int32_t value = 1; // samples (1..64), thinking tokens (0..32768) or beam width (1..16)
};
std::string think_rung_label(const ThinkRung& r); // "n=4", "think=256", "beam=2"

inline constexpr int32_t kMaxThinkSamples = 64;
inline constexpr int32_t kMaxThinkingBudget = 32768;
inline constexpr int32_t kMaxThinkBeamWidth = 16;
inline constexpr size_t kMaxThinkRungs = 24;

// "n=1,2,4,8", "think=0,256,1024", "beam=2,4", joined by ';' ("n=1,2;beam=2"). Errors name the
// item and the allowed range.
Result<std::vector<ThinkRung>> parse_think_ladder(std::string_view text);
std::string think_ladder_text(const std::vector<ThinkRung>& rungs); // parse's inverse

// What a rung asks of the engine: the sampling choices of one question (Samples: n choices with
// seeds s..s+n-1; ThinkingBudget: one choice with the budget), or the beam search's params.
std::vector<SamplingParams> think_rung_choices(const ThinkRung& r, const SamplingParams& base);
BeamSearchParams think_rung_beam(const ThinkRung& r, const SamplingParams& base);

// The answer a text gives: generated tasks (`generated` set) as task_answer_in; a task file's
// tasks: the last number when the expected answer is a number, else the expected answer when
// the text mentions it (case-insensitive), else the text's last non-empty line.
std::optional<std::string> think_answer_in(const TaskSetSpec* generated, const ReasoningTask& task,
                                           std::string_view text);
// Numbers compare normalised, text case-insensitively.
bool think_answer_matches(const std::string& expected, const std::string& got);

struct ThinkSample {
    std::string text;
    int32_t tokens = 0;
    std::optional<std::string> answer;
};

struct ThinkQuestionResult {
    int32_t task = 0; // index in the task set
    std::vector<ThinkSample> samples;
    VoteResult vote;
    bool correct = false;
    int64_t tokens = 0; // generated tokens this question cost (beam: every beam's)
};

// Extracts every sample's answer, votes and checks the winner. tokens_spent < 0: the samples'
// tokens.
ThinkQuestionResult think_score_question(const TaskSetSpec* generated, const ReasoningTask& task,
                                         int32_t index, std::vector<ThinkSample> samples,
                                         int64_t tokens_spent = -1);

// One question of a rung run to its end on `engine` (blocking; other requests may share its
// steps): Samples / ThinkingBudget through generate_choices, Beam through beam_search (its best
// hypothesis is the one sample; the tokens spent are width x search rounds).
Result<ThinkQuestionResult> think_run_question(Engine& engine, std::vector<int32_t> prompt,
                                               const ThinkRung& rung, const SamplingParams& base,
                                               const TaskSetSpec* generated,
                                               const ReasoningTask& task, int32_t index);

struct ThinkRungResult {
    ThinkRung rung;
    int32_t tasks = 0, correct = 0, ties = 0, no_answer = 0;
    int64_t tokens = 0;
    double wall_ms = 0;
    std::vector<ThinkQuestionResult> questions; // may be empty (the CLI keeps none)
    double accuracy() const { return tasks > 0 ? double(correct) / tasks : 0.0; }
    void add(ThinkQuestionResult q, bool keep); // counts it (and keeps it when asked)
};

// {"rung", "kind", "value", "accuracy", "correct", "tasks", "tokens", "tokens_per_task",
//  "wall_ms", "ms_per_task", "ties", "no_answer"[, "questions": [{task, correct, tokens, vote,
//  votes, tie, samples: [{text, tokens, answer}]}]]; "n" too for Samples rungs.
nlohmann::ordered_json think_rung_json(const ThinkRungResult& r, bool with_questions);
// The inverse (stored runs are read back from a database file: every key checked; `where` names
// the record in errors).
Result<ThinkRungResult> parse_think_rung_json(const nlohmann::json& j, const std::string& where);

} // namespace llmwb
