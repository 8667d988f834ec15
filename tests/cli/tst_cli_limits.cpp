// Issue 14 at the command line: the one length rule (prompt + max_tokens beyond the model's
// context is refused with both numbers; a default max_tokens shrinks to the room left) in
// `generate` (one prompt and --prompts lines: the refused line gets an error record in its
// place) and `bench`; a model file truncated while `generate` reads it ends with the error
// naming the file and exit code 1, not SIGBUS (135).
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "cli/cli_runner.h"

using namespace clitest;

class TstCliLimits : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString xdg_, model_; // context 256

    static QList<QJsonObject> records(const QByteArray& out) {
        QList<QJsonObject> r;
        for (const QByteArray& line : out.split('\n'))
            if (!line.isEmpty())
                r << QJsonDocument::fromJson(line).object();
        return r;
    }
    static QString ids(int n) {
        QStringList s;
        for (int i = 0; i < n; ++i)
            s << QString::number(3 + i % 50);
        return s.join(',');
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        xdg_ = tmp_.filePath("xdg");
        QVERIFY(QDir().mkpath(xdg_));
        model_ = tmp_.filePath("m.gguf");
        CLI_VERIFY_OK(makeSmallModel(model_, "qwen2", 3, xdg_));
    }

    void askedMaxTokensBeyondContextIsRefused() {
        CliResult r = runCli(
            {"generate", "--model", model_, "--ids", ids(12), "--max-tokens", "1000000", "--json"},
            xdg_);
        QVERIFY2(r.started && !r.crashed && r.exitCode == 1, qPrintable(r.describe()));
        QVERIFY(r.out.isEmpty());
        QCOMPARE(QString::fromUtf8(r.err),
                 QString("llmwb generate: prompt (12 tokens) + max_tokens (1000000) = 1000012 "
                         "exceeds the model's context of 256 tokens\n"));
        r = runCli({"generate", "--model", model_, "--ids", ids(256), "--json"}, xdg_);
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(QString::fromUtf8(r.err),
                 QString("llmwb generate: prompt (256 tokens) leaves no room in the model's "
                         "context of 256 tokens\n"));
    }

    // The default --max-tokens (256) never makes an ordinary prompt fail: it is capped by the
    // room the prompt leaves.
    void defaultMaxTokensFitsTheRoomLeft() {
        CliResult r = runCli({"generate", "--model", model_, "--ids", ids(250), "--temperature",
                              "0", "--ignore-eos", "--json"},
                             xdg_);
        CLI_VERIFY_OK(r);
        bool ok = false;
        const QJsonObject j = parseJsonLine(r.out, &ok);
        QVERIFY(ok);
        QCOMPARE(j.value("ids").toArray().size(), 6);
        QCOMPARE(j.value("finish_reason").toString(), QString("length"));
    }

    void promptsLineBeyondContextGetsAnErrorRecord() {
        const QString file = tmp_.filePath("long.jsonl");
        QVERIFY(writeFile(file, "{\"prompt\": \"hello\", \"max_tokens\": 3}\n"
                                "{\"prompt\": \"hello\", \"max_tokens\": 1000000}\n"
                                "{\"ids\": [" +
                                    ids(250).toUtf8() + "]}\n"));
        CliResult r = runCli({"generate", "--model", model_, "--prompts", file, "--temperature",
                              "0", "--ignore-eos"},
                             xdg_);
        QVERIFY2(r.started && !r.crashed && r.exitCode == 1, qPrintable(r.describe()));
        const QList<QJsonObject> recs = records(r.out);
        QCOMPARE(recs.size(), 3);
        QCOMPARE(recs[0].value("completion_tokens").toInt(), 3);
        const QString err = recs[1].value("error").toString();
        QVERIFY2(err.startsWith("prompt ("), qPrintable(err));
        QVERIFY2(err.contains("+ max_tokens (1000000) = ") &&
                     err.endsWith(" exceeds the model's context of 256 tokens"),
                 qPrintable(err));
        QCOMPARE(recs[1].value("line").toInt(), 2);
        QCOMPARE(recs[2].value("completion_tokens").toInt(), 6); // the default: the room left
        QVERIFY2(r.err.contains("1 of 3 prompts failed"), r.err.constData());
    }

    void benchRefusesLengthsBeyondContext() {
        CliResult r = runCli({"bench", "--model", model_, "--input-len", "200", "--output-len",
                              "100", "--num-prompts", "2"},
                             xdg_);
        QVERIFY2(r.started && !r.crashed && r.exitCode == 1, qPrintable(r.describe()));
        QVERIFY2(r.err.startsWith("llmwb bench: request 0: prompt (200 tokens) + max_tokens "
                                  "(100) = 300 exceeds the model's context of 256 tokens"),
                 r.err.constData());
    }

    // Truncating the model file while generate streams from its mapping: an error naming the
    // file, exit code 1 (it was SIGBUS, exit 135).
    // A model file truncated under a running generation. In the file's row order the weights
    // are read from the mapping at every step: the process must not die of SIGBUS and must say
    // what happened. In the panel layout (the default on the CPU) the matrices were copied at
    // load: the generation does not read the file again and finishes with intact weights.
    void truncatedModelFileIsAnError_data() {
        QTest::addColumn<QString>("layout");
        QTest::newRow("rows") << QStringLiteral("rows");
        QTest::newRow("panels") << QStringLiteral("panels");
    }
    void truncatedModelFileIsAnError() {
        QFETCH(QString, layout);
        const QString big = tmp_.filePath("big-" + layout + ".gguf");
        CLI_VERIFY_OK(runCli({"make-model", "--out", big, "--arch", "qwen2", "--layers", "6",
                              "--hidden", "512", "--heads", "8", "--kv-heads", "2",
                              "--intermediate", "1408", "--context", "4096", "--type", "q8_0"},
                             xdg_, 120000));
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_DATA_HOME", xdg_);
        env.insert("LLMWB_WEIGHT_LAYOUT", layout);
        p.setProcessEnvironment(env);
        const QString tokens = layout == QLatin1String("rows") ? "4000" : "300";
        p.start(cliPath(), {"generate", "--model", big, "--prompt", "hello", "--temperature", "0",
                            "--ignore-eos", "--max-tokens", tokens, "--threads", "1"});
        QVERIFY(p.waitForStarted());
        QByteArray out;
        while (out.isEmpty() && p.state() == QProcess::Running && p.waitForReadyRead(60000))
            out += p.readAllStandardOutput();
        QVERIFY2(!out.isEmpty(), "no token streamed");
        QVERIFY(QFile::resize(big, 1024)); // the weights go; the process is mid-generation
        QVERIFY(p.waitForFinished(60000));
        const QByteArray err = p.readAllStandardError();
        QCOMPARE(p.exitStatus(), QProcess::NormalExit); // not killed by SIGBUS
        if (layout == QLatin1String("panels")) {
            QVERIFY2(p.exitCode() == 0, err.constData());
            return;
        }
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(err.endsWith("llmwb generate: model file changed or was truncated while in use: " +
                              big.toUtf8() + "\n"),
                 err.constData());
    }
};

QTEST_GUILESS_MAIN(TstCliLimits)
#include "tst_cli_limits.moc"
