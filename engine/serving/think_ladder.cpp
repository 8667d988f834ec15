#include "engine/serving/think_ladder.h"

#include <algorithm>
#include <cctype>

#include "engine/serving/parallel_sampling.h"

namespace llmwb {

namespace {

std::string think_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

int32_t think_rung_max(ThinkRungKind k) {
    switch (k) {
    case ThinkRungKind::Samples:
        return kMaxThinkSamples;
    case ThinkRungKind::ThinkingBudget:
        return kMaxThinkingBudget;
    case ThinkRungKind::Beam:
        return kMaxThinkBeamWidth;
    }
    return 1;
}

int32_t think_rung_min(ThinkRungKind k) {
    return k == ThinkRungKind::ThinkingBudget ? 0 : 1;
}

} // namespace

const char* think_rung_kind_name(ThinkRungKind k) {
    switch (k) {
    case ThinkRungKind::Samples:
        return "n";
    case ThinkRungKind::ThinkingBudget:
        return "think";
    case ThinkRungKind::Beam:
        return "beam";
    }
    return "n";
}

std::string think_rung_label(const ThinkRung& r) {
    return std::string(think_rung_kind_name(r.kind)) + "=" + std::to_string(r.value);
}

Result<std::vector<ThinkRung>> parse_think_ladder(std::string_view text) {
    std::vector<ThinkRung> rungs;
    while (!text.empty()) {
        const size_t semi = text.find(';');
        const std::string_view group = text.substr(0, semi);
        text = semi == std::string_view::npos ? std::string_view{} : text.substr(semi + 1);
        const size_t eq = group.find('=');
        const std::string_view key = group.substr(0, eq);
        ThinkRungKind kind = ThinkRungKind::Samples;
        if (key == "n")
            kind = ThinkRungKind::Samples;
        else if (key == "think")
            kind = ThinkRungKind::ThinkingBudget;
        else if (key == "beam")
            kind = ThinkRungKind::Beam;
        else
            return make_error("ladder: expected n=..., think=... or beam=..., got \"" +
                              std::string(group) + "\"");
        if (eq == std::string_view::npos)
            return make_error("ladder: \"" + std::string(group) + "\" has no values");
        std::string_view values = group.substr(eq + 1);
        do {
            const size_t comma = values.find(',');
            const std::string item(values.substr(0, comma));
            values =
                comma == std::string_view::npos ? std::string_view{} : values.substr(comma + 1);
            const int32_t lo = think_rung_min(kind), hi = think_rung_max(kind);
            long v = -1;
            bool ok =
                !item.empty() && item.size() <= 6 &&
                std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
            if (ok)
                v = std::stol(item);
            if (!ok || v < lo || v > hi)
                return make_error("ladder: each " + std::string(key) + " must be an integer in [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) + "], got \"" +
                                  item + "\"");
            if (rungs.size() >= kMaxThinkRungs)
                return make_error("ladder: at most " + std::to_string(kMaxThinkRungs) + " rungs");
            rungs.push_back({kind, static_cast<int32_t>(v)});
        } while (!values.empty());
    }
    if (rungs.empty())
        return make_error("ladder: no rungs");
    return rungs;
}

std::string think_ladder_text(const std::vector<ThinkRung>& rungs) {
    std::string s;
    for (size_t i = 0; i < rungs.size(); ++i) {
        const bool same = i > 0 && rungs[i - 1].kind == rungs[i].kind;
        if (!same) {
            if (i > 0)
                s += ';';
            s += think_rung_kind_name(rungs[i].kind);
            s += '=';
        } else {
            s += ',';
        }
        s += std::to_string(rungs[i].value);
    }
    return s;
}

std::vector<SamplingParams> think_rung_choices(const ThinkRung& r, const SamplingParams& base) {
    if (r.kind == ThinkRungKind::Samples)
        return parallel_sampling_choices(base, r.value);
    SamplingParams p = base;
    if (r.kind == ThinkRungKind::ThinkingBudget)
        p.thinking_budget = r.value;
    return {p};
}

BeamSearchParams think_rung_beam(const ThinkRung& r, const SamplingParams& base) {
    BeamSearchParams b;
    b.width = std::max(1, r.value);
    b.params = base;
    b.params.stop.clear(); // beam search refuses stop strings
    return b;
}

