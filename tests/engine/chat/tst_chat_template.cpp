// Chat templates: the interpreter's output must be byte-identical to Python Jinja2 as Hugging Face
// runs it. Expected strings come from tests/engine/chat/reference.py (generate-reference.sh),
// which scripts/fetch-test-assets.sh runs into $LLMWB_TEST_ASSETS/reference/chat/.
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/chat/chat_template.h"
#include "engine/chat/chat_template_config.h"
#include "engine/chat/evaluator.h"
#include "engine/chat/parser.h"
#include "support/mini_test.h"

using llmwb::ChatRenderOptions;
using llmwb::ChatTemplate;
using llmwb::mini_test::assets_dir;
using json = nlohmann::ordered_json;

namespace {

std::string source_dir() {
    return llmwb::mini_test::env_or("LLMWB_SOURCE_DIR", LLMWB_TEST_SOURCE_DIR);
}

bool read_file(const std::string& path, std::string& out) {
    auto text = llmwb::mini_test::read_file(path);
    if (!text)
        return false;
    out = std::move(*text);
    return true;
}

bool read_json(const std::string& path, json& out, std::string& why) {
    std::string text;
    if (!read_file(path, text)) {
        why = "cannot read " + path + " (run scripts/fetch-test-assets.sh)";
        return false;
    }
    out = json::parse(text, nullptr, false);
    if (out.is_discarded()) {
        why = "invalid JSON in " + path;
        return false;
    }
    return true;
}

std::tm fixed_now() {
    std::tm tm{};
    tm.tm_year = 2024 - 1900;
    tm.tm_mon = 6;
    tm.tm_mday = 26;
    tm.tm_hour = 10;
    tm.tm_min = 30;
    tm.tm_isdst = -1;
    std::tm copy = tm;
    std::mktime(&copy); // fills weekday and day of year
    tm.tm_wday = copy.tm_wday;
    tm.tm_yday = copy.tm_yday;
    return tm;
}

// A readable message for the first difference between two strings.
std::string first_difference(const std::string& got, const std::string& want) {
    size_t i = 0;
    while (i < got.size() && i < want.size() && got[i] == want[i])
        ++i;
    auto around = [i](const std::string& s) {
        const size_t b = i > 40 ? i - 40 : 0;
        std::string out;
        for (char c : s.substr(b, 80))
            out += c == '\n' ? std::string("\\n") : std::string(1, c);
        return out;
    };
    return llmwb::mini_test::format(
        "outputs differ at byte %zu (got %zu bytes, want %zu)\n   got: ...%s\n  want: ...%s", i,
        got.size(), want.size(), around(got).c_str(), around(want).c_str());
}

// What initTestCase loaded: the template manifest and conversations of this folder, the
// references generated from Python, and every template parsed. load_error is empty when all of
// it could be read.
struct LoadedTemplate {
    std::optional<ChatTemplate> tpl;
    std::string parse_error;
    std::string bos, eos;
};

struct Fixture {
    std::map<std::string, LoadedTemplate> templates;
    std::map<std::string, json> conversations;
    json template_cases, interpreter_cases;
    std::string load_error;
};

void load(Fixture& f) {
    json manifest, convs, ref_t, ref_i;
    std::string why;
    const std::string here = source_dir() + "/tests/engine/chat/";
    const std::string ref = assets_dir() + "/reference/chat/";
    if (!read_json(here + "templates.json", manifest, why) ||
        !read_json(here + "conversations.json", convs, why) ||
        !read_json(ref + "templates.json", ref_t, why) ||
        !read_json(ref + "interpreter.json", ref_i, why)) {
        f.load_error = why;
        return;
    }
    for (const auto& c : convs)
        f.conversations[c["name"].get<std::string>()] = c;
    for (const auto& e : manifest) {
        LoadedTemplate lt;
        std::string src = e["source"].get<std::string>();
        std::string kind = src.substr(0, src.find(':')), rel = src.substr(src.find(':') + 1);
        std::string text;
        if (kind == "asset") {
            json cfg;
            if (!read_json(assets_dir() + "/" + rel, cfg, why)) {
                f.load_error = why;
                return;
            }
            auto c = llmwb::chat_template_from_tokenizer_config(cfg);
            if (!c) {
                f.load_error = c.message();
                return;
            }
            text = c->source;
            lt.bos = c->bos_token;
            lt.eos = c->eos_token;
        } else {
            if (!read_file(here + "templates/" + rel, text)) {
                f.load_error = "cannot read template fixture " + rel;
                return;
            }
            lt.bos = e["bos_token"].get<std::string>();
            lt.eos = e["eos_token"].get<std::string>();
        }
        auto parsed = ChatTemplate::parse(text);
        if (parsed)
            lt.tpl = std::move(*parsed);
        else
            lt.parse_error = parsed.message();
        f.templates[e["name"].get<std::string>()] = std::move(lt);
    }
    f.template_cases = ref_t["cases"];
    f.interpreter_cases = ref_i["cases"];
}

const Fixture& fixture() {
    static Fixture f;
    static const bool loaded = (load(f), true);
    (void)loaded;
    return f;
}

void check_result(const llmwb::Result<std::string>& r, const json& c) {
    if (c.contains("expected")) {
        MT_REQUIRE_MSG(r.ok(), r.ok() ? "" : r.message());
        const std::string want = c["expected"].get<std::string>();
        MT_REQUIRE_MSG(*r == want, first_difference(*r, want));
        return;
    }
    MT_REQUIRE_MSG(!r.ok(), "expected an error: " + c["error"].get<std::string>() +
                                "\n   got output: " + (r.ok() ? *r : ""));
    const std::string kind = c["error_kind"].get<std::string>();
    if (kind == "raise" || kind == "UndefinedError" || kind == "SecurityError" ||
        kind == "ZeroDivisionError") {
        const std::string want = ": " + c["error"].get<std::string>();
        const std::string& got = r.message();
        MT_REQUIRE_MSG(got.size() >= want.size() &&
                           got.compare(got.size() - want.size(), want.size(), want) == 0,
                       "error message mismatch\n   got: " + got + "\n  want: ..." + want);
    }
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

struct CaseRow {
    std::string name;
    size_t index;
};

std::vector<CaseRow> template_rows() {
    std::vector<CaseRow> rows;
    const json& cases = fixture().template_cases;
    for (size_t i = 0; i < cases.size(); ++i) {
        const json& c = cases[i];
        const std::string th = c["enable_thinking"].is_null()
                                   ? "absent"
                                   : (c["enable_thinking"].get<bool>() ? "true" : "false");
        rows.push_back(
            {c["template"].get<std::string>() + "/" + c["conversation"].get<std::string>() +
                 "/agp=" + (c["add_generation_prompt"].get<bool>() ? "1" : "0") + "/thinking=" + th,
             i});
    }
    return rows;
}

std::vector<CaseRow> interpreter_rows() {
    std::vector<CaseRow> rows;
    const json& cases = fixture().interpreter_cases;
    for (size_t i = 0; i < cases.size(); ++i)
        rows.push_back({cases[i]["name"].get<std::string>(), i});
    return rows;
}

struct SourceRow {
    std::string name;
    std::string source;
    std::string needle;
};

// Errors of our own (not compared with Python): each names the construct and the line.
std::vector<SourceRow> error_rows() {
    return {
        {"include", "a\n{% include 'x.j2' %}", "line 2: unsupported tag 'include'"},
        {"extends", "{% extends 'base' %}", "line 1: unsupported tag 'extends'"},
        {"import", "\n\n{% import 'm' as m %}", "line 3: unsupported tag 'import'"},
        {"call_block", "{% call foo() %}x{% endcall %}", "unsupported tag 'call'"},
        {"unknown_tag", "{% frobnicate %}", "line 1: unknown tag 'frobnicate'"},
        {"unclosed_if", "{% if x %}yes", "expected 'elif' or 'else' or 'endif'"},
        {"unclosed_for", "{% for x in y %}", "expected 'else' or 'endfor'"},
        {"unclosed_var", "{{ x ", "missing '}}'"},
        {"unclosed_comment", "{# never closed", "missing end of comment tag"},
        {"bad_expression", "\n{{ 1 + }}", "line 2: unexpected '}}'"},
        {"unbalanced", "{{ (1 + 2 }}", "line 1: unexpected '}', expected ')'"},
        {"unterminated_string", "{{ 'abc }}", "unterminated string literal"},
        {"break_outside_loop", "{% break %}", "'break' outside of a for loop"},
        {"recursive_loop", "{% for x in y recursive %}{% endfor %}",
         "unsupported construct 'recursive'"},
        {"star_args", "{{ f(*args) }}", "*args / **kwargs"},
        {"int_overflow_literal", "{{ 99999999999999999999 }}", "integer literal out of range"},
        {"too_deep", "{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}",
         "nested too deeply"},
    };
}

std::vector<SourceRow> runtime_error_rows() {
    return {
        {"unknown_filter", "ok\n{{ 'x' | frob }}", "line 2: unknown filter 'frob'"},
        {"unknown_test", "{% if x is frob %}{% endif %}", "line 1: unknown test 'frob'"},
        {"unknown_method", "{{ 'x'.frob() }}", "'str object' has no attribute 'frob'"},
        {"huge_range", "{{ range(1000000000) | length }}", "Range too big"},
        {"macro_recursion", "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
         "nested too deeply"},
        {"string_repeat_limit", "{{ 'x' * 9000000000000 }}",
         "exceeded the limit of 64 MiB of strings and lists allocated"},
        {"int_overflow", "{{ 9223372036854775807 + 1 }}", "integer overflow"},
        {"deep_value",
         "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}"
         "{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}",
         "value nested too deeply"},
        {"namespace_cycle", "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}{{ 1 / 0 }}",
         "division by zero"},
        {"raise_exception", "{{ raise_exception('Roles must alternate') }}",
         "line 1: Roles must alternate"},
    };
}

} // namespace

MT_TEST(referenceIsComplete) {
    const Fixture& f = fixture();
    MT_REQUIRE_MSG(f.load_error.empty(), f.load_error);
    MT_COMPARE(f.templates.size(), size_t(13));
    MT_CHECK(f.template_cases.size() >= 13 * 20 * 6);
    MT_CHECK(f.interpreter_cases.size() >= 60);
    for (const auto& [name, lt] : f.templates)
        MT_CHECK_MSG(lt.tpl.has_value(), name + ": " + lt.parse_error);
}

MT_TEST_TABLE(templates, CaseRow, template_rows()) {
    const Fixture& f = fixture();
    MT_REQUIRE_MSG(f.load_error.empty(), f.load_error);
    const json& c = f.template_cases[row.index];
    const LoadedTemplate& lt = f.templates.at(c["template"].get<std::string>());
    MT_REQUIRE_MSG(lt.tpl.has_value(), lt.parse_error);
    const json& conv = f.conversations.at(c["conversation"].get<std::string>());
    ChatRenderOptions o;
    o.add_generation_prompt = c["add_generation_prompt"].get<bool>();
    if (!c["enable_thinking"].is_null())
        o.enable_thinking = c["enable_thinking"].get<bool>();
    o.bos_token = lt.bos;
    o.eos_token = lt.eos;
    if (conv.contains("tools"))
        o.tools = conv["tools"];
    if (conv.contains("extra"))
        o.extra = conv["extra"];
    o.now = fixed_now();
    auto r = llmwb::render_chat(*lt.tpl, conv["messages"], o);
    check_result(r, c);
}

MT_TEST_TABLE(interpreter, CaseRow, interpreter_rows()) {
    const Fixture& f = fixture();
    MT_REQUIRE_MSG(f.load_error.empty(), f.load_error);
    const json& c = f.interpreter_cases[row.index];
    auto parsed = ChatTemplate::parse(c["template"].get<std::string>());
    MT_REQUIRE_MSG(parsed.ok(), parsed.ok() ? "" : parsed.message());
    llmwb::TemplateRenderOptions o;
    o.now = fixed_now();
    auto r = parsed->render(c["context"], o);
    check_result(r, c);
}

// Errors of our own (not compared with Python): each names the construct and the line.
MT_TEST_TABLE(errors, SourceRow, error_rows()) {
    auto t = ChatTemplate::parse(row.source);
    MT_REQUIRE_MSG(!t.ok(), "parse should fail");
    MT_REQUIRE_MSG(contains(t.message(), row.needle), t.message());
    MT_REQUIRE_MSG(t.message().find('\n') == std::string::npos, "error must be one line");
}

MT_TEST_TABLE(runtimeErrors, SourceRow, runtime_error_rows()) {
    auto t = ChatTemplate::parse(row.source);
    MT_REQUIRE_MSG(t.ok(), t.ok() ? "" : t.message());
    auto r = t->render(json::object());
    MT_REQUIRE_MSG(!r.ok(), "render should fail");
    MT_REQUIRE_MSG(contains(r.message(), row.needle), r.message());
}

MT_TEST(renderLimits) {
    // Limits for untrusted templates, exercised with small values through the evaluator.
    llmwb::jinja::RenderLimits limits;
    limits.max_loop_iterations = 1000;
    limits.max_output_bytes = 4096;
    auto loops = llmwb::jinja::parse_template(
        "{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}");
    MT_REQUIRE(loops.ok());
    auto r = llmwb::jinja::render_template(*loops, llmwb::jinja::Value::dict({}), {}, limits);
    MT_REQUIRE(!r.ok());
    MT_REQUIRE_MSG(contains(r.message(), "exceeded the limit of 1000 loop iterations"),
                   r.message());
    auto big = llmwb::jinja::parse_template("{% for i in range(100) %}{{ 'x' * 100 }}{% endfor %}");
    MT_REQUIRE(big.ok());
    r = llmwb::jinja::render_template(*big, llmwb::jinja::Value::dict({}), {}, limits);
    MT_REQUIRE(!r.ok());
    MT_REQUIRE_MSG(contains(r.message(), "exceeded the limit of 4 KiB of output"), r.message());
    limits.max_output_bytes = 100000;
    MT_CHECK(llmwb::jinja::render_template(*big, llmwb::jinja::Value::dict({}), {}, limits).ok());
}

MT_TEST(renderChatContext) {
    // As HF's apply_chat_template: tools is always defined (None when absent);
    // enable_thinking is a variable only when given.
    auto t = ChatTemplate::parse(
        "{{ tools is none }}|{{ enable_thinking is defined }}|{{ bos_token }}|"
        "{{ add_generation_prompt }}|{{ messages | length }}|{{ date_string }}");
    MT_REQUIRE(t.ok());
    ChatRenderOptions o;
    auto r = llmwb::render_chat(*t, json::array({json{{"role", "user"}, {"content", "x"}}}), o);
    MT_REQUIRE(r.ok());
    MT_COMPARE(*r, std::string("True|False||False|1|"));
    o.tools = json::array();
    o.enable_thinking = false;
    o.bos_token = "<s>";
    o.add_generation_prompt = true;
    o.extra = json{{"date_string", "today"}};
    r = llmwb::render_chat(*t, json::array(), o);
    MT_REQUIRE(r.ok());
    MT_COMPARE(*r, std::string("False|True|<s>|True|0|today"));
    MT_CHECK(!llmwb::render_chat(*t, json::object(), o).ok());

    // External JSON nested too deeply is refused before conversion.
    json deep = json::array();
    for (int i = 0; i < 1000; ++i)
        deep = json::array({deep});
    auto d = t->render(json{{"messages", deep}});
    MT_REQUIRE(!d.ok());
    MT_CHECK(contains(d.message(), "nested too deeply"));
    // A namespace holding itself prints (Python shows the cycle differently; no crash).
    auto cyc = ChatTemplate::parse("{% set ns = namespace(a=1) %}{% set ns.me = ns %}{{ ns }}");
    MT_REQUIRE(cyc.ok());
    auto cr = cyc->render(json::object());
    MT_REQUIRE(cr.ok());
    MT_COMPARE(*cr, std::string("<Namespace {'a': 1, 'me': <Namespace {...}>}>"));
}

MT_TEST(configFromTokenizerConfig) {
    MT_REQUIRE_MSG(fixture().load_error.empty(), fixture().load_error);
    json qwen, llama;
    std::string why;
    MT_REQUIRE_MSG(read_json(assets_dir() + "/tokenizers/qwen3/tokenizer_config.json", qwen, why),
                   why);
    MT_REQUIRE_MSG(
        read_json(assets_dir() + "/tokenizers/llama3_1/tokenizer_config.json", llama, why), why);
    auto q = llmwb::chat_template_from_tokenizer_config(qwen);
    MT_REQUIRE_MSG(q.ok(), q.ok() ? "" : q.message());
    MT_COMPARE(q->source, qwen["chat_template"].get<std::string>());
    MT_COMPARE(q->bos_token, std::string()); // null in Qwen3's config
    MT_COMPARE(q->eos_token, std::string("<|im_end|>"));
    auto l = llmwb::chat_template_from_tokenizer_config(llama);
    MT_REQUIRE(l.ok());
    MT_COMPARE(l->bos_token, std::string("<|begin_of_text|>"));
    MT_COMPARE(l->eos_token, std::string("<|eot_id|>"));

    json multi = {{"bos_token", {{"content", "<s>"}, {"lstrip", false}}},
                  {"chat_template", json::array({json{{"name", "default"}, {"template", "D"}},
                                                 json{{"name", "tool_use"}, {"template", "T"}},
                                                 json{{"name", "rag"}, {"template", "R"}}})}};
    MT_COMPARE(llmwb::chat_template_from_tokenizer_config(multi)->source, std::string("D"));
    MT_COMPARE(llmwb::chat_template_from_tokenizer_config(multi)->bos_token, std::string("<s>"));
    MT_COMPARE(llmwb::chat_template_from_tokenizer_config(multi, true)->source, std::string("T"));
    MT_COMPARE(llmwb::chat_template_from_tokenizer_config(multi, false, "rag")->source,
               std::string("R"));
    MT_CHECK(!llmwb::chat_template_from_tokenizer_config(multi, false, "nope").ok());
    multi["chat_template"].erase(0);
    auto no_default = llmwb::chat_template_from_tokenizer_config(multi);
    MT_REQUIRE(!no_default.ok());
    MT_CHECK(contains(no_default.message(), "default"));
    MT_CHECK(!llmwb::chat_template_from_tokenizer_config(json{{"bos_token", "x"}}).ok());
    MT_CHECK(!llmwb::chat_template_from_tokenizer_config(json{{"chat_template", 5}}).ok());
    MT_CHECK(
        !llmwb::chat_template_from_tokenizer_config(json{{"chat_template", "x"}, {"eos_token", 3}})
             .ok());
    MT_CHECK(!llmwb::chat_template_from_tokenizer_config(json::array()).ok());
}

MINI_TEST_MAIN()
