#include "engine/serving/reasoning_tasks.h"

#include <algorithm>
#include <array>
#include <random>

#include "engine/serving/answer_vote.h"

namespace llmwb {

namespace {

constexpr std::array<const char*, 12> kNames = {"Alice", "Bruno", "Chen", "Dara", "Emil", "Farah",
                                                "Goran", "Hana",  "Ivo",  "Jun",  "Kira", "Lena"};

// A uniform integer in [lo, hi] from a fixed-algorithm engine (std::mt19937_64 is specified by
// the standard; the distributions are not, so they are not used).
int64_t uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
    const auto span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(rng() % span);
}

ReasoningTask arithmetic(std::mt19937_64& rng, int32_t level) {
    // Left to right with explicit parentheses: ((a op b) op c) ...; operands 1..12, products
    // of small numbers only, so every value stays far inside int64.
    int64_t value = uniform(rng, 1, 12);
    std::string expr = std::to_string(value);
    for (int32_t i = 0; i < level; ++i) {
        const int64_t op = uniform(rng, 0, 2);
        const int64_t x = uniform(rng, 1, op == 2 ? 5 : 12);
        const char* sym = op == 0 ? " + " : op == 1 ? " - " : " * ";
        value = op == 0 ? value + x : op == 1 ? value - x : value * x;
        expr = (i == 0 ? expr : "(" + expr + ")") + sym + std::to_string(x);
    }
    ReasoningTask t;
    t.question = "Compute " + expr + ". Answer with the final number.";
    t.answer = std::to_string(value);
    return t;
}

ReasoningTask logic(std::mt19937_64& rng, int32_t level) {
    // A chain of level + 2 distinct people, tallest first; its level + 1 links as facts.
    std::vector<std::string> pool(kNames.begin(), kNames.end());
    for (size_t i = pool.size() - 1; i > 0; --i)
        std::swap(pool[i], pool[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(i)))]);
    std::vector<std::string> chain(pool.begin(), pool.begin() + level + 2);
    std::vector<std::string> facts;
    for (size_t i = 0; i + 1 < chain.size(); ++i)
        facts.push_back(chain[i] + " is taller than " + chain[i + 1] + ".");
    for (size_t i = facts.size() - 1; i > 0; --i)
        std::swap(facts[i], facts[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(i)))]);
    const bool tallest = uniform(rng, 0, 1) == 0;
    ReasoningTask t;
    for (const std::string& f : facts)
        t.question += f + " ";
    t.question += tallest ? "Who is the tallest? Answer with the name."
                          : "Who is the shortest? Answer with the name.";
    t.answer = tallest ? chain.front() : chain.back();
    t.names = chain;
    std::sort(t.names.begin(), t.names.end());
    return t;
}

} // namespace

const char* task_kind_name(TaskKind k) {
    return k == TaskKind::Logic ? "logic" : "arith";
}

Result<TaskSetSpec> parse_task_set(std::string_view spec) {
    const size_t colon = spec.find(':');
    const std::string_view kind = spec.substr(0, colon);
    TaskSetSpec s;
    if (kind == "arith")
        s.kind = TaskKind::Arithmetic;
    else if (kind == "logic")
        s.kind = TaskKind::Logic;
    else
        return make_error("task set \"" + std::string(spec) +
                          "\": expected arith:LEVEL or logic:LEVEL");
    if (colon == std::string_view::npos)
        return s;
    const std::string_view lv = spec.substr(colon + 1);
    if (lv.size() != 1 || lv[0] < '1' || lv[0] > '5')
        return make_error("task set \"" + std::string(spec) + "\": the level must be 1..5");
    s.level = lv[0] - '0';
    return s;
}

std::vector<ReasoningTask> generate_tasks(const TaskSetSpec& spec, int32_t count, uint64_t seed) {
    const int32_t level = std::clamp(spec.level, 1, 5);
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(spec.kind) * 16 +
                        static_cast<uint64_t>(level));
    std::vector<ReasoningTask> tasks;
    for (int32_t i = 0; i < std::clamp(count, 0, 10000); ++i)
        tasks.push_back(spec.kind == TaskKind::Logic ? logic(rng, level) : arithmetic(rng, level));
    return tasks;
}

std::optional<std::string> task_answer_in(const TaskSetSpec& spec, const ReasoningTask& task,
                                          std::string_view text) {
    if (spec.kind == TaskKind::Arithmetic) {
        static const AnswerPattern last_number = *AnswerPattern::parse("last-number");
        return last_number.extract(text);
    }
    std::optional<std::string> best;
    size_t best_at = 0;
    for (const std::string& name : task.names) {
        const size_t at = text.rfind(name);
        if (at != std::string_view::npos && (!best || at > best_at)) {
            best = name;
            best_at = at;
        }
    }
    return best;
}

} // namespace llmwb
