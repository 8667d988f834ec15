// llmwb tokenize / detokenize / render-chat end to end, against the real Hugging Face
// tokenizers (reference ids from $LLMWB_TEST_ASSETS/reference/tokenizer/<name>.json) and the
// Python Jinja2 rendering of the Qwen3 chat template ($LLMWB_TEST_ASSETS/reference/chat/).
// Models: tiny random-weight GGUF files and safetensors folders written by `llmwb make-model`
// with the real tokenizer files.
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

using namespace clitest;

namespace {

struct TokenizerModel {
    QString tokenizer; // qwen3 | llama2 | llama3_1
    QString arch;
    bool addsBos; // the tokenizer adds a BOS token by default (llama tokenizers)
    // Every stride-th case of the reference corpus is checked (plus kChosenTexts). Every llmwb
    // process loads the tokenizer (~0.2-0.5 s CPU for the ~150k-token vocabularies, little
    // for llama2's 32k), which bounds the number of cases this suite can afford.
    int stride;
};

const TokenizerModel kTokenizers[] = {
    {"qwen3", "qwen3", false, 141},
    {"llama2", "llama", true, 37},
    {"llama3_1", "llama", true, 141},
};

const char* kFormats[] = {"gguf", "safetensors"};

// Reference cases checked for every tokenizer; the first one also on the safetensors folder.
const QStringList kChosenTexts = {" Hello world", "Hello world", "  leading two"};

QString sourceDir() {
    QString s = qEnvironmentVariable("LLMWB_SOURCE_DIR");
    return s.isEmpty() ? QStringLiteral(LLMWB_TEST_SOURCE_DIR) : s;
}

QJsonDocument loadJson(const QString& path, bool* ok) {
    QByteArray bytes = readFile(path, ok);
    if (!*ok)
        return {};
    QJsonParseError e;
    QJsonDocument d = QJsonDocument::fromJson(bytes, &e);
    *ok = e.error == QJsonParseError::NoError;
    return d;
}

} // namespace

