// Chat templates: the interpreter's output must be byte-identical to Python Jinja2 as Hugging Face
// runs it. Expected strings come from tests/engine/chat/reference.py (generate-reference.sh),
// which scripts/fetch-test-assets.sh runs into $LLMWB_TEST_ASSETS/reference/chat/.
#include <QtTest/QtTest>

#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/chat/chat_template.h"
#include "engine/chat/chat_template_config.h"
#include "engine/chat/evaluator.h"
#include "engine/chat/parser.h"

using llmwb::ChatRenderOptions;
using llmwb::ChatTemplate;
using json = nlohmann::ordered_json;

namespace {

QString env_or(const char* name, const QString& fallback) {
    QByteArray v = qgetenv(name);
    return v.isEmpty() ? fallback : QString::fromUtf8(v);
}

QString assets_dir() {
    return env_or("LLMWB_TEST_ASSETS", QDir::homePath() + "/.cache/llmwb/test-assets");
}
QString source_dir() {
    return env_or("LLMWB_SOURCE_DIR", QStringLiteral(LLMWB_TEST_SOURCE_DIR));
}

bool read_file(const QString& path, std::string& out) {
    std::ifstream f(path.toStdString(), std::ios::binary);
    if (!f)
        return false;
    std::stringstream ss;
    ss << f.rdbuf();
    out = ss.str();
    return true;
}

bool read_json(const QString& path, json& out, QString& why) {
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
QString first_difference(const std::string& got, const std::string& want) {
    size_t i = 0;
    while (i < got.size() && i < want.size() && got[i] == want[i])
        ++i;
    auto around = [i](const std::string& s) {
        size_t b = i > 40 ? i - 40 : 0;
        return QString::fromUtf8(s.substr(b, 80).c_str()).replace("\n", "\\n");
    };
    return QString(
               "outputs differ at byte %1 (got %2 bytes, want %3)\n   got: ...%4\n  want: ...%5")
        .arg(i)
        .arg(got.size())
        .arg(want.size())
        .arg(around(got), around(want));
}

} // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT

    struct LoadedTemplate {
        std::optional<ChatTemplate> tpl;
        QString parse_error;
        std::string bos, eos;
    };
    std::map<std::string, LoadedTemplate> templates_;
    std::map<std::string, json> conversations_;
    json template_cases_, interpreter_cases_;
    QString load_error_;

  private slots:
    void initTestCase() {
        json manifest, convs, ref_t, ref_i;
        QString why;
        const QString here = source_dir() + "/tests/engine/chat/";
        const QString ref = assets_dir() + "/reference/chat/";
        if (!read_json(here + "templates.json", manifest, why) ||
            !read_json(here + "conversations.json", convs, why) ||
            !read_json(ref + "templates.json", ref_t, why) ||
            !read_json(ref + "interpreter.json", ref_i, why)) {
            load_error_ = why;
            return;
        }
        for (const auto& c : convs)
            conversations_[c["name"].get<std::string>()] = c;
        for (const auto& e : manifest) {
            LoadedTemplate lt;
            std::string src = e["source"].get<std::string>();
            std::string kind = src.substr(0, src.find(':')), rel = src.substr(src.find(':') + 1);
            std::string text;
            if (kind == "asset") {
                json cfg;
                if (!read_json(assets_dir() + "/" + QString::fromStdString(rel), cfg, why)) {
                    load_error_ = why;
                    return;
                }
                auto c = llmwb::chat_template_from_tokenizer_config(cfg);
                if (!c) {
                    load_error_ = QString::fromStdString(c.message());
                    return;
                }
                text = c->source;
                lt.bos = c->bos_token;
                lt.eos = c->eos_token;
            } else {
                if (!read_file(here + "templates/" + QString::fromStdString(rel), text)) {
                    load_error_ = "cannot read template fixture " + QString::fromStdString(rel);
                    return;
                }
                lt.bos = e["bos_token"].get<std::string>();
                lt.eos = e["eos_token"].get<std::string>();
            }
            auto parsed = ChatTemplate::parse(text);
            if (parsed)
                lt.tpl = std::move(*parsed);
            else
                lt.parse_error = QString::fromStdString(parsed.message());
            templates_[e["name"].get<std::string>()] = std::move(lt);
        }
        template_cases_ = ref_t["cases"];
        interpreter_cases_ = ref_i["cases"];
    }

