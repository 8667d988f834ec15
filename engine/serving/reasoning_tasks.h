// Reasoning tasks with known answers for test-time-compute ladders ("Think harder"): a
// deterministic generator of multi-step arithmetic and ordering-logic questions at difficulty
// levels 1..5, seeded (the same seed gives the same questions everywhere), and the check of a
// generated text against a task's answer.
//   arith:L  L+1 integers joined by L operations (+ - *), with parentheses; the answer is the
//            exact value ("Compute ((7 + 3) * 4) - 12. ..." -> "28")
//   logic:L  L+1 "X is taller than Y" facts over L+2 people, shuffled; who is the tallest (or
//            the shortest)? The answer is a name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/result.h"

namespace llmwb {

enum class TaskKind : uint8_t { Arithmetic, Logic };

struct TaskSetSpec {
    TaskKind kind = TaskKind::Arithmetic;
    int32_t level = 1; // 1..5
};

// "arith:2", "logic:3" (level 1..5). Errors name the spec.
Result<TaskSetSpec> parse_task_set(std::string_view spec);
// "arith" | "logic"
const char* task_kind_name(TaskKind k);

struct ReasoningTask {
    std::string question;
    std::string answer;             // a normalised number (arith) or a name (logic)
    std::vector<std::string> names; // logic: every person in the question
};

// `count` tasks (0..10000) of `spec`, deterministic in `seed`.
std::vector<ReasoningTask> generate_tasks(const TaskSetSpec& spec, int32_t count, uint64_t seed);

// The answer a generated text gives: the last number (arith), or the last of the task's names
// it mentions (logic); nullopt when it gives none.
std::optional<std::string> task_answer_in(const TaskSetSpec& spec, const ReasoningTask& task,
                                          std::string_view text);

} // namespace llmwb

namespace llmwb {

// A task file the user brings: JSON Lines, one {"question": "...", "answer": "..."} object a line
// (the answer may be a JSON number too; other keys are ignored). Hostile input: the file is at
// most kMaxTaskFileBytes, at most kMaxTaskLines tasks, a question at most kMaxTaskQuestionBytes;
// blank lines are skipped; every other failure (malformed JSON, deep nesting, a missing or empty
// key, a wrong type) is an error naming the file and the 1-based line.
inline constexpr int64_t kMaxTaskFileBytes = 16ll << 20;
inline constexpr int32_t kMaxTaskLines = 10000;
inline constexpr size_t kMaxTaskQuestionBytes = 16384;

Result<std::vector<ReasoningTask>> parse_tasks_jsonl(std::string_view text,
                                                     const std::string& name);
Result<std::vector<ReasoningTask>> load_tasks_jsonl(const std::string& path);

} // namespace llmwb
