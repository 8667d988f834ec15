// Self-consistency votes on constructed samples: each pattern's extraction (last number with
// signs, commas and fractions; the last balanced \boxed{}; a regex's group), number
// normalisation, majority, ties, "no answer", and bad patterns refused with their reason.
#include <string>
#include <vector>

#include "engine/serving/answer_vote.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::mini_test;

namespace {

AnswerPattern pattern(std::string_view spec) {
    auto p = AnswerPattern::parse(spec);
    MT_REQUIRE_MSG(p.ok(), "%s", p.ok() ? "" : p.message().c_str());
    return *p;
}

std::optional<std::string> some(const char* s) {
    return std::string(s);
}

} // namespace

MT_TEST(normalize_numbers) {
    MT_REQUIRE_COMPARE(normalize_number("-01,234.500"), some("-1234.5"));
    MT_REQUIRE_COMPARE(normalize_number("+3"), some("3"));
    MT_REQUIRE_COMPARE(normalize_number("-0.0"), some("0"));
    MT_REQUIRE_COMPARE(normalize_number(" 42 "), some("42"));
    MT_REQUIRE_COMPARE(normalize_number("7.000"), some("7"));
    MT_REQUIRE(!normalize_number("1,23").has_value()); // not a thousands group
    MT_REQUIRE(!normalize_number("12a").has_value());
    MT_REQUIRE(!normalize_number("").has_value());
    MT_REQUIRE(!normalize_number("-").has_value());
}

MT_TEST(last_number) {
    const AnswerPattern p = pattern("last-number");
    MT_REQUIRE(p.kind() == AnswerPattern::Kind::LastNumber);
    MT_REQUIRE_COMPARE(p.extract("3 apples and 4 pears make 7."), some("7"));
    MT_REQUIRE_COMPARE(p.extract("x = -4"), some("-4"));
    MT_REQUIRE_COMPARE(p.extract("pages 3-4"), some("4")); // a range, not minus four
    MT_REQUIRE_COMPARE(p.extract("total: 1,234.50 dollars"), some("1234.5"));
    MT_REQUIRE_COMPARE(p.extract("so 2.5."), some("2.5")); // the full stop is no fraction
    MT_REQUIRE(!p.extract("no digits here").has_value());
    MT_REQUIRE(!p.extract("").has_value());
}

MT_TEST(boxed) {
    const AnswerPattern p = pattern("boxed");
    MT_REQUIRE_COMPARE(p.extract("first \\boxed{3} then \\boxed{ 12.0 }"), some("12"));
    MT_REQUIRE_COMPARE(p.extract("\\boxed{\\frac{1}{2}}"), some("\\frac{1}{2}"));
    MT_REQUIRE(!p.extract("\\boxed{\\frac{1}{2}").has_value()); // cut off: unbalanced
    MT_REQUIRE(!p.extract("\\boxed{}").has_value());
    MT_REQUIRE(!p.extract("the answer is 5").has_value());
    // Deep nesting is a counter, not recursion.
    std::string deep = "\\boxed{" + std::string(100000, '{') + std::string(100000, '}') + "}";
    MT_REQUIRE(p.extract(deep).has_value());
}

MT_TEST(regex_group) {
    auto p = AnswerPattern::parse("[Aa]nswer: *([A-E])");
    if (!p.ok() && p.message().find("no PCRE2") != std::string::npos)
        MT_SKIP("this build has no PCRE2");
    MT_REQUIRE(p.ok());
    MT_REQUIRE(p->kind() == AnswerPattern::Kind::Regex);
    MT_REQUIRE_COMPARE(p->extract("Answer: B ... on reflection, answer: D"), some("D"));
    MT_REQUIRE(!p->extract("I cannot tell").has_value());
    // A number group is normalised like last-number's.
    MT_REQUIRE_COMPARE(pattern("= *([-0-9.,]+)").extract("x = 010.50"), some("10.5"));
    // Catastrophic backtracking stops at PCRE2's limit: no answer, no hang.
    const AnswerPattern slow = pattern("^(a+)+$");
    std::string many_a(40, 'a');
    many_a.push_back('b');
    MT_REQUIRE(!slow.extract(many_a).has_value());
    // Invalid UTF-8 in a sample is no answer, not a crash.
    MT_REQUIRE(!pattern("(x)").extract("\xff\xfe x").has_value());
}

MT_TEST(bad_patterns_are_refused) {
    auto empty = AnswerPattern::parse("");
    MT_REQUIRE(!empty.ok());
    auto p = AnswerPattern::parse("answer: [0-9]+");
    if (!p.ok() && p.message().find("no PCRE2") != std::string::npos)
        MT_SKIP("this build has no PCRE2");
    MT_REQUIRE(!p.ok());
    MT_REQUIRE_MSG(p.message().find("exactly one capture group") != std::string::npos, "%s",
                   p.message().c_str());
    auto two = AnswerPattern::parse("(a)(b)");
    MT_REQUIRE(!two.ok());
    auto broken = AnswerPattern::parse("(unclosed");
    MT_REQUIRE(!broken.ok());
    MT_REQUIRE_MSG(broken.message().find("(unclosed") != std::string::npos, "%s",
                   broken.message().c_str());
}

MT_TEST(majority_ties_and_no_answer) {
    const AnswerPattern p = pattern("last-number");
    const std::vector<std::string> samples = {"so 12",     "I get 12.0", "maybe 7", "no idea",
                                              "1,2 -> 12", "=7",         "hmm"};
    VoteResult v = majority_vote(p, samples);
    MT_REQUIRE_COMPARE(v.answers.size(), size_t(7));
    MT_REQUIRE_COMPARE(v.answers[1], some("12"));
    MT_REQUIRE(!v.answers[3].has_value());
    MT_REQUIRE_COMPARE(v.no_answer, 2);
    MT_REQUIRE_COMPARE(v.winner, some("12"));
    MT_REQUIRE_COMPARE(v.winner_votes, 3);
    MT_REQUIRE_COMPARE(v.tied, 1);
    MT_REQUIRE(!v.tie());
    MT_REQUIRE_COMPARE(v.tally.size(), size_t(2));
    MT_REQUIRE_COMPARE(v.tally[1].answer, std::string("7"));
    MT_REQUIRE_COMPARE(v.tally[1].votes, 2);

    // A tie: reported, the first answer seen wins it.
    VoteResult t = tally_answers({some("b"), some("a"), std::nullopt, some("a"), some("b")});
    MT_REQUIRE(t.tie());
    MT_REQUIRE_COMPARE(t.tied, 2);
    MT_REQUIRE_COMPARE(t.winner, some("b"));
    MT_REQUIRE_COMPARE(t.no_answer, 1);

    // Nothing answered: no winner.
    VoteResult none = tally_answers({std::nullopt, std::nullopt});
    MT_REQUIRE(!none.winner.has_value());
    MT_REQUIRE_COMPARE(none.no_answer, 2);
    MT_REQUIRE_COMPARE(none.tied, 0);
    VoteResult empty = tally_answers({});
    MT_REQUIRE(!empty.winner.has_value());
}

MINI_TEST_MAIN()
