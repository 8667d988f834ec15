// The JSONL prompt reader of `llmwb generate --prompts` / `bench --dataset`
// (app/cli/prompts_jsonl), and the SamplingParams field table it checks values with: blank
// lines, a BOM, CRLF, malformed lines, non-objects, wrong types, huge numbers, unknown keys —
// each bad line is a record with its error, the good ones around it are read. Qt-free.
#include <cmath>
#include <string>

#include "app/cli/prompts_jsonl.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::cli;

namespace {

std::vector<PromptLine> parse(const std::string& text, SamplingParams defaults = {}) {
    auto r = parse_prompts_jsonl(text, defaults, "p.jsonl");
    MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
    return std::move(r.value());
}

// The error of a file with the single line `line`.
std::string error_of(const std::string& line) {
    auto lines = parse(line + "\n");
    MT_REQUIRE(lines.size() == 1);
    return lines[0].error;
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

} // namespace

MT_TEST(fields_override_defaults) {
    SamplingParams d;
    d.max_tokens = 7;
    d.temperature = 0.5f;
    auto lines = parse(R"({"prompt": "a", "max_tokens": 3, "top_k": 5, "top_p": 0.5, "seed": 9,)"
                       R"( "stop": ["x", "yy"], "stop_token_ids": [1, 2], "ignore_eos": true,)"
                       R"( "min_p": 0.1, "logprobs": 2, "repetition_penalty": 1.1,)"
                       R"( "presence_penalty": -1, "frequency_penalty": 2})"
                       "\n{\"ids\": [4, 5]}\n",
                       d);
    MT_REQUIRE(lines.size() == 2);
    const PromptLine& a = lines[0];
    MT_CHECK(a.ok());
    MT_CHECK(a.prompt == std::string("a") && !a.ids);
    MT_CHECK(a.params.max_tokens == 3 && a.params.top_k == 5 && a.params.top_p == 0.5f);
    MT_CHECK(a.params.temperature == 0.5f); // from the defaults
    MT_CHECK(a.params.seed && *a.params.seed == 9);
    MT_CHECK((a.params.stop == std::vector<std::string>{"x", "yy"}));
    MT_CHECK((a.params.stop_token_ids == std::vector<int32_t>{1, 2}));
    MT_CHECK(a.params.ignore_eos && a.params.logprobs == 2);
    MT_CHECK(a.params.min_p == 0.1f && a.params.repetition_penalty == 1.1f);
    MT_CHECK(a.params.presence_penalty == -1.0f && a.params.frequency_penalty == 2.0f);
    const PromptLine& b = lines[1];
    MT_CHECK(b.ok() && b.line == 2);
    MT_CHECK((b.ids == std::vector<int32_t>{4, 5}) && !b.prompt);
    MT_CHECK(b.params.max_tokens == 7); // defaults only
}

MT_TEST(blank_lines_bom_and_crlf) {
    auto lines = parse("\xEF\xBB\xBF{\"prompt\": \"a\"}\r\n\r\n   \n\t\n{\"prompt\": \"b\"}\r\n\n");
    MT_REQUIRE(lines.size() == 2);
    MT_CHECK(lines[0].ok() && lines[0].prompt == std::string("a") && lines[0].line == 1);
    MT_CHECK(lines[1].ok() && lines[1].prompt == std::string("b") && lines[1].line == 5);
    // No newline at the end of the last line.
    auto last = parse("{\"prompt\": \"a\"}\n{\"prompt\": \"z\"}");
    MT_REQUIRE(last.size() == 2);
    MT_CHECK(last[1].prompt == std::string("z"));
}

MT_TEST(bad_lines_are_records_in_place) {
    auto lines = parse("{\"prompt\": \"a\"}\n"
                       "{\"prompt\": \"b\"\n"                     // malformed
                       "[1, 2]\n"                                 // not an object
                       "{\"prompt\": \"c\", \"max_tokens\": 0}\n" // out of range
                       "{\"prompt\": \"d\"}\n");
    MT_REQUIRE(lines.size() == 5);
    MT_CHECK(lines[0].ok() && lines[4].ok() && lines[4].prompt == std::string("d"));
    MT_CHECK(lines[1].error == "invalid JSON" && lines[1].line == 2);
    MT_CHECK(contains(lines[2].error, "expected a JSON object"));
    MT_CHECK_MSG(lines[3].error == "max_tokens must be an integer in [1, 2147483647], got 0", "%s",
                 lines[3].error.c_str());
    MT_CHECK(!lines[3].prompt && !lines[3].ids); // an invalid line carries no prompt
}

// Deep nesting is refused before parsing (the parser recurses per level): 200,000 levels once
// crashed the process. Brackets inside strings do not count.
MT_TEST(deep_nesting_is_an_error_not_a_crash) {
    const std::string deep =
        "{\"prompt\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
    auto lines = parse(deep + "\n{\"prompt\": \"[[[[[[[[[[[[[[[[[[[[[[[[\"}\n");
    MT_REQUIRE(lines.size() == 2);
    MT_CHECK_MSG(contains(lines[0].error, "nested deeper than 16"), "%s", lines[0].error.c_str());
    MT_CHECK(lines[1].ok() && lines[1].prompt == std::string(24, '['));
}

MT_TEST(prompt_or_ids) {
    MT_CHECK(contains(error_of(R"({"max_tokens": 3})"), "exactly one of \"prompt\" and \"ids\""));
    MT_CHECK(contains(error_of(R"({"prompt": "a", "ids": [1]})"), "exactly one"));
    MT_CHECK(contains(error_of(R"({"prompt": 5})"), "prompt must be a string"));
    MT_CHECK(contains(error_of(R"({"ids": "1,2"})"), "ids must be an array"));
    MT_CHECK(contains(error_of(R"({"ids": [1, -2]})"), "ids must be an array"));
    MT_CHECK(contains(error_of(R"({"ids": [1, 2.5]})"), "ids must be an array"));
    MT_CHECK(contains(error_of(R"({"ids": [4294967296]})"), "ids must be an array"));
    MT_CHECK(error_of(R"({"ids": []})").empty()); // the engine refuses an empty prompt
}

MT_TEST(wrong_types_name_the_field) {
    MT_CHECK_MSG(error_of(R"({"prompt": "a", "temperature": "0.5"})") ==
                     "temperature must be in [0, inf), got \"0.5\"",
                 "%s", error_of(R"({"prompt": "a", "temperature": "0.5"})").c_str());
    MT_CHECK(error_of(R"({"prompt": "a", "temperature": true})") ==
             "temperature must be in [0, inf), got true");
    MT_CHECK(error_of(R"({"prompt": "a", "max_tokens": 2.5})") ==
             "max_tokens must be an integer in [1, 2147483647], got 2.5");
    MT_CHECK(error_of(R"({"prompt": "a", "ignore_eos": 1})") ==
             "ignore_eos must be true or false, got 1");
    MT_CHECK(error_of(R"({"prompt": "a", "stop": 3})") == "stop must be non-empty strings, got 3");
    MT_CHECK(error_of(R"({"prompt": "a", "stop": ["a", 3]})") ==
             "stop must be non-empty strings, got [\"a\",3]");
    MT_CHECK(error_of(R"({"prompt": "a", "stop": ""})") ==
             "stop must be non-empty strings, got ''");
    MT_CHECK(error_of(R"({"prompt": "a", "stop_token_ids": [1, -1]})") ==
             "stop_token_ids must be token ids >= 0, got [1,-1]");
    MT_CHECK(error_of(R"({"prompt": "a", "seed": null})") ==
             "seed must be an integer in [0, 9223372036854775807], got null");
}

MT_TEST(ranges_and_huge_numbers) {
    MT_CHECK(error_of(R"({"prompt": "a", "temperature": -1})") ==
             "temperature must be in [0, inf), got -1");
    MT_CHECK(error_of(R"({"prompt": "a", "top_p": 0})") == "top_p must be in (0, 1], got 0");
    MT_CHECK(error_of(R"({"prompt": "a", "top_p": 1.5})") == "top_p must be in (0, 1], got 1.5");
    MT_CHECK(error_of(R"({"prompt": "a", "logprobs": 21})") ==
             "logprobs must be an integer in [0, 20], got 21");
    MT_CHECK(error_of(R"({"prompt": "a", "temperature": 1e400})").size() > 0); // not JSON-finite
    MT_CHECK(error_of(R"({"prompt": "a", "max_tokens": 1e300})") ==
             "max_tokens must be an integer in [1, 2147483647], got 1e+300");
    MT_CHECK(error_of(R"({"prompt": "a", "max_tokens": 2147483648})") ==
             "max_tokens must be an integer in [1, 2147483647], got 2147483648");
    MT_CHECK(error_of(R"({"prompt": "a", "seed": 18446744073709551615})") ==
             "seed must be an integer in [0, 9223372036854775807], got 18446744073709551615");
    MT_CHECK(error_of(R"({"prompt": "a", "seed": 99999999999999999999999})").size() > 0);
    MT_CHECK(error_of(R"({"prompt": "a", "top_k": -1})") ==
             "top_k must be an integer in [0, 2147483647], got -1");
    // Integral floats are integers; the largest values in range are accepted.
    auto ok = parse(R"({"prompt": "a", "max_tokens": 16.0, "seed": 9223372036854775807})");
    MT_REQUIRE(ok.size() == 1 && ok[0].ok());
    MT_CHECK(ok[0].params.max_tokens == 16);
    MT_CHECK(*ok[0].params.seed == 9223372036854775807ULL);
}

MT_TEST(unknown_keys_are_errors) {
    MT_CHECK(error_of(R"({"prompt": "a", "max_token": 3})") == "unknown key \"max_token\"");
    MT_CHECK(error_of(R"({"prompt": "a", "n": 2})") == "unknown key \"n\"");
}

MT_TEST(whole_file_errors) {
    MT_CHECK(!parse_prompts_jsonl("", {}, "p.jsonl").ok());
    auto blank = parse_prompts_jsonl("\n \n\r\n", {}, "p.jsonl");
    MT_REQUIRE(!blank.ok());
    MT_CHECK(blank.message() == "p.jsonl: no prompts");
    auto missing = read_prompts_jsonl("/nonexistent/p.jsonl", {});
    MT_REQUIRE(!missing.ok());
    MT_CHECK(contains(missing.message(), "/nonexistent/p.jsonl"));
}

// The table gives the same message for a value wherever it comes from: a JSON line, a CLI flag's
// text, or validate() on params set in code.
MT_TEST(one_message_for_every_source) {
    const std::string json_error = error_of(R"({"prompt": "a", "top_p": 2})");
    SamplingParams p;
    const SamplingField* f = find_sampling_field("top_p");
    MT_REQUIRE(f != nullptr);
    Status text = set_sampling_text(p, *f, "2");
    SamplingParams q;
    q.top_p = 2;
    Status validated = q.validate();
    MT_CHECK(json_error == "top_p must be in (0, 1], got 2");
    MT_CHECK(!text.ok() && text.message() == json_error);
    MT_CHECK(!validated.ok() && validated.message() == json_error);
    MT_CHECK(sampling_flag(*f) == "--top-p");
    // Every numeric field's range check agrees with validate() at its bounds.
    for (const SamplingField& field : sampling_fields()) {
        if (field.type != SamplingFieldType::Integer)
            continue;
        SamplingParams s;
        MT_CHECK_MSG(set_sampling_integer(s, field, field.imin).ok(), "%s",
                     std::string(field.name).c_str());
        MT_CHECK(s.validate().ok());
        MT_CHECK(!set_sampling_integer(s, field, field.imin - 1).ok());
    }
    // validate() with a vocabulary checks the stop ids against it.
    SamplingParams v;
    v.stop_token_ids = {3, 100};
    MT_CHECK(v.validate().ok());
    MT_CHECK(v.validate(100).message() ==
             "stop_token_ids must be token ids in [0, 100) (the vocabulary), got 100");
}

MINI_TEST_MAIN()