    void referenceIsComplete() {
        QVERIFY2(load_error_.isEmpty(), qPrintable(load_error_));
        QCOMPARE(templates_.size(), size_t(7));
        QVERIFY(template_cases_.size() >= 7 * 20 * 6);
        QVERIFY(interpreter_cases_.size() >= 60);
        for (const auto& [name, lt] : templates_)
            QVERIFY2(lt.tpl.has_value(),
                     qPrintable(QString::fromStdString(name) + ": " + lt.parse_error));
    }

    void templates_data() {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < template_cases_.size(); ++i) {
            const json& c = template_cases_[i];
            QString th = c["enable_thinking"].is_null()
                             ? "absent"
                             : (c["enable_thinking"].get<bool>() ? "true" : "false");
            QString tag = QString("%1/%2/agp=%3/thinking=%4")
                              .arg(QString::fromStdString(c["template"].get<std::string>()),
                                   QString::fromStdString(c["conversation"].get<std::string>()))
                              .arg(c["add_generation_prompt"].get<bool>() ? 1 : 0)
                              .arg(th);
            QTest::newRow(qPrintable(tag)) << int(i);
        }
    }

    void templates() {
        QVERIFY2(load_error_.isEmpty(), qPrintable(load_error_));
        QFETCH(int, index);
        const json& c = template_cases_[size_t(index)];
        const LoadedTemplate& lt = templates_.at(c["template"].get<std::string>());
        QVERIFY2(lt.tpl.has_value(), qPrintable(lt.parse_error));
        const json& conv = conversations_.at(c["conversation"].get<std::string>());
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

    void interpreter_data() {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < interpreter_cases_.size(); ++i)
            QTest::newRow(interpreter_cases_[i]["name"].get<std::string>().c_str()) << int(i);
    }

    void interpreter() {
        QVERIFY2(load_error_.isEmpty(), qPrintable(load_error_));
        QFETCH(int, index);
        const json& c = interpreter_cases_[size_t(index)];
        auto parsed = ChatTemplate::parse(c["template"].get<std::string>());
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.message().c_str());
        llmwb::TemplateRenderOptions o;
        o.now = fixed_now();
        auto r = parsed->render(c["context"], o);
        check_result(r, c);
    }

    // Errors of our own (not compared with Python): each names the construct and the line.
    void errors_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("needle");
        QTest::newRow("include") << "a\n{% include 'x.j2' %}"
                                 << "line 2: unsupported tag 'include'";
        QTest::newRow("extends") << "{% extends 'base' %}"
                                 << "line 1: unsupported tag 'extends'";
        QTest::newRow("import") << "\n\n{% import 'm' as m %}"
                                << "line 3: unsupported tag 'import'";
        QTest::newRow("call_block") << "{% call foo() %}x{% endcall %}"
                                    << "unsupported tag 'call'";
        QTest::newRow("unknown_tag") << "{% frobnicate %}"
                                     << "line 1: unknown tag 'frobnicate'";
        QTest::newRow("unclosed_if") << "{% if x %}yes"
                                     << "expected 'elif' or 'else' or 'endif'";
        QTest::newRow("unclosed_for") << "{% for x in y %}"
                                      << "expected 'else' or 'endfor'";
        QTest::newRow("unclosed_var") << "{{ x "
                                      << "missing '}}'";
        QTest::newRow("unclosed_comment") << "{# never closed"
                                          << "missing end of comment tag";
        QTest::newRow("bad_expression") << "\n{{ 1 + }}"
                                        << "line 2: unexpected '}}'";
        QTest::newRow("unbalanced") << "{{ (1 + 2 }}"
                                    << "line 1: unexpected '}', expected ')'";
        QTest::newRow("unterminated_string") << "{{ 'abc }}"
                                             << "unterminated string literal";
        QTest::newRow("break_outside_loop") << "{% break %}"
                                            << "'break' outside of a for loop";
        QTest::newRow("recursive_loop") << "{% for x in y recursive %}{% endfor %}"
                                        << "unsupported construct 'recursive'";
        QTest::newRow("star_args") << "{{ f(*args) }}"
                                   << "*args / **kwargs";
        QTest::newRow("int_overflow_literal") << "{{ 99999999999999999999 }}"
                                              << "integer literal out of range";
        QTest::newRow("too_deep") << QString("{{ ") + QString("(").repeated(300) + "1" +
                                         QString(")").repeated(300) + " }}"
                                  << "nested too deeply";
    }

    void errors() {
        QFETCH(QString, source);
        QFETCH(QString, needle);
        auto t = ChatTemplate::parse(source.toStdString());
        QVERIFY2(!t.ok(), "parse should fail");
        QVERIFY2(QString::fromStdString(t.message()).contains(needle), t.message().c_str());
        QVERIFY2(t.message().find('\n') == std::string::npos, "error must be one line");
    }

    void runtimeErrors_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("needle");
        QTest::newRow("unknown_filter") << "ok\n{{ 'x' | frob }}"
                                        << "line 2: unknown filter 'frob'";
        QTest::newRow("unknown_test") << "{% if x is frob %}{% endif %}"
                                      << "line 1: unknown test 'frob'";
        QTest::newRow("unknown_method") << "{{ 'x'.frob() }}"
                                        << "'str object' has no attribute 'frob'";
        QTest::newRow("huge_range") << "{{ range(1000000000) | length }}"
                                    << "Range too big";
        QTest::newRow("macro_recursion") << "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}"
                                         << "nested too deeply";
        QTest::newRow("string_repeat_limit") << "{{ 'x' * 9000000000000 }}"
                                             << "too large";
        QTest::newRow("int_overflow") << "{{ 9223372036854775807 + 1 }}"
                                      << "integer overflow";
        QTest::newRow("deep_value") << "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}"
                                       "{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}"
                                    << "value nested too deeply";
        QTest::newRow("namespace_cycle")
            << "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}{{ 1 / 0 }}"
            << "division by zero";
        QTest::newRow("raise_exception") << "{{ raise_exception('Roles must alternate') }}"
                                         << "line 1: Roles must alternate";
    }

    void runtimeErrors() {
        QFETCH(QString, source);
        QFETCH(QString, needle);
        auto t = ChatTemplate::parse(source.toStdString());
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        auto r = t->render(json::object());
        QVERIFY2(!r.ok(), "render should fail");
        QVERIFY2(QString::fromStdString(r.message()).contains(needle), r.message().c_str());
    }

    void renderLimits() {
        // Limits for untrusted templates, exercised with small values through the evaluator.
        llmwb::jinja::RenderLimits limits;
        limits.max_loop_iterations = 1000;
        limits.max_output_bytes = 4096;
        auto loops = llmwb::jinja::parse_template(
            "{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}");
        QVERIFY(loops.ok());
        auto r = llmwb::jinja::render_template(*loops, llmwb::jinja::Value::dict({}), {}, limits);
        QVERIFY(!r.ok());
        QVERIFY2(QString::fromStdString(r.message()).contains("too many loop iterations"),
                 r.message().c_str());
        auto big =
            llmwb::jinja::parse_template("{% for i in range(100) %}{{ 'x' * 100 }}{% endfor %}");
        QVERIFY(big.ok());
        r = llmwb::jinja::render_template(*big, llmwb::jinja::Value::dict({}), {}, limits);
        QVERIFY(!r.ok());
        QVERIFY2(QString::fromStdString(r.message()).contains("exceeds the size limit"),
                 r.message().c_str());
        limits.max_output_bytes = 100000;
        QVERIFY(
            llmwb::jinja::render_template(*big, llmwb::jinja::Value::dict({}), {}, limits).ok());
    }

    void renderChatContext() {
        // As HF's apply_chat_template: tools is always defined (None when absent);
        // enable_thinking is a variable only when given.
        auto t = ChatTemplate::parse(
            "{{ tools is none }}|{{ enable_thinking is defined }}|{{ bos_token }}|"
            "{{ add_generation_prompt }}|{{ messages | length }}|{{ date_string }}");
        QVERIFY(t.ok());
        ChatRenderOptions o;
        auto r = llmwb::render_chat(*t, json::array({json{{"role", "user"}, {"content", "x"}}}), o);
        QVERIFY(r.ok());
        QCOMPARE(QString::fromStdString(*r), QString("True|False||False|1|"));
        o.tools = json::array();
        o.enable_thinking = false;
        o.bos_token = "<s>";
        o.add_generation_prompt = true;
        o.extra = json{{"date_string", "today"}};
        r = llmwb::render_chat(*t, json::array(), o);
        QVERIFY(r.ok());
        QCOMPARE(QString::fromStdString(*r), QString("False|True|<s>|True|0|today"));
        QVERIFY(!llmwb::render_chat(*t, json::object(), o).ok());

        // External JSON nested too deeply is refused before conversion.
        json deep = json::array();
        for (int i = 0; i < 1000; ++i)
            deep = json::array({deep});
        auto d = t->render(json{{"messages", deep}});
        QVERIFY(!d.ok());
        QVERIFY(QString::fromStdString(d.message()).contains("nested too deeply"));
        // A namespace holding itself prints (Python shows the cycle differently; no crash).
        auto cyc = ChatTemplate::parse("{% set ns = namespace(a=1) %}{% set ns.me = ns %}{{ ns }}");
        QVERIFY(cyc.ok());
        auto cr = cyc->render(json::object());
        QVERIFY(cr.ok());
        QCOMPARE(QString::fromStdString(*cr),
                 QString("<Namespace {'a': 1, 'me': <Namespace {...}>}>"));
    }

    void configFromTokenizerConfig() {
        QVERIFY2(load_error_.isEmpty(), qPrintable(load_error_));
        json qwen, llama;
        QString why;
        QVERIFY2(read_json(assets_dir() + "/tokenizers/qwen3/tokenizer_config.json", qwen, why),
                 qPrintable(why));
        QVERIFY2(read_json(assets_dir() + "/tokenizers/llama3_1/tokenizer_config.json", llama, why),
                 qPrintable(why));
        auto q = llmwb::chat_template_from_tokenizer_config(qwen);
        QVERIFY2(q.ok(), q.ok() ? "" : q.message().c_str());
        QCOMPARE(q->source, qwen["chat_template"].get<std::string>());
        QCOMPARE(q->bos_token, std::string()); // null in Qwen3's config
        QCOMPARE(q->eos_token, std::string("<|im_end|>"));
        auto l = llmwb::chat_template_from_tokenizer_config(llama);
        QVERIFY(l.ok());
        QCOMPARE(l->bos_token, std::string("<|begin_of_text|>"));
        QCOMPARE(l->eos_token, std::string("<|eot_id|>"));

        json multi = {{"bos_token", {{"content", "<s>"}, {"lstrip", false}}},
                      {"chat_template", json::array({json{{"name", "default"}, {"template", "D"}},
                                                     json{{"name", "tool_use"}, {"template", "T"}},
                                                     json{{"name", "rag"}, {"template", "R"}}})}};
        QCOMPARE(llmwb::chat_template_from_tokenizer_config(multi)->source, std::string("D"));
        QCOMPARE(llmwb::chat_template_from_tokenizer_config(multi)->bos_token, std::string("<s>"));
        QCOMPARE(llmwb::chat_template_from_tokenizer_config(multi, true)->source, std::string("T"));
        QCOMPARE(llmwb::chat_template_from_tokenizer_config(multi, false, "rag")->source,
                 std::string("R"));
        QVERIFY(!llmwb::chat_template_from_tokenizer_config(multi, false, "nope").ok());
        multi["chat_template"].erase(0);
        auto no_default = llmwb::chat_template_from_tokenizer_config(multi);
        QVERIFY(!no_default.ok());
        QVERIFY(QString::fromStdString(no_default.message()).contains("default"));
        QVERIFY(!llmwb::chat_template_from_tokenizer_config(json{{"bos_token", "x"}}).ok());
        QVERIFY(!llmwb::chat_template_from_tokenizer_config(json{{"chat_template", 5}}).ok());
        QVERIFY(!llmwb::chat_template_from_tokenizer_config(
                     json{{"chat_template", "x"}, {"eos_token", 3}})
                     .ok());
        QVERIFY(!llmwb::chat_template_from_tokenizer_config(json::array()).ok());
    }

  private:
    void check_result(const llmwb::Result<std::string>& r, const json& c) {
        if (c.contains("expected")) {
            QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
            const std::string want = c["expected"].get<std::string>();
            QVERIFY2(*r == want, qPrintable(first_difference(*r, want)));
            return;
        }
        QVERIFY2(!r.ok(),
                 qPrintable(
                     "expected an error: " + QString::fromStdString(c["error"].get<std::string>()) +
                     "\n   got output: " + QString::fromStdString(r.ok() ? *r : "")));
        const std::string kind = c["error_kind"].get<std::string>();
        if (kind == "raise" || kind == "UndefinedError" || kind == "SecurityError" ||
            kind == "ZeroDivisionError") {
            const std::string want = ": " + c["error"].get<std::string>();
            const std::string& got = r.message();
            QVERIFY2(got.size() >= want.size() &&
                         got.compare(got.size() - want.size(), want.size(), want) == 0,
                     qPrintable(QString::fromStdString("error message mismatch\n   got: " + got +
                                                       "\n  want: ..." + want)));
        }
    }
};

QTEST_APPLESS_MAIN(TestChatTemplate)
#include "tst_chat_template.moc"