std::optional<std::string> think_answer_in(const TaskSetSpec* generated, const ReasoningTask& task,
                                           std::string_view text) {
    if (generated)
        return task_answer_in(*generated, task, text);
    if (normalize_number(task.answer)) {
        static const AnswerPattern last_number = *AnswerPattern::parse("last-number");
        return last_number.extract(text);
    }
    const std::string hay = think_lower(text);
    if (!task.answer.empty() && hay.find(think_lower(task.answer)) != std::string::npos)
        return task.answer;
    // The last non-empty line, trimmed (at most 200 bytes): what the sample said instead.
    size_t end = text.size();
    while (end > 0) {
        const size_t start = text.rfind('\n', end - 1);
        const size_t from = start == std::string_view::npos ? 0 : start + 1;
        std::string_view line = text.substr(from, end - from);
        const size_t b = line.find_first_not_of(" \t\r");
        if (b != std::string_view::npos) {
            line = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
            return std::string(line.substr(0, 200));
        }
        if (start == std::string_view::npos)
            break;
        end = start;
    }
    return std::nullopt;
}

bool think_answer_matches(const std::string& expected, const std::string& got) {
    const auto a = normalize_number(expected), b = normalize_number(got);
    if (a && b)
        return *a == *b;
    return think_lower(expected) == think_lower(got);
}

ThinkQuestionResult think_score_question(const TaskSetSpec* generated, const ReasoningTask& task,
                                         int32_t index, std::vector<ThinkSample> samples,
                                         int64_t tokens_spent) {
    ThinkQuestionResult q;
    q.task = index;
    std::vector<std::optional<std::string>> answers;
    int64_t tokens = 0;
    for (ThinkSample& s : samples) {
        s.answer = think_answer_in(generated, task, s.text);
        answers.push_back(s.answer);
        tokens += s.tokens;
    }
    q.samples = std::move(samples);
    q.vote = tally_answers(std::move(answers));
    q.correct = q.vote.winner && think_answer_matches(task.answer, *q.vote.winner);
    q.tokens = tokens_spent >= 0 ? tokens_spent : tokens;
    return q;
}

Result<ThinkQuestionResult> think_run_question(Engine& engine, std::vector<int32_t> prompt,
                                               const ThinkRung& rung, const SamplingParams& base,
                                               const TaskSetSpec* generated,
                                               const ReasoningTask& task, int32_t index) {
    std::vector<ThinkSample> samples;
    if (rung.kind == ThinkRungKind::Beam) {
        auto res = beam_search(engine, std::move(prompt), think_rung_beam(rung, base));
        if (!res)
            return res.error();
        if (!res->hypotheses.empty()) {
            const BeamHypothesis& h = res->hypotheses.front();
            samples.push_back({h.text, static_cast<int32_t>(h.ids.size()), std::nullopt});
        }
        const int64_t spent = static_cast<int64_t>(res->steps) * std::max(1, rung.value);
        return think_score_question(generated, task, index, std::move(samples), spent);
    }
    const auto choices = think_rung_choices(rung, base);
    auto res = generate_choices(engine, std::move(prompt), choices);
    if (!res)
        return res.error();
    for (GenerationResult& r : *res)
        samples.push_back({std::move(r.text), static_cast<int32_t>(r.ids.size()), std::nullopt});
    return think_score_question(generated, task, index, std::move(samples));
}

void ThinkRungResult::add(ThinkQuestionResult q, bool keep) {
    ++tasks;
    correct += q.correct ? 1 : 0;
    ties += q.vote.tie() ? 1 : 0;
    no_answer += q.vote.winner ? 0 : 1;
    tokens += q.tokens;
    if (keep)
        questions.push_back(std::move(q));
}

nlohmann::ordered_json think_rung_json(const ThinkRungResult& r, bool with_questions) {
    const double k = r.tasks > 0 ? r.tasks : 1;
    nlohmann::ordered_json j;
    j["rung"] = think_rung_label(r.rung);
    j["kind"] = think_rung_kind_name(r.rung.kind);
    j["value"] = r.rung.value;
    if (r.rung.kind == ThinkRungKind::Samples)
        j["n"] = r.rung.value;
    j["accuracy"] = r.accuracy();
    j["correct"] = r.correct;
    j["tasks"] = r.tasks;
    j["tokens"] = r.tokens;
    j["tokens_per_task"] = r.tokens / k;
    j["wall_ms"] = r.wall_ms;
    j["ms_per_task"] = r.wall_ms / k;
    j["ties"] = r.ties;
    j["no_answer"] = r.no_answer;
    if (!with_questions)
        return j;
    nlohmann::ordered_json qs = nlohmann::ordered_json::array();
    for (const ThinkQuestionResult& q : r.questions) {
        nlohmann::ordered_json jq;
        jq["task"] = q.task;
        jq["correct"] = q.correct;
        jq["tokens"] = q.tokens;
        jq["vote"] = q.vote.winner ? nlohmann::ordered_json(*q.vote.winner) : nullptr;
        jq["votes"] = q.vote.winner_votes;
        jq["tie"] = q.vote.tie();
        nlohmann::ordered_json ss = nlohmann::ordered_json::array();
        for (const ThinkSample& s : q.samples)
            ss.push_back({{"text", s.text},
                          {"tokens", s.tokens},
                          {"answer", s.answer ? nlohmann::ordered_json(*s.answer) : nullptr}});
        jq["samples"] = std::move(ss);
        qs.push_back(std::move(jq));
    }
    j["questions"] = std::move(qs);
    return j;
}

