// llmwb quantize end to end: a make-model F16 file becomes a Q4_K_M file that info and generate
// open; the summary names the recipe version and the fallbacks; --json reports the histogram;
// bad input is one stderr line, exit != 0, nothing on stdout and no file; Ctrl+C (SIGINT)
// leaves neither OUT nor a temporary file.
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

#include "cli/cli_runner.h"

using namespace clitest;

class TstCliQuantize : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString xdg_;
    QString f16_; // a qwen2 F16 model with 896-wide rows (fallbacks, as Qwen2.5-0.5B)
    QString q8_;  // an already quantized model

    QString path(const QString& name) const { return tmp_.filePath(name); }
    QStringList tempFiles() const {
        QStringList out;
        for (const QString& f : QDir(tmp_.path()).entryList(QDir::Files | QDir::Hidden))
            if (f.contains(".tmp"))
                out << f;
        return out;
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        xdg_ = path("xdg");
        QVERIFY(QDir().mkpath(xdg_));
        f16_ = path("f16.gguf");
        q8_ = path("q8.gguf");
        const QStringList shape = {
            "--arch",     "qwen2", "--layers",       "2",    "--hidden",  "896", "--heads", "14",
            "--kv-heads", "2",     "--intermediate", "1024", "--context", "256"};
        CLI_VERIFY_OK(
            runCli(QStringList{"make-model", "--out", f16_, "--type", "f16"} + shape, xdg_));
        CLI_VERIFY_OK(
            runCli(QStringList{"make-model", "--out", q8_, "--type", "q8_0"} + shape, xdg_));
    }

    void quantizeOpensAndGenerates() {
        const QString out = path("q4km.gguf");
        CliResult r = runCli({"quantize", f16_, out, "--type", "q4_k_m", "--threads", "2"}, xdg_);
        CLI_VERIFY_OK(r);
        const QString text = QString::fromUtf8(r.out);
        QVERIFY2(text.contains("Q4_K_M"), qPrintable(text));
        QVERIFY2(text.contains("llama.cpp"), qPrintable(text));                // the recipe version
        QVERIFY2(text.contains("is not a multiple of 256"), qPrintable(text)); // fallbacks
        QVERIFY2(text.contains("Q5_0"), qPrintable(text));
        QVERIFY(QFileInfo(out).size() < QFileInfo(f16_).size() / 2);
        QVERIFY(tempFiles().isEmpty());
        r = runCli({"info", "--model", out, "--json"}, xdg_);
        CLI_VERIFY_OK(r);
        r = runCli({"generate", "--model", out, "--ids", "1,2,3", "--max-tokens", "4",
                    "--temperature", "0"},
                   xdg_);
        CLI_VERIFY_OK(r);
    }

    void jsonReport() {
        const QString out = path("q8.json.gguf");
        CliResult r = runCli({"quantize", f16_, out, "--type", "Q8_0", "--json"}, xdg_);
        CLI_VERIFY_OK(r);
        bool ok = false;
        QJsonObject j = parseJsonLine(r.out, &ok);
        QVERIFY2(ok, r.out.constData());
        QCOMPARE(j.value("type").toString(), QString("Q8_0"));
        QVERIFY(j.value("recipe_version").toString().contains("llama.cpp"));
        QCOMPARE(j.value("fallback_tensors").toInt(), 0);
        QVERIFY(j.value("types").toObject().value("Q8_0").toInt() > 0);
        QVERIFY(j.value("types").toObject().value("F32").toInt() > 0); // norms and biases
        QVERIFY(qAbs(j.value("bits_per_weight").toDouble() - 8.5) < 1e-6);
        QVERIFY(j.value("tensor_types").toArray().size() > 10);
    }

    void helpNamesVersionAndPresets() {
        CliResult r = runCli({"quantize", "--help"}, xdg_);
        CLI_VERIFY_OK(r);
        for (const char* s : {"llama.cpp", "Q4_K_M", "Q3_K_M", "IQ4_XS", "of scope for now"})
            QVERIFY2(r.out.contains(s), s);
    }

    void rejected_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mention");
        QTest::newRow("unknown type")
            << QStringList{"{f16}", "{tmp}/x.gguf", "--type", "Q4_K_XL"} << "valid: Q8_0";
        QTest::newRow("out of scope IQ2")
            << QStringList{"{f16}", "{tmp}/x.gguf", "--type", "iq2_xs"} << "out of scope for now";
        QTest::newRow("out of scope TQ1_0")
            << QStringList{"{f16}", "{tmp}/x.gguf", "--type", "TQ1_0"} << "out of scope for now";
        QTest::newRow("out of scope MXFP4")
            << QStringList{"{f16}", "{tmp}/x.gguf", "--type", "MXFP4"} << "out of scope for now";
        QTest::newRow("out equals in")
            << QStringList{"{f16}", "{f16}", "--type", "Q8_0"} << "is the input";
        QTest::newRow("out equals in, relative")
            << QStringList{"{f16}", "{tmp}/./f16.gguf", "--type", "Q8_0"} << "is the input";
        QTest::newRow("already quantized")
            << QStringList{"{q8}", "{tmp}/x.gguf", "--type", "Q4_0"} << "already quantized";
        QTest::newRow("no type") << QStringList{"{f16}", "{tmp}/x.gguf"} << "--type";
        QTest::newRow("no output") << QStringList{"{f16}", "--type", "Q8_0"} << "IN and OUT";
        QTest::newRow("missing input")
            << QStringList{"{tmp}/none.gguf", "{tmp}/x.gguf", "--type", "Q8_0"} << "no such file";
        QTest::newRow("imatrix-out alone")
            << QStringList{"{f16}", "{tmp}/x.gguf", "--type", "Q8_0", "--imatrix-out", "{tmp}/i"}
            << "--calibration";
        QTest::newRow("imatrix missing")
            << QStringList{"{f16}", "{tmp}/x.gguf", "--type", "IQ4_XS", "--imatrix", "{tmp}/nope"}
            << "nope";
    }
    void rejected() {
        QFETCH(QStringList, args);
        QFETCH(QString, mention);
        for (QString& a : args) {
            a.replace("{f16}", f16_);
            a.replace("{q8}", q8_);
            a.replace("{tmp}", tmp_.path());
        }
        bool ok = false;
        const QByteArray before = readFile(f16_, &ok);
        QVERIFY(ok);
        CliResult r = runCli(QStringList{"quantize"} + args, xdg_);
        QVERIFY2(r.started && !r.crashed && !r.timedOut, qPrintable(r.describe()));
        QVERIFY2(r.exitCode != 0, qPrintable(r.describe()));
        QVERIFY2(r.out.isEmpty(), r.out.constData());
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(QString::fromUtf8(r.err).contains(mention, Qt::CaseInsensitive),
                 r.err.constData());
        QVERIFY(!QFileInfo::exists(path("x.gguf")));
        QVERIFY(tempFiles().isEmpty());
        QCOMPARE(readFile(f16_, &ok), before); // the input is never touched
    }

    void sigintLeavesNoFile() {
        // A model large enough that IQ4_XS takes seconds; SIGINT once the temporary file is
        // there.
        const QString big = path("big.gguf");
        CLI_VERIFY_OK(runCli({"make-model", "--out", big, "--type", "bf16", "--arch", "qwen2",
                              "--layers", "8", "--hidden", "1024", "--heads", "16", "--kv-heads",
                              "2", "--intermediate", "4096"},
                             xdg_));
        const QString out = path("big-iq4.gguf");
        QVERIFY(writeFile(out, "old contents"));
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_DATA_HOME", xdg_);
        p.setProcessEnvironment(env);
        p.start(cliPath(), {"quantize", big, out, "--type", "IQ4_XS", "--threads", "1"});
        QVERIFY(p.waitForStarted(10000));
        QElapsedTimer t;
        t.start();
        while (tempFiles().isEmpty() && t.elapsed() < 60000 && p.state() == QProcess::Running)
            QTest::qWait(20);
        QVERIFY2(!tempFiles().isEmpty(), "no temporary file appeared");
        QVERIFY(p.state() == QProcess::Running);
        ::kill(pid_t(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QVERIFY(p.exitCode() != 0);
        QVERIFY2(p.readAllStandardError().contains("cancelled"), "no 'cancelled' message");
        QVERIFY(tempFiles().isEmpty());
        bool ok = false;
        QCOMPARE(readFile(out, &ok), QByteArray("old contents")); // replaced only when complete
    }
};

QTEST_GUILESS_MAIN(TstCliQuantize)
#include "tst_cli_quantize.moc"