class TstCliText : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString xdg_;
    QMap<QString, QString> models_; // "<tokenizer>/<format>" -> path
    QMap<QString, QJsonArray> referenceCases_;
    QJsonArray chatCases_;
    // Conversation name -> its messages file content ({"messages": [...], "tools": [...]}),
    // written with the keys in the order of conversations.json (QJsonObject would sort them,
    // and the template's tojson output depends on the order).
    QMap<QString, QByteArray> conversations_;
    QStringList conversationOrder_;
    int fileCounter_ = 0;

    QString model(const QString& tokenizer, const QString& format) const {
        return models_.value(tokenizer + "/" + format);
    }
    QString writeTemp(const QByteArray& bytes) {
        QString path = tmp_.filePath(QString("input-%1.txt").arg(fileCounter_++));
        return writeFile(path, bytes) ? path : QString();
    }
    // tokenize --json; *ok false (with a QTest failure message in *why) on any problem.
    std::vector<int> tokenize(const QString& modelPath, const QByteArray& text, bool special,
                              QString* why) {
        QString file = writeTemp(text);
        QStringList args{"tokenize", "--model", modelPath, "--file", file, "--json"};
        if (!special)
            args << "--no-special";
        CliResult r = runCli(args, xdg_);
        if (!r.ok()) {
            *why = r.describe();
            return {};
        }
        bool ok = false;
        QJsonObject j = parseJsonLine(r.out, &ok);
        if (!ok || !j.value("ids").isArray()) {
            *why = "tokenize --json: not one JSON object with ids: " + QString::fromUtf8(r.out);
            return {};
        }
        why->clear();
        return toIntVector(j.value("ids").toArray());
    }
    QString detokenize(const QString& modelPath, const std::vector<int>& ids, bool skip,
                       QString* why) {
        QStringList args{"detokenize", "--model", modelPath, "--ids", idList(ids), "--json"};
        if (skip)
            args << "--skip-special";
        CliResult r = runCli(args, xdg_);
        if (!r.ok()) {
            *why = r.describe();
            return {};
        }
        bool ok = false;
        QJsonObject j = parseJsonLine(r.out, &ok);
        if (!ok || !j.value("text").isString()) {
            *why = "detokenize --json: not one JSON object with text: " + QString::fromUtf8(r.out);
            return {};
        }
        why->clear();
        return j.value("text").toString();
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        xdg_ = tmp_.filePath("xdg");
        QVERIFY(QDir().mkpath(xdg_));
        QVERIFY2(QFileInfo::exists(cliPath()), qPrintable("llmwb binary not found: " + cliPath()));
        for (const TokenizerModel& t : kTokenizers) {
            const QString dir = tokenizerDir(t.tokenizer);
            QVERIFY2(
                QFileInfo::exists(dir + "/tokenizer.json"),
                qPrintable(dir + "/tokenizer.json is missing: run scripts/fetch-test-assets.sh"));
            bool ok = false;
            const QString ref = assetsDir() + "/reference/tokenizer/" + t.tokenizer + ".json";
            QJsonDocument d = loadJson(ref, &ok);
            QVERIFY2(ok && d.isObject(),
                     qPrintable(ref + " is missing or invalid: run scripts/fetch-test-assets.sh"));
            referenceCases_[t.tokenizer] = d.object().value("cases").toArray();
            QVERIFY(referenceCases_[t.tokenizer].size() > 100);
            for (const char* format : kFormats) {
                const QString out = tmp_.filePath(QString("%1-%2%3").arg(
                    t.tokenizer, format, QString(format) == "gguf" ? ".gguf" : ""));
                // Tiny shapes: the (tied, f16) embedding of a ~150k vocabulary dominates.
                CliResult r =
                    runCli({"make-model", "--out",          out,  "--arch",   t.arch, "--format",
                            format,       "--tokenizer",    dir,  "--type",   "f16",  "--tie",
                            "true",       "--hidden",       "32", "--heads",  "2",    "--kv-heads",
                            "1",          "--intermediate", "32", "--layers", "1"},
                           xdg_);
                CLI_VERIFY_OK(r);
                models_[t.tokenizer + "/" + format] = out;
            }
        }
        bool ok = false;
        const QString chatRef = assetsDir() + "/reference/chat/templates.json";
        QJsonDocument chat = loadJson(chatRef, &ok);
        QVERIFY2(ok && chat.isObject(),
                 qPrintable(chatRef + " is missing or invalid: run scripts/fetch-test-assets.sh"));
        chatCases_ = chat.object().value("cases").toArray();
        const QString convPath = sourceDir() + "/tests/engine/chat/conversations.json";
        QByteArray convBytes = readFile(convPath, &ok);
        QVERIFY2(ok, qPrintable(convPath + " is missing"));
        auto conv = nlohmann::ordered_json::parse(convBytes.toStdString(), nullptr, false);
        QVERIFY2(conv.is_array(), qPrintable(convPath + " is not a JSON array"));
        for (const auto& c : conv) {
            if (c.contains("extra"))
                continue; // extra template context: no CLI option for it
            nlohmann::ordered_json doc;
            doc["messages"] = c["messages"];
            if (c.contains("tools") && !c["tools"].is_null())
                doc["tools"] = c["tools"];
            const QString name = QString::fromStdString(c["name"].get<std::string>());
            conversations_[name] = QByteArray::fromStdString(doc.dump());
            conversationOrder_ << name;
        }
    }

    // tokenize (with and without special tokens) and detokenize against the HF reference.
    void tokenizeMatchesReference_data() {
        QTest::addColumn<QString>("tokenizer");
        QTest::addColumn<QString>("format");
        QTest::addColumn<QJsonObject>("ref");
        for (const TokenizerModel& t : kTokenizers) {
            const QJsonArray cases = referenceCases_.value(t.tokenizer);
            for (int i = 0; i < cases.size(); ++i) {
                const QJsonObject c = cases[i].toObject();
                const QString text = c.value("text").toString();
                const bool chosen = kChosenTexts.contains(text);
                if (i % t.stride != 0 && !chosen)
                    continue;
                for (const char* format : kFormats) {
                    // safetensors reads tokenizer.json as the engine tests do; the GGUF conversion
                    // is the part only these tests see, so it gets every case.
                    if (QString(format) == "safetensors" && text != kChosenTexts.first())
                        continue;
                    QTest::addRow("%s/%s/case%d", qPrintable(t.tokenizer), format, i)
                        << t.tokenizer << QString(format) << c;
                }
            }
        }
    }
    void tokenizeMatchesReference() {
        QFETCH(QString, tokenizer);
        QFETCH(QString, format);
        QFETCH(QJsonObject, ref);
        const QString m = model(tokenizer, format);
        const QByteArray text = ref.value("text").toString().toUtf8();
        QString why;
        std::vector<int> withSpecial = tokenize(m, text, true, &why);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QCOMPARE(withSpecial, toIntVector(ref.value("ids_special").toArray()));
        std::vector<int> plain = tokenize(m, text, false, &why);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QCOMPARE(plain, toIntVector(ref.value("ids").toArray()));
        QCOMPARE(detokenize(m, plain, false, &why), ref.value("decoded").toString());
        QVERIFY2(why.isEmpty(), qPrintable(why));
        // decode(ids with special tokens, skip special) only differs when there are special
        // tokens (BOS, or special tokens written in the text).
        if (withSpecial != plain || ref.value("decoded_skip") != ref.value("decoded")) {
            QCOMPARE(detokenize(m, withSpecial, true, &why), ref.value("decoded_skip").toString());
            QVERIFY2(why.isEmpty(), qPrintable(why));
        }
    }

    // detokenize(tokenize(x)) == x, the plain (non-JSON) output formats, and BOS handling.
    void roundTrip_data() {
        QTest::addColumn<QString>("tokenizer");
        QTest::addColumn<QString>("format");
        QTest::addColumn<bool>("addsBos");
        QTest::addColumn<QString>("text");
        const QStringList texts = {
            "The quick brown fox jumps over the lazy dog.",
            QString::fromUtf8("Grüße aus Zürich — 東京 🦊 ok"),
            "indented:\n\tcode(x) { return x*2; }",
        };
        for (const TokenizerModel& t : kTokenizers) {
            for (const char* format : kFormats) {
                for (int i = 0; i < texts.size(); ++i) {
                    // gguf: the non-ASCII text; safetensors: the plain one.
                    if (i != (QString(format) == "gguf" ? 1 : 0))
                        continue;
                    QTest::addRow("%s/%s/%d", qPrintable(t.tokenizer), format, i)
                        << t.tokenizer << QString(format) << t.addsBos << texts[i];
                }
            }
        }
    }
    void roundTrip() {
        QFETCH(QString, tokenizer);
        QFETCH(QString, format);
        QFETCH(bool, addsBos);
        QFETCH(QString, text);
        const QString m = model(tokenizer, format);
        QString why;
        std::vector<int> plain = tokenize(m, text.toUtf8(), false, &why);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QVERIFY(!plain.empty());
        std::vector<int> special = tokenize(m, text.toUtf8(), true, &why);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        if (addsBos) {
            // --no-special drops exactly the leading BOS.
            QCOMPARE(special.size(), plain.size() + 1);
            QCOMPARE(std::vector<int>(special.begin() + 1, special.end()), plain);
        } else {
            QCOMPARE(special, plain);
        }
        // The plain output is the same ids, comma-separated, one line.
        CliResult r = runCli({"tokenize", "--model", m, "--text", text, "--no-special"}, xdg_);
        CLI_VERIFY_OK(r);
        QCOMPARE(QString::fromUtf8(r.out), idList(plain) + "\n");
        QVERIFY(r.err.isEmpty());
        // detokenize prints the exact text, no newline added.
        r = runCli({"detokenize", "--model", m, "--ids", idList(plain)}, xdg_);
        CLI_VERIFY_OK(r);
        QCOMPARE(QString::fromUtf8(r.out), text);
        // With --skip-special the BOS disappears again; without it its text is shown.
        QCOMPARE(detokenize(m, special, true, &why), text);
        if (addsBos) {
            QString withBos = detokenize(m, special, false, &why);
            QVERIFY2(withBos.endsWith(text) && withBos.size() > text.size(), qPrintable(withBos));
        }
    }

    // render-chat == Python Jinja2's rendering of the real Qwen3 template (HF semantics).
    void renderChatMatchesReference_data() {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QByteArray>("messages");
        QTest::addColumn<QJsonObject>("ref");
        int n = 0;
        for (const auto& v : chatCases_) {
            const QJsonObject c = v.toObject();
            if (c.value("template").toString() != "qwen3")
                continue;
            const QJsonValue thinking = c.value("enable_thinking");
            if (thinking.isBool() && thinking.toBool())
                continue; // == the template's default
            const QString convName = c.value("conversation").toString();
            // enable_thinking only changes the generation prompt.
            if (thinking.isBool() && !c.value("add_generation_prompt").toBool())
                continue;
            // Every conversation with the generation prompt; the other variants for every
            // fourth conversation (each row is one llmwb process loading the Qwen3 tokenizer).
            const bool primary = c.value("add_generation_prompt").toBool() && thinking.isNull();
            const int convIndex = conversationOrder_.indexOf(convName);
            if (!primary && convIndex % 4 != 0)
                continue;
            if (!conversations_.contains(convName))
                continue;
            ++n;
            for (const char* format : kFormats) {
                // Every case on GGUF (template from the GGUF metadata); a few on the folder.
                if (QString(format) == "safetensors" && (!primary || convIndex % 6 != 0))
                    continue;
                QTest::addRow("%s/%s/agp=%d/thinking=%s", format, qPrintable(convName),
                              int(c.value("add_generation_prompt").toBool()),
                              thinking.isNull() ? "unset" : "false")
                    << QString(format) << conversations_.value(convName) << c;
            }
        }
        QVERIFY2(n >= 25, "too few Qwen3 chat reference cases");
    }
    void renderChatMatchesReference() {
        QFETCH(QString, format);
        QFETCH(QByteArray, messages);
        QFETCH(QJsonObject, ref);
        const QString file = writeTemp(messages);
        QStringList args{"render-chat", "--model", model("qwen3", format), "--messages", file};
        if (ref.value("add_generation_prompt").toBool())
            args << "--add-generation-prompt";
        if (ref.value("enable_thinking").isBool())
            args << "--enable-thinking"
                 << (ref.value("enable_thinking").toBool() ? "true" : "false");
        CliResult r = runCli(args, xdg_);
        if (ref.contains("error")) {
            // The template raises: a clean one-line error, nothing on stdout.
            QVERIFY2(r.started && !r.crashed && !r.timedOut && r.exitCode != 0,
                     qPrintable(r.describe()));
            QVERIFY(r.out.isEmpty());
            QCOMPARE(r.err.count('\n'), 1);
            return;
        }
        CLI_VERIFY_OK(r);
        QCOMPARE(QString::fromUtf8(r.out), ref.value("expected").toString());
    }

    // A bare array of messages is accepted too, and the messages' order is kept.
    void renderChatBareArray() {
        const QByteArray messages =
            R"([{"role":"user","content":"first"},{"role":"assistant","content":"second"},)"
            R"({"role":"user","content":"third"}])";
        const QString file = writeTemp(messages);
        CliResult r = runCli({"render-chat", "--model", model("qwen3", "gguf"), "--messages", file,
                              "--add-generation-prompt"},
                             xdg_);
        CLI_VERIFY_OK(r);
        const QString out = QString::fromUtf8(r.out);
        QVERIFY(out.indexOf("first") < out.indexOf("second"));
        QVERIFY(out.indexOf("second") < out.indexOf("third"));
        QVERIFY2(out.endsWith("<|im_start|>assistant\n"), qPrintable(out));
    }
};

QTEST_GUILESS_MAIN(TstCliText)
#include "tst_cli_text.moc"
