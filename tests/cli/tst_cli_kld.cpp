// llmwb kld end to end: the same model twice (KLD 0, top-1 100 %), float vs Q8_0 vs Q4_0 of the
// same logical weights written by make-model (Q8_0 far closer than Q4_0), --text against --ids
// of its tokenization, windows, the text output, and bad input (one line on stderr, nothing on
// stdout, exit code 1).
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include "cli/cli_runner.h"

using namespace clitest;

namespace {

const char* kText =
    "The quick brown fox jumps over the lazy dog. Once upon a time there was a model that "
    "was quantized, and its users wanted to know how much it had changed. They ran both "
    "models over the same text and compared the next-token distributions at every position.";

} // namespace

class TstCliKld : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString xdg_;

    QString path(const QString& name) const { return tmp_.filePath(name); }

    // make-model with hidden 128 (rows fit 32-element blocks), 2 layers, seed 7.
    bool make(const QString& name, const QString& type, QStringList extra = {}) {
        QStringList args{"make-model", "--out",    path(name),  "--type",  type,
                         "--seed",     "7",        "--hidden",  "128",     "--intermediate",
                         "256",        "--layers", "2",         "--heads", "4",
                         "--kv-heads", "2",        "--context", "512"};
        args += extra;
        CliResult r = runCli(args, xdg_);
        if (!r.ok())
            qWarning("%s", qPrintable(r.describe()));
        return r.ok();
    }
    QJsonObject kld(const QStringList& args, bool* ok) {
        CliResult r = runCli(QStringList{"kld"} + args + QStringList{"--json"}, xdg_);
        *ok = r.ok();
        if (!r.ok()) {
            qWarning("%s", qPrintable(r.describe()));
            return {};
        }
        return parseJsonLine(r.out, ok);
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        xdg_ = path("xdg");
        QVERIFY(QDir().mkpath(xdg_));
        QVERIFY(make("f32.gguf", "f32"));
        QVERIFY(make("f32-again.gguf", "f32"));
        QVERIFY(make("q8.gguf", "q8_0"));
        QVERIFY(make("q4.gguf", "q4_0"));
        QVERIFY(make("bigvocab.gguf", "f32", {"--vocab", "5000"}));
        QVERIFY(writeFile(path("text.txt"), QByteArray(kText)));
    }

    // Two files of the same weights: KL exactly 0, every top-1 agrees, the same perplexity.
    void identicalModels() {
        bool ok = false;
        QJsonObject j = kld({"--base", path("f32.gguf"), "--model", path("f32-again.gguf"),
                             "--file", path("text.txt")},
                            &ok);
        QVERIFY(ok);
        QVERIFY(j["tokens"].toInt() > 20);
        QCOMPARE(j["windows"].toInt(), 1);
        QCOMPARE(j["positions"].toInt(), j["tokens"].toInt() - 1);
        QCOMPARE(j["mean_kld"].toDouble(), 0.0);
        QCOMPARE(j["p99_kld"].toDouble(), 0.0);
        QCOMPARE(j["max_kld"].toDouble(), 0.0);
        QCOMPARE(j["top1_agreement_pct"].toDouble(), 100.0);
        QCOMPARE(j["ppl_ratio"].toDouble(), 1.0);
        QVERIFY(j["ppl_base"].toDouble() > 1.0);
        for (const char* key : {"median_kld", "margin", "confident_positions",
                                "top1_agreement_confident_pct", "ppl_model", "seconds", "ctx"})
            QVERIFY2(j.contains(key), key);
    }

    // Q8_0 is far closer to the float model than Q4_0, and agrees on the top-1 token more.
    void quantizedAgainstFloat() {
        bool ok = false;
        const QStringList src{"--file", path("text.txt")};
        QJsonObject q8 =
            kld(QStringList{"--base", path("f32.gguf"), "--model", path("q8.gguf")} + src, &ok);
        QVERIFY(ok);
        QJsonObject q4 =
            kld(QStringList{"--base", path("f32.gguf"), "--model", path("q4.gguf")} + src, &ok);
        QVERIFY(ok);
        const double k8 = q8["mean_kld"].toDouble(), k4 = q4["mean_kld"].toDouble();
        qInfo("F32 vs Q8_0: mean KLD %g, p99 %g, top-1 %.1f %%, PPL ratio %.5f", k8,
              q8["p99_kld"].toDouble(), q8["top1_agreement_pct"].toDouble(),
              q8["ppl_ratio"].toDouble());
        qInfo("F32 vs Q4_0: mean KLD %g, p99 %g, top-1 %.1f %%, PPL ratio %.5f", k4,
              q4["p99_kld"].toDouble(), q4["top1_agreement_pct"].toDouble(),
              q4["ppl_ratio"].toDouble());
        QVERIFY(k8 > 0);
        QVERIFY2(k8 * 10 < k4, qPrintable(QString("Q8_0 %1, Q4_0 %2").arg(k8).arg(k4)));
        QVERIFY(q8["p99_kld"].toDouble() < q4["p99_kld"].toDouble());
        QVERIFY(q8["median_kld"].toDouble() <= q8["p99_kld"].toDouble());
        QVERIFY(q8["p99_kld"].toDouble() <= q8["max_kld"].toDouble());
        QVERIFY(q8["top1_agreement_pct"].toDouble() >= 90.0);
        QVERIFY(q8["top1_agreement_pct"].toDouble() >= q4["top1_agreement_pct"].toDouble());
    }

    // --text is --ids of its tokenization with the base's tokenizer; --ctx cuts windows and
    // --max-tokens keeps the first tokens.
    void textIdsWindows() {
        CliResult t = runCli({"tokenize", "--model", path("f32.gguf"), "--text", kText}, xdg_);
        CLI_VERIFY_OK(t);
        const QString ids = QString::fromUtf8(t.out).trimmed();
        bool ok = false;
        const QStringList pair{"--base", path("f32.gguf"), "--model", path("q4.gguf")};
        QJsonObject a = kld(pair + QStringList{"--text", kText}, &ok);
        QVERIFY(ok);
        QJsonObject b = kld(pair + QStringList{"--ids", ids}, &ok);
        QVERIFY(ok);
        QCOMPARE(a["tokens"].toInt(), ids.count(',') + 1);
        QCOMPARE(a["mean_kld"].toDouble(), b["mean_kld"].toDouble());
        QCOMPARE(a["ppl_model"].toDouble(), b["ppl_model"].toDouble());

        QJsonObject w =
            kld(pair + QStringList{"--ids", ids, "--ctx", "10", "--max-tokens", "25"}, &ok);
        QVERIFY(ok);
        QCOMPARE(w["tokens"].toInt(), 25);
        QCOMPARE(w["windows"].toInt(), 3);    // 10 + 10 + 5
        QCOMPARE(w["positions"].toInt(), 22); // each window's last token predicts nothing
        QCOMPARE(w["ctx"].toInt(), 10);
    }

    void textOutput() {
        CliResult r = runCli(
            {"kld", "--base", path("f32.gguf"), "--model", path("q8.gguf"), "--text", kText}, xdg_);
        CLI_VERIFY_OK(r);
        const QString out = QString::fromUtf8(r.out);
        for (const char* s : {"KL divergence    mean ", "p99 ", "top-1 agreement  ",
                              "perplexity       base ", "ratio ", "tokens           "})
            QVERIFY2(out.contains(s), qPrintable(s + QString(" not in:\n") + out));
    }

    void badInput_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        const QString f = "{tmp}/f32.gguf";
        QTest::newRow("missing-file")
            << QStringList{"--base", f, "--model", f, "--file", "{tmp}/missing.txt"}
            << "missing.txt";
        QTest::newRow("missing-model")
            << QStringList{"--base", f, "--model", "{tmp}/nope.gguf", "--ids", "1,2"}
            << "nope.gguf";
        QTest::newRow("vocab-differs")
            << QStringList{"--base", f, "--model", "{tmp}/bigvocab.gguf", "--ids", "1,2,3"}
            << "vocabularies differ";
        QTest::newRow("one-token")
            << QStringList{"--base", f, "--model", f, "--ids", "5"} << "at least 2 tokens";
        QTest::newRow("id-outside")
            << QStringList{"--base", f, "--model", f, "--ids", "1,99999999"} << "outside";
        // --base defaults to --model (KV-cache fidelity); --model is required
        QTest::newRow("no-model") << QStringList{"--base", f, "--ids", "1,2"} << "give --model";
        QTest::newRow("two-sources")
            << QStringList{"--base", f, "--model", f, "--ids", "1,2", "--text", "a"}
            << "exactly one";
        QTest::newRow("ctx-beyond-context")
            << QStringList{"--base", f, "--model", f, "--ids", "1,2,3", "--ctx", "4096"}
            << "context";
        QTest::newRow("ctx-too-small")
            << QStringList{"--base", f, "--model", f, "--ids", "1,2,3", "--ctx", "1"} << "--ctx";
    }
    void badInput() {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        for (QString& a : args)
            a.replace("{tmp}", tmp_.path());
        CliResult r = runCli(QStringList{"kld"} + args, xdg_);
        QVERIFY2(r.started && !r.crashed && !r.timedOut, qPrintable(r.describe()));
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.out.isEmpty());
        const QString err = QString::fromUtf8(r.err);
        QCOMPARE(err.count('\n'), 1);
        QVERIFY2(err.startsWith("llmwb kld: "), qPrintable(err));
        QVERIFY2(err.contains(expected), qPrintable(err));
    }

    // Two models of the same vocabulary size whose tokenizers split the text differently.
    void tokenizersDiffer() {
        const QString tok = tokenizerDir("qwen3");
        QVERIFY2(QDir(tok).exists(),
                 qPrintable(tok + " missing: run scripts/fetch-test-assets.sh"));
        QVERIFY(make("qwen-tok.gguf", "f32",
                     {"--tokenizer", tok, "--hidden", "32", "--heads", "2", "--kv-heads", "1",
                      "--intermediate", "64", "--layers", "1", "--tie", "true"}));
        CliResult info = runCli({"info", "--model", path("qwen-tok.gguf"), "--json"}, xdg_);
        CLI_VERIFY_OK(info);
        bool ok = false;
        const int vocab = parseJsonLine(info.out, &ok)["vocab_size"].toInt();
        QVERIFY(ok && vocab > 1000);
        QVERIFY(
            make("demo-tok.gguf", "f32",
                 {"--vocab", QString::number(vocab), "--hidden", "32", "--heads", "2", "--kv-heads",
                  "1", "--intermediate", "64", "--layers", "1", "--tie", "true"}));
        CliResult r = runCli({"kld", "--base", path("qwen-tok.gguf"), "--model",
                              path("demo-tok.gguf"), "--text", kText},
                             xdg_);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("tokenizers differ on the text"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TstCliKld)
#include "tst_cli_kld.moc"
