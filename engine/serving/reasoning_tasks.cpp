#include "engine/serving/reasoning_tasks.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "engine/serving/answer_vote.h"
#include "engine/util/json_depth.h"

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

namespace llmwb {

Result<std::vector<ReasoningTask>> parse_tasks_jsonl(std::string_view text,
                                                     const std::string& name) {
    if (static_cast<int64_t>(text.size()) > kMaxTaskFileBytes)
        return make_error(name + ": larger than " + std::to_string(kMaxTaskFileBytes >> 20) +
                          " MiB");
    if (text.substr(0, 3) == "\xEF\xBB\xBF")
        text.remove_prefix(3);
    std::vector<ReasoningTask> tasks;
    int line_no = 0;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++line_no;
        const std::string where = name + ":" + std::to_string(line_no);
        if (line.find_first_not_of(" \t\r") == std::string_view::npos)
            continue;
        if (static_cast<int32_t>(tasks.size()) >= kMaxTaskLines)
            return make_error(name + ": more than " + std::to_string(kMaxTaskLines) + " tasks");
        if (Status st = check_json_depth(line, 8, where); !st)
            return st.error();
        const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded())
            return make_error(where + ": not valid JSON");
        if (!j.is_object())
            return make_error(where + ": expected an object {\"question\", \"answer\"}");
        const auto q = j.find("question");
        const auto a = j.find("answer");
        if (q == j.end() || !q->is_string() || q->get_ref<const std::string&>().empty())
            return make_error(where + ": \"question\" must be a non-empty string");
        if (q->get_ref<const std::string&>().size() > kMaxTaskQuestionBytes)
            return make_error(where + ": the question is longer than " +
                              std::to_string(kMaxTaskQuestionBytes) + " bytes");
        ReasoningTask t;
        t.question = q->get<std::string>();
        if (a != j.end() && a->is_string())
            t.answer = a->get<std::string>();
        else if (a != j.end() && a->is_number())
            t.answer = a->dump();
        else
            return make_error(where + ": \"answer\" must be a string or a number");
        const size_t b = t.answer.find_first_not_of(" \t\r\n");
        if (b == std::string::npos || t.answer.size() > 1024)
            return make_error(where + ": \"answer\" must be non-empty text (at most 1024 bytes)");
        t.answer = t.answer.substr(b, t.answer.find_last_not_of(" \t\r\n") - b + 1);
        if (auto n = normalize_number(t.answer))
            t.answer = *n;
        tasks.push_back(std::move(t));
    }
    if (tasks.empty())
        return make_error(name + ": no tasks");
    return tasks;
}

Result<std::vector<ReasoningTask>> load_tasks_jsonl(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return make_error(path + ": cannot be opened");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0)
        return make_error(path + ": cannot be read");
    if (size > kMaxTaskFileBytes)
        return make_error(path + ": larger than " + std::to_string(kMaxTaskFileBytes >> 20) +
                          " MiB");
    in.seekg(0);
    std::string text(static_cast<size_t>(size), '\0');
    if (!in.read(text.data(), size))
        return make_error(path + ": cannot be read");
    return parse_tasks_jsonl(text, path);
}

} // namespace llmwb
