// The reasoning task generator: deterministic in its seed, every level's shape (operations,
// facts), and every answer checked independently — arithmetic questions re-evaluated by a
// small parser here (precedence and parentheses), ordering questions solved from their facts.
#include <map>
#include <set>
#include <string>

#include "engine/serving/reasoning_tasks.h"
#include "engine/serving/think_ladder.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::mini_test;

namespace {

// A tiny evaluator for the test's own check: expr := term (('+'|'-') term)*, term := factor
// ('*' factor)*, factor := number | '(' expr ')'.
struct Eval {
    std::string s;
    size_t i = 0;
    int ops = 0;
    void skip() {
        while (i < s.size() && s[i] == ' ')
            ++i;
    }
    long long factor() {
        skip();
        if (s[i] == '(') {
            ++i;
            long long v = expr();
            skip();
            ++i; // ')'
            return v;
        }
        long long v = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9')
            v = v * 10 + (s[i++] - '0');
        return v;
    }
    long long term() {
        long long v = factor();
        for (skip(); i < s.size() && s[i] == '*'; skip()) {
            ++i;
            ++ops;
            v *= factor();
        }
        return v;
    }
    long long expr() {
        long long v = term();
        for (skip(); i < s.size() && (s[i] == '+' || s[i] == '-'); skip()) {
            const char op = s[i++];
            ++ops;
            const long long r = term();
            v = op == '+' ? v + r : v - r;
        }
        return v;
    }
};

} // namespace

MT_TEST(parse_task_sets) {
    auto a = parse_task_set("arith:3");
    MT_REQUIRE(a.ok());
    MT_REQUIRE(a->kind == TaskKind::Arithmetic);
    MT_REQUIRE_COMPARE(a->level, 3);
    MT_REQUIRE(parse_task_set("logic:5")->kind == TaskKind::Logic);
    MT_REQUIRE_COMPARE(parse_task_set("logic")->level, 1);
    for (const char* bad : {"arith:0", "arith:6", "arith:12", "chess:1", "", "arith:"})
        MT_REQUIRE_MSG(!parse_task_set(bad).ok(), "%s", bad);
}

MT_TEST(deterministic_in_the_seed) {
    const TaskSetSpec s{TaskKind::Arithmetic, 2};
    const auto a = generate_tasks(s, 20, 7), b = generate_tasks(s, 20, 7);
    const auto c = generate_tasks(s, 20, 8);
    MT_REQUIRE_COMPARE(a.size(), size_t(20));
    bool differs = false;
    for (size_t i = 0; i < a.size(); ++i) {
        MT_REQUIRE_COMPARE(a[i].question, b[i].question);
        differs |= a[i].question != c[i].question;
    }
    MT_REQUIRE(differs);
    std::set<std::string> distinct;
    for (const auto& t : a)
        distinct.insert(t.question);
    MT_REQUIRE(distinct.size() > 10);
}

MT_TEST(arithmetic_answers_are_right) {
    for (int level = 1; level <= 5; ++level) {
        MT_SCOPE("level %d", level);
        for (const ReasoningTask& t : generate_tasks({TaskKind::Arithmetic, level}, 50, 3)) {
            const std::string prefix = "Compute ";
            MT_REQUIRE(t.question.rfind(prefix, 0) == 0);
            const size_t end = t.question.find('.');
            Eval e{t.question.substr(prefix.size(), end - prefix.size())};
            const long long v = e.expr();
            MT_REQUIRE_COMPARE(std::to_string(v), t.answer);
            MT_REQUIRE_COMPARE(e.ops, level);
        }
    }
}

