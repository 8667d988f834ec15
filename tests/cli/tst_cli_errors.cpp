// Bad input to every llmwb command: broken model files, missing files, malformed JSON,
// out-of-range options, unknown options, ids outside the vocabulary. Each must end with an exit
// code != 0 (not a signal), exactly one line on stderr naming the problem, nothing on stdout.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>

#include "cli/cli_runner.h"

using namespace clitest;

class TstCliErrors : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString xdg_;
    QString model_;  // a valid GGUF (demo tokenizer)
    QString folder_; // a valid safetensors folder
    int vocab_ = 0;

    // Placeholders in the data rows: {model} {folder} {tmp} {vocab}.
    QStringList expand(QStringList args) const {
        for (QString& a : args) {
            a.replace("{model}", model_);
            a.replace("{folder}", folder_);
            a.replace("{tmp}", tmp_.path());
            a.replace("{vocab}", QString::number(vocab_));
        }
        return args;
    }
    QString path(const QString& name) const { return tmp_.filePath(name); }

    bool writeBroken(const QString& name, const std::function<QByteArray(QByteArray)>& edit) {
        bool ok = false;
        QByteArray bytes = readFile(model_, &ok);
        return ok && writeFile(path(name), edit(bytes));
    }
    // A copy of the safetensors folder with one file replaced (empty content: removed).
    bool brokenFolder(const QString& name, const QString& file, const QByteArray& content,
                      bool remove = false) {
        const QString dir = path(name);
        if (!QDir().mkpath(dir))
            return false;
        for (const QString& f : QDir(folder_).entryList(QDir::Files)) {
            if (!QFile::copy(folder_ + "/" + f, dir + "/" + f))
                return false;
        }
        QFile::remove(dir + "/" + file);
        return remove || writeFile(dir + "/" + file, content);
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        xdg_ = path("xdg");
        QVERIFY(QDir().mkpath(xdg_));
        model_ = path("good.gguf");
        folder_ = path("good-st");
        CliResult r = runCli({"make-model", "--out", model_, "--arch", "llama", "--layers", "1",
                              "--hidden", "32", "--heads", "2", "--kv-heads", "1", "--intermediate",
                              "32", "--context", "64"},
                             xdg_);
        CLI_VERIFY_OK(r);
        r = runCli({"make-model", "--out", folder_, "--format", "safetensors", "--arch", "qwen3",
                    "--layers", "1", "--hidden", "32", "--heads", "2", "--kv-heads", "1",
                    "--intermediate", "32"},
                   xdg_);
        CLI_VERIFY_OK(r);
        r = runCli({"info", "--model", model_, "--json"}, xdg_);
        CLI_VERIFY_OK(r);
        bool ok = false;
        vocab_ = parseJsonLine(r.out, &ok).value("vocab_size").toInt();
        QVERIFY(ok && vocab_ > 0);

        // Broken model files.
        QVERIFY(
            writeBroken("truncated-half.gguf", [](QByteArray b) { return b.left(b.size() / 2); }));
        QVERIFY(writeBroken("truncated-header.gguf", [](QByteArray b) { return b.left(40); }));
        QVERIFY(writeBroken("truncated-3.gguf", [](QByteArray b) { return b.left(3); }));
        QVERIFY(
            writeBroken("bad-magic.gguf", [](QByteArray b) { return b.replace(0, 4, "GGUX"); }));
        QVERIFY(writeBroken("bad-version.gguf", [](QByteArray b) {
            b[4] = char(99);
            return b;
        }));
        QVERIFY(writeBroken("huge-count.gguf", [](QByteArray b) {
            // tensor count (u64 at offset 8) = 2^62
            for (int i = 0; i < 8; ++i)
                b[8 + i] = i == 7 ? char(0x40) : char(0);
            return b;
        }));
        QVERIFY(writeFile(path("empty.gguf"), QByteArray()));
        QVERIFY(QDir().mkpath(path("no-config")));
        QVERIFY(writeFile(path("no-config/tokenizer.json"), "{}"));
        QVERIFY(brokenFolder("st-no-config", "config.json", {}, true));
        QVERIFY(brokenFolder("st-bad-config", "config.json", "{\"architectures\": [\"Qwen3"));
        QVERIFY(brokenFolder("st-no-weights", "model.safetensors", {}, true));
        QVERIFY(
            brokenFolder("st-truncated-weights", "model.safetensors", "\x40\0\0\0\0\0\0\0{\"a\""));
        QVERIFY(brokenFolder("st-bad-tokenizer", "tokenizer.json", "{\"model\": 17}"));
        // Messages files.
        QVERIFY(
            writeFile(path("messages-malformed.json"), R"([{"role": "user", "content": "hi"})"));
        QVERIFY(writeFile(path("messages-no-role.json"), R"([{"content": "hi"}])"));
        // Valid JSON a million levels deep (it crashed the process before the depth check).
        QVERIFY(writeFile(path("messages-deep.json"),
                          QByteArray(1000000, '[') + QByteArray(1000000, ']')));
        QVERIFY(writeFile(path("messages-object.json"), R"({"role": "user"})"));
        QVERIFY(writeFile(path("messages-role-number.json"), R"([{"role": 3, "content": "x"}])"));
        QVERIFY(writeFile(path("text.txt"), "hello"));
    }

    void rejected_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mention"); // the stderr line contains this (case-insensitive)
        auto row = [](const char* name, QStringList args, QString mention) {
            QTest::newRow(name) << args << mention;
        };
        // Model files.
        row("gguf-truncated-half", {"info", "--model", "{tmp}/truncated-half.gguf"},
            "truncated-half.gguf");
        row("gguf-truncated-header", {"info", "--model", "{tmp}/truncated-header.gguf"},
            "truncated-header.gguf");
        row("gguf-truncated-3", {"info", "--model", "{tmp}/truncated-3.gguf"}, "truncated-3.gguf");
        row("gguf-bad-magic", {"info", "--model", "{tmp}/bad-magic.gguf"}, "bad-magic.gguf");
        row("gguf-bad-version", {"info", "--model", "{tmp}/bad-version.gguf"}, "bad-version.gguf");
        row("gguf-huge-count", {"info", "--model", "{tmp}/huge-count.gguf"}, "huge-count.gguf");
        row("gguf-empty", {"info", "--model", "{tmp}/empty.gguf"}, "empty.gguf");
        row("gguf-truncated-generate",
            {"generate", "--model", "{tmp}/truncated-half.gguf", "--prompt", "hi"},
            "truncated-half.gguf");
        row("gguf-bad-magic-tokenize",
            {"tokenize", "--model", "{tmp}/bad-magic.gguf", "--text", "hi"}, "bad-magic.gguf");
        row("missing-file", {"info", "--model", "{tmp}/does-not-exist.gguf"},
            "does-not-exist.gguf");
        row("missing-file-generate", {"generate", "--model", "{tmp}/nope.gguf", "--prompt", "x"},
            "nope.gguf");
        row("folder-without-config", {"info", "--model", "{tmp}/no-config"}, "config.json");
        row("empty-folder", {"info", "--model", "{tmp}/xdg"}, "config.json");
        row("st-no-config", {"perplexity", "--model", "{tmp}/st-no-config", "--text", "a b c"},
            "config.json");
        row("st-bad-config", {"info", "--model", "{tmp}/st-bad-config"}, "config.json");
        row("st-no-weights", {"info", "--model", "{tmp}/st-no-weights"}, "safetensors");
        row("st-truncated-weights", {"info", "--model", "{tmp}/st-truncated-weights"},
            "model.safetensors");
        row("st-bad-tokenizer", {"tokenize", "--model", "{tmp}/st-bad-tokenizer", "--text", "a"},
            "tokenizer");
        // Input files.
        row("tokenize-missing-file",
            {"tokenize", "--model", "{model}", "--file", "{tmp}/missing.txt"}, "missing.txt");
        row("perplexity-missing-file",
            {"perplexity", "--model", "{model}", "--file", "{tmp}/missing.txt"}, "missing.txt");
        row("messages-malformed",
            {"render-chat", "--model", "{model}", "--messages", "{tmp}/messages-malformed.json"},
            "messages-malformed.json");
        row("messages-no-role",
            {"render-chat", "--model", "{model}", "--messages", "{tmp}/messages-no-role.json"},
            "role");
        row("messages-deep",
            {"render-chat", "--model", "{model}", "--messages", "{tmp}/messages-deep.json"},
            "nested deeper than 128 levels");
        row("messages-object",
            {"render-chat", "--model", "{model}", "--messages", "{tmp}/messages-object.json"},
            "messages");
        row("messages-role-number",
            {"render-chat", "--model", "{model}", "--messages", "{tmp}/messages-role-number.json"},
            "role");
        row("messages-missing",
            {"render-chat", "--model", "{model}", "--messages", "{tmp}/none.json"}, "none.json");
        row("chat-malformed",
            {"generate", "--model", "{model}", "--chat", "{tmp}/messages-malformed.json"},
            "messages-malformed.json");
        // Out-of-range and malformed options.
        row("top-p-2", {"generate", "--model", "{model}", "--prompt", "hi", "--top-p", "2"},
            "--top-p");
        row("temperature-negative",
            {"generate", "--model", "{model}", "--prompt", "hi", "--temperature", "-1"},
            "--temperature");
        row("temperature-nan",
            {"generate", "--model", "{model}", "--prompt", "hi", "--temperature", "nan"},
            "--temperature");
        row("max-tokens-0",
            {"generate", "--model", "{model}", "--prompt", "hi", "--max-tokens", "0"},
            "--max-tokens");
        row("max-tokens-text",
            {"generate", "--model", "{model}", "--prompt", "hi", "--max-tokens", "ten"},
            "--max-tokens");
        row("max-tokens-overflow",
            {"generate", "--model", "{model}", "--prompt", "hi", "--max-tokens",
             "99999999999999999999"},
            "--max-tokens");
        row("top-k-negative", {"generate", "--model", "{model}", "--prompt", "hi", "--top-k", "-3"},
            "--top-k");
        row("min-p-2", {"generate", "--model", "{model}", "--prompt", "hi", "--min-p", "1.5"},
            "--min-p");
        row("logprobs-21", {"generate", "--model", "{model}", "--prompt", "hi", "--logprobs", "21"},
            "--logprobs");
        row("threads-0", {"generate", "--model", "{model}", "--prompt", "hi", "--threads", "0"},
            "--threads");
        row("enable-thinking-maybe",
            {"render-chat", "--model", "{model}", "--messages", "{tmp}/messages-no-role.json",
             "--enable-thinking", "maybe"},
            "--enable-thinking");
        row("info-context-0", {"info", "--model", "{model}", "--context", "0"}, "--context");
        row("value-missing", {"generate", "--model", "{model}", "--prompt"}, "--prompt");
        row("flag-with-value", {"tokenize", "--model", "{model}", "--text", "a", "--json=yes"},
            "--json");
        row("positional", {"info", "stray"}, "stray");
        row("no-source", {"generate", "--model", "{model}"}, "--prompt");
        row("two-sources", {"generate", "--model", "{model}", "--prompt", "a", "--ids", "1"},
            "--prompt");
        row("empty-prompt", {"generate", "--model", "{model}", "--prompt", ""}, "no tokens");
        row("prompt-too-long",
            {"generate", "--model", "{model}", "--prompt", QString("word ").repeated(200),
             "--max-tokens", "1"},
            "context");
        row("perplexity-one-token", {"perplexity", "--model", "{model}", "--ids", "5"}, "token");
        row("tokenize-no-text", {"tokenize", "--model", "{model}"}, "--text");
        row("detokenize-no-ids", {"detokenize", "--model", "{model}"}, "--ids");
        row("ids-not-numbers", {"detokenize", "--model", "{model}", "--ids", "1,x,3"}, "'x'");
        row("ids-negative", {"detokenize", "--model", "{model}", "--ids", "1,-2"}, "-2");
        row("ids-empty-item", {"detokenize", "--model", "{model}", "--ids", "1,,2"}, "--ids");
        // Unknown options, per command.
        for (const char* cmd : {"info", "tokenize", "detokenize", "render-chat", "generate",
                                "perplexity", "make-model", "bench"})
            QTest::addRow("unknown-option-%s", cmd)
                << QStringList{cmd, "--frobnicate", "1", "--model", "{model}"} << "--frobnicate";
        // Ids outside the vocabulary.
        row("detokenize-id-vocab", {"detokenize", "--model", "{model}", "--ids", "1,{vocab}"},
            "{vocab}");
        row("detokenize-id-huge", {"detokenize", "--model", "{model}", "--ids", "2147483647"},
            "2147483647");
        row("detokenize-id-overflow", {"detokenize", "--model", "{model}", "--ids", "4294967296"},
            "4294967296");
        row("generate-id-vocab",
            {"generate", "--model", "{model}", "--ids", "1,2,{vocab}", "--max-tokens", "2"},
            "{vocab}");
        row("perplexity-id-vocab", {"perplexity", "--model", "{model}", "--ids", "1,{vocab},2"},
            "{vocab}");
        row("stop-token-id-vocab",
            {"generate", "--model", "{model}", "--prompt", "hi", "--stop-token-ids", "{vocab}"},
            "{vocab}");
        // make-model.
        row("make-model-no-out", {"make-model"}, "--out");
        row("make-model-arch", {"make-model", "--out", "{tmp}/x.gguf", "--arch", "gpt5"}, "gpt5");
        row("make-model-format", {"make-model", "--out", "{tmp}/x.gguf", "--format", "onnx"},
            "onnx");
        row("make-model-type", {"make-model", "--out", "{tmp}/x.gguf", "--type", "q9_9"}, "q9_9");
        row("make-model-shape", {"make-model", "--out", "{tmp}/x.gguf", "--shape", "huge"}, "huge");
        row("make-model-heads",
            {"make-model", "--out", "{tmp}/x.gguf", "--heads", "3", "--kv-heads", "2"}, "head");
        row("make-model-hidden-0", {"make-model", "--out", "{tmp}/x.gguf", "--hidden", "0"},
            "--hidden");
        row("make-model-bad-dir", {"make-model", "--out", "{tmp}/text.txt/sub/x.gguf"}, "x.gguf");
        row("make-model-bad-tokenizer",
            {"make-model", "--out", "{tmp}/y.gguf", "--tokenizer", "{tmp}/no-config"}, "tokenizer");
        row("make-model-missing-tokenizer",
            {"make-model", "--out", "{tmp}/z.gguf", "--tokenizer", "{tmp}/nowhere"}, "nowhere");
    }
    void rejected() {
        QFETCH(QStringList, args);
        QFETCH(QString, mention);
        const QStringList a = expand(args);
        const QString m = expand({mention}).first();
        CliResult r = runCli(a, xdg_, 30000);
        QVERIFY2(r.started && !r.timedOut, qPrintable(r.describe()));
        QVERIFY2(!r.crashed, qPrintable(r.describe()));
        QVERIFY2(r.exitCode != 0, qPrintable("accepted: " + r.describe()));
        QVERIFY2(r.exitCode < 128, qPrintable(r.describe())); // not a signal passed through
        QVERIFY2(r.out.isEmpty(), qPrintable("stdout: " + QString::fromUtf8(r.out.left(300))));
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(err.endsWith('\n') && err.count('\n') == 1,
                 qPrintable("stderr is not exactly one line: " + err.left(600)));
        QVERIFY2(err.startsWith("llmwb " + a.first() + ": "), qPrintable(err));
        QVERIFY2(err.contains(m, Qt::CaseInsensitive),
                 qPrintable(QString("stderr does not mention '%1': %2").arg(m, err)));
        // No output file appears for a rejected make-model.
        if (a.first() == "make-model")
            QVERIFY(!QFileInfo::exists(path("x.gguf")));
    }

    // The valid inputs the broken ones were made from work (the rejections above are real).
    void controls() {
        for (const QStringList& args :
             {QStringList{"info", "--model", model_}, QStringList{"info", "--model", folder_},
              QStringList{"detokenize", "--model", model_, "--ids",
                          QString("1,%1").arg(vocab_ - 1)},
              QStringList{"generate", "--model", model_, "--prompt", "hi", "--top-p", "1",
                          "--temperature", "0", "--max-tokens", "1"},
              QStringList{"perplexity", "--model", model_, "--ids", "5,6"}}) {
            CliResult r = runCli(args, xdg_);
            CLI_VERIFY_OK(r);
            QVERIFY(!r.out.isEmpty());
        }
    }

    // No command and an unknown command: usage on stderr, exit code 2.
    void usage() {
        CliResult r = runCli({}, xdg_);
        QVERIFY(r.started && !r.crashed);
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.out.isEmpty());
        QVERIFY(r.err.contains("usage: llmwb"));
        r = runCli({"frobnicate"}, xdg_);
        QVERIFY(r.started && !r.crashed);
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.out.isEmpty());
        QVERIFY(r.err.startsWith("llmwb: unknown command 'frobnicate'"));
        r = runCli({"--help"}, xdg_);
        CLI_VERIFY_OK(r);
        QVERIFY(r.out.contains("usage: llmwb"));
        for (const char* cmd : {"info", "tokenize", "detokenize", "render-chat", "generate",
                                "perplexity", "make-model", "bench"}) {
            r = runCli({cmd, "--help"}, xdg_);
            CLI_VERIFY_OK(r);
            QVERIFY2(r.out.startsWith(QByteArray("llmwb ") + cmd), r.out.constData());
        }
    }
};

QTEST_GUILESS_MAIN(TstCliErrors)
#include "tst_cli_errors.moc"