namespace {

bool think_get_int(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi, int64_t* out) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer())
        return false;
    const int64_t v = it->get<int64_t>();
    if (v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

} // namespace

Result<ThinkRungResult> parse_think_rung_json(const nlohmann::json& j, const std::string& where) {
    auto bad = [&](const std::string& what) { return make_error(where + ": " + what); };
    if (!j.is_object())
        return bad("not an object");
    ThinkRungResult r;
    const auto kind = j.find("kind");
    if (kind == j.end() || !kind->is_string())
        return bad("\"kind\" missing");
    const std::string& k = kind->get_ref<const std::string&>();
    if (k == "n")
        r.rung.kind = ThinkRungKind::Samples;
    else if (k == "think")
        r.rung.kind = ThinkRungKind::ThinkingBudget;
    else if (k == "beam")
        r.rung.kind = ThinkRungKind::Beam;
    else
        return bad("unknown kind \"" + k + "\"");
    int64_t v = 0;
    if (!think_get_int(j, "value", think_rung_min(r.rung.kind), think_rung_max(r.rung.kind), &v))
        return bad("\"value\" missing or out of range");
    r.rung.value = static_cast<int32_t>(v);
    int64_t tasks = 0, correct = 0, ties = 0, none = 0;
    if (!think_get_int(j, "tasks", 0, 1000000, &tasks) ||
        !think_get_int(j, "correct", 0, tasks, &correct) ||
        !think_get_int(j, "ties", 0, tasks, &ties) ||
        !think_get_int(j, "no_answer", 0, tasks, &none) ||
        !think_get_int(j, "tokens", 0, INT64_MAX / 2, &r.tokens))
        return bad("a count is missing or out of range");
    r.tasks = static_cast<int32_t>(tasks);
    r.correct = static_cast<int32_t>(correct);
    r.ties = static_cast<int32_t>(ties);
    r.no_answer = static_cast<int32_t>(none);
    const auto wall = j.find("wall_ms");
    if (wall == j.end() || !wall->is_number() || wall->get<double>() < 0)
        return bad("\"wall_ms\" missing or negative");
    r.wall_ms = wall->get<double>();
    const auto qs = j.find("questions");
    if (qs == j.end())
        return r;
    if (!qs->is_array() || qs->size() > static_cast<size_t>(tasks))
        return bad("\"questions\" is not an array of at most \"tasks\" entries");
    for (const auto& jq : *qs) {
        const std::string wq = where + ": question " + std::to_string(r.questions.size());
        ThinkQuestionResult q;
        int64_t task = 0, votes = 0;
        if (!jq.is_object() || !think_get_int(jq, "task", 0, 1000000, &task) ||
            !think_get_int(jq, "tokens", 0, INT64_MAX / 2, &q.tokens) ||
            !think_get_int(jq, "votes", 0, 1000000, &votes))
            return make_error(wq + ": task, tokens or votes missing");
        q.task = static_cast<int32_t>(task);
        const auto c = jq.find("correct");
        const auto tie = jq.find("tie");
        const auto vote = jq.find("vote");
        const auto ss = jq.find("samples");
        if (c == jq.end() || !c->is_boolean() || tie == jq.end() || !tie->is_boolean() ||
            vote == jq.end() || !(vote->is_string() || vote->is_null()) || ss == jq.end() ||
            !ss->is_array() || ss->size() > static_cast<size_t>(kMaxThinkSamples))
            return make_error(wq + ": correct, tie, vote or samples missing");
        q.correct = c->get<bool>();
        std::vector<std::optional<std::string>> answers;
        for (const auto& js : *ss) {
            ThinkSample s;
            int64_t t = 0;
            const auto text = js.is_object() ? js.find("text") : js.end();
            const auto ans = js.is_object() ? js.find("answer") : js.end();
            if (!js.is_object() || text == js.end() || !text->is_string() || ans == js.end() ||
                !(ans->is_string() || ans->is_null()) ||
                !think_get_int(js, "tokens", 0, 1 << 30, &t))
                return make_error(wq + ": a sample lacks text, tokens or answer");
            s.text = text->get<std::string>();
            s.tokens = static_cast<int32_t>(t);
            if (ans->is_string())
                s.answer = ans->get<std::string>();
            answers.push_back(s.answer);
            q.samples.push_back(std::move(s));
        }
        q.vote = tally_answers(std::move(answers));
        if (vote->is_string() && q.samples.empty()) {
            q.vote.winner = vote->get<std::string>();
            q.vote.winner_votes = static_cast<int32_t>(votes);
        }
        r.questions.push_back(std::move(q));
    }
    return r;
}

} // namespace llmwb