MT_TEST(logic_answers_are_right) {
    for (int level = 1; level <= 5; ++level) {
        MT_SCOPE("level %d", level);
        for (const ReasoningTask& t : generate_tasks({TaskKind::Logic, level}, 50, 5)) {
            // Facts "X is taller than Y." -> who has no one above / below.
            std::set<std::string> people, below, above;
            int facts = 0;
            size_t at = 0;
            const std::string mid = " is taller than ";
            while ((at = t.question.find(mid, at)) != std::string::npos) {
                const size_t x0 = t.question.rfind(' ', at - 1);
                const std::string x =
                    t.question.substr(x0 == std::string::npos ? 0 : x0 + 1,
                                      at - (x0 == std::string::npos ? 0 : x0 + 1));
                const size_t y0 = at + mid.size();
                const std::string y = t.question.substr(y0, t.question.find('.', y0) - y0);
                people.insert(x);
                people.insert(y);
                below.insert(y);
                above.insert(x);
                ++facts;
                at = y0;
            }
            MT_REQUIRE_COMPARE(facts, level + 1);
            MT_REQUIRE_COMPARE(people.size(), static_cast<size_t>(level + 2));
            std::vector<std::string> top, bottom;
            for (const auto& p : people) {
                if (!below.count(p))
                    top.push_back(p);
                if (!above.count(p))
                    bottom.push_back(p);
            }
            MT_REQUIRE_COMPARE(top.size(), size_t(1));
            MT_REQUIRE_COMPARE(bottom.size(), size_t(1));
            const bool tallest = t.question.find("tallest") != std::string::npos;
            MT_REQUIRE_COMPARE(t.answer, tallest ? top[0] : bottom[0]);
            MT_REQUIRE_COMPARE(t.names, std::vector<std::string>(people.begin(), people.end()));
        }
    }
}

MT_TEST(answers_in_texts) {
    const TaskSetSpec arith{TaskKind::Arithmetic, 1};
    const ReasoningTask t = generate_tasks(arith, 1, 1)[0];
    MT_REQUIRE_COMPARE(task_answer_in(arith, t, "first 3, then 1,024."),
                       std::optional<std::string>("1024"));
    MT_REQUIRE(!task_answer_in(arith, t, "no idea").has_value());
    const TaskSetSpec logic{TaskKind::Logic, 2};
    const ReasoningTask l = generate_tasks(logic, 1, 1)[0];
    const std::string text = l.names[0] + " or maybe " + l.names[1];
    MT_REQUIRE_COMPARE(task_answer_in(logic, l, text), std::optional<std::string>(l.names[1]));
    MT_REQUIRE(!task_answer_in(logic, l, "nobody").has_value());
}

// A user's task file (issue 20's Think harder page): hostile lines are errors naming the line.
MT_TEST(task_files) {
    auto ok = parse_tasks_jsonl("\xEF\xBB\xBF{\"question\": \"2+2?\", \"answer\": 4}\n\n"
                                "{\"question\": \"Who?\", \"answer\": \" Ann \", \"x\": 1}\r\n",
                                "t.jsonl");
    MT_REQUIRE_MSG(ok.ok(), "%s", ok.ok() ? "" : ok.message().c_str());
    MT_REQUIRE_COMPARE(ok->size(), size_t(2));
    MT_REQUIRE_COMPARE((*ok)[0].answer, std::string("4"));
    MT_REQUIRE_COMPARE((*ok)[1].answer, std::string("Ann"));
    const std::pair<const char*, const char*> bad[] = {
        {"{\"question\": \"q\", \"answer\": 1}\nnot json\n", "t.jsonl:2"},
        {"[1, 2]\n", "t.jsonl:1"},
        {"{\"question\": \"\", \"answer\": 1}\n", "t.jsonl:1"},
        {"{\"question\": \"q\"}\n", "t.jsonl:1"},
        {"{\"question\": \"q\", \"answer\": [1]}\n", "t.jsonl:1"},
        {"\n\n{\"question\": [[[[[[[[[[[[1]]]]]]]]]]]], \"answer\": 1}\n", "t.jsonl:3"},
        {"\n  \n", "no tasks"},
    };
    for (const auto& [text, where] : bad) {
        auto r = parse_tasks_jsonl(text, "t.jsonl");
        MT_REQUIRE_MSG(!r.ok(), "%s", text);
        MT_REQUIRE_MSG(r.message().find(where) != std::string::npos, "%s", r.message().c_str());
    }
    std::string huge(size_t(kMaxTaskFileBytes) + 1, ' ');
    MT_REQUIRE(!parse_tasks_jsonl(huge, "big").ok());
    MT_REQUIRE(!load_tasks_jsonl("/nonexistent/tasks.jsonl").ok());
}

MT_TEST(think_ladders) {
    auto l = parse_think_ladder("n=1,2,4;think=0,256;beam=2");
    MT_REQUIRE(l.ok());
    MT_REQUIRE_COMPARE(l->size(), size_t(6));
    MT_REQUIRE((*l)[3].kind == ThinkRungKind::ThinkingBudget);
    MT_REQUIRE_COMPARE((*l)[3].value, 0);
    MT_REQUIRE_COMPARE(think_ladder_text(*l), std::string("n=1,2,4;think=0,256;beam=2"));
    MT_REQUIRE_COMPARE(think_rung_choices((*l)[2], SamplingParams{}).size(), size_t(4));
    MT_REQUIRE_COMPARE(*think_rung_choices((*l)[4], SamplingParams{})[0].thinking_budget, 256);
    for (const char* bad : {"", "n=", "n=0", "n=65", "beam=17", "think=-1", "think=40000", "x=1",
                            "n=1,,2", "n=99999999999"})
        MT_REQUIRE_MSG(!parse_think_ladder(bad).ok(), "%s", bad);
}

MT_TEST(think_scoring) {
    ReasoningTask t;
    t.question = "Compute 2 + 3.";
    t.answer = "5";
    const TaskSetSpec arith{TaskKind::Arithmetic, 1};
    std::vector<ThinkSample> s = {{"it is 5", 3, {}}, {"maybe 4", 2, {}}, {"5.0!", 4, {}}};
    auto q = think_score_question(&arith, t, 7, s);
    MT_REQUIRE(q.correct);
    MT_REQUIRE_COMPARE(q.tokens, int64_t(9));
    MT_REQUIRE_COMPARE(q.vote.winner_votes, 2);
    MT_REQUIRE_COMPARE(*q.samples[1].answer, std::string("4"));
    // A file's text answer: mentioned (any case) or the last line.
    ReasoningTask c;
    c.answer = "Paris";
    MT_REQUIRE_COMPARE(*think_answer_in(nullptr, c, "I think PARIS."), std::string("Paris"));
    MT_REQUIRE_COMPARE(*think_answer_in(nullptr, c, "Lyon\n  Rome  \n\n"), std::string("Rome"));
    MT_REQUIRE(!think_answer_in(nullptr, c, " \n").has_value());
    ThinkRungResult r;
    r.add(q, true);
    r.add(think_score_question(&arith, t, 8, {{"no idea", 2, {}}}), true);
    MT_REQUIRE_COMPARE(r.correct, 1);
    MT_REQUIRE_COMPARE(r.no_answer, 1);
    r.wall_ms = 12.5;
    const auto j = think_rung_json(r, true);
    auto back = parse_think_rung_json(nlohmann::json(j), "rung");
    MT_REQUIRE_MSG(back.ok(), "%s", back.ok() ? "" : back.message().c_str());
    MT_REQUIRE_COMPARE(back->tokens, r.tokens);
    MT_REQUIRE_COMPARE(back->questions.size(), size_t(2));
    MT_REQUIRE_COMPARE(*back->questions[0].vote.winner, std::string("5"));
    auto broken = nlohmann::json(j);
    broken["correct"] = 5; // more than the tasks
    MT_REQUIRE(!parse_think_rung_json(broken, "rung").ok());
}

MINI_TEST_MAIN()
