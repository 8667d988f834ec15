// Benchmark reports end to end with the real binary: `llmwb bench --report out.zip` on a
// writer-made model, `llmwb report show` prints the figures bench printed, `report compare` of a
// report with itself shows no difference, results.json inside has vLLM's keys with the chosen
// percentiles, a folder report holds the five files, --percentile-metrics/--metric-percentiles
// shape --save-result, and the errors (a bad percentile, a missing report, a file that is no zip).
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "app/report/zip/report_zip.h"
#include "cli/cli_runner.h"
#include "support/vllm_result_keys.h"

using namespace clitest;

class TstCliReport : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString xdg_, model_, zip_, single_;
    QByteArray benchOut_; // what `bench --report` printed

    QStringList workload() const {
        return {"bench", "--model",     model_, "--num-prompts", "6", "--seed",
                "5",     "--input-len", "12",   "--output-len",  "5", "--range-ratio",
                "0.5",   "--threads",   "2",    "--quiet"};
    }
    // The value printed after a label ("Output token throughput (tok/s):   123.45").
    static QString printed(const QByteArray& out, const QString& label) {
        QRegularExpression re(QRegularExpression::escape(label) + " +([^\\n]+)\\n");
        auto m = re.match(QString::fromUtf8(out));
        return m.hasMatch() ? m.captured(1) : QString();
    }
    static QList<QString> printedAll(const QByteArray& out, const QString& label) {
        QRegularExpression re(QRegularExpression::escape(label) + " +([^\\n]+)\\n");
        QList<QString> all;
        for (auto it = re.globalMatch(QString::fromUtf8(out)); it.hasNext();)
            all << it.next().captured(1);
        return all;
    }
    // results.json of a zip report: one JSON object per line (one per run).
    static QList<QJsonObject> resultsOfZip(const QString& path) {
        QList<QJsonObject> lines;
        auto files = llmwb::read_report_zip(path.toStdString());
        if (!files)
            return lines;
        for (const auto& [name, bytes] : *files)
            if (name == "results.json")
                for (const QByteArray& line : QByteArray::fromStdString(bytes).split('\n'))
                    if (!line.trimmed().isEmpty())
                        lines << QJsonDocument::fromJson(line).object();
        return lines;
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        xdg_ = tmp_.filePath("xdg");
        QVERIFY(QDir().mkpath(xdg_));
        model_ = tmp_.filePath("m.gguf");
        CliResult r = makeSmallModel(model_, "llama", 3, xdg_);
        CLI_VERIFY_OK(r);
        zip_ = tmp_.filePath("out.zip");
        CliResult b =
            runCli(workload() + QStringList{"--policy", "continuous,sequential",
                                            "--metric-percentiles", "50,99", "--report", zip_},
                   xdg_, 120000);
        CLI_VERIFY_OK(b);
        QVERIFY(QFile::exists(zip_));
        QVERIFY(!QFile::exists(zip_ + ".tmp"));
        benchOut_ = b.out;
        QVERIFY2(benchOut_.contains("P50 TTFT (ms):"), benchOut_.constData());
        single_ = tmp_.filePath("single.zip");
        CliResult one = runCli(
            workload() + QStringList{"--metric-percentiles", "50,90,99", "--report", single_}, xdg_,
            120000);
        CLI_VERIFY_OK(one);
    }

    // `report show` prints each run's figures as bench printed them, and the machine.
    void showPrintsTheFigures() {
        CliResult r = runCli({"report", "show", zip_}, xdg_);
        CLI_VERIFY_OK(r);
        const QString out = QString::fromUtf8(r.out);
        QCOMPARE(printedAll(r.out, "Successful requests:"), (QList<QString>{"6", "6"}));
        for (const char* label :
             {"Total input tokens:", "Total generated tokens:", "Benchmark duration (s):",
              "Output token throughput (tok/s):", "Mean TTFT (ms):", "P50 TTFT (ms):",
              "P99 TTFT (ms):", "Median TPOT (ms):", "Mean ITL (ms):", "P99 E2EL (ms):"}) {
            const QList<QString> shown = printedAll(r.out, label),
                                 ran = printedAll(benchOut_, label);
            QVERIFY2(shown.size() == 2, label);
            QVERIFY2(shown == ran,
                     qPrintable(QString("%1 %2 vs %3").arg(label, shown.join("|"), ran.join("|"))));
        }
        QVERIFY2(out.contains(QRegularExpression("Model: +m\\.gguf, ")), qPrintable(out));
        QVERIFY2(out.contains(QRegularExpression("Machine: +\\S")), qPrintable(out));
        QVERIFY(out.contains("Report: out.zip"));
        // The model's hash is the file's.
        QFile f(model_);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray sha =
            QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex();
        QVERIFY2(out.contains("sha256 " + QString::fromLatin1(sha)), qPrintable(out));
    }

    // A report compared with itself: every figure the same, 0.0% (n/a where both are 0).
    void compareWithItselfIsZero() {
        CliResult r = runCli({"report", "compare", single_, single_}, xdg_);
        CLI_VERIFY_OK(r);
        const QStringList lines = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);
        QVERIFY(lines.size() > 10);
        // The two runs have one name: told apart by their position and file.
        QVERIFY2(lines[0].contains("1:single.zip:continuous") &&
                     lines[0].contains("2:single.zip:continuous"),
                 qPrintable(lines[0]));
        QVERIFY(lines[1].startsWith("-----"));
        int rows = 0, zeros = 0;
        for (const QString& line : lines.mid(2)) {
            const QStringList cells = line.split(QRegularExpression(" {2,}"), Qt::SkipEmptyParts);
            QVERIFY2(cells.size() == 4, qPrintable(line)); // figure, two values, difference
            QVERIFY2(cells[1] == cells[2], qPrintable(line));
            ++rows;
            if (cells[3] == "n/a") { // no difference from 0 in percent
                QVERIFY2(cells[1].toDouble() == 0, qPrintable(line));
                ++zeros;
                continue;
            }
            QVERIFY2(cells[3] == "0.0%", qPrintable(line));
        }
        QVERIFY(rows >= 25);
        QVERIFY(zeros < rows / 2);
        for (const char* key : {"p50_ttft_ms", "p90_ttft_ms", "p99_e2el_ms", "output_throughput"})
            QVERIFY2(r.out.contains(key), key);
        // Several runs in several reports: every run, names made unique.
        CliResult four = runCli({"report", "compare", zip_, zip_}, xdg_);
        CLI_VERIFY_OK(four);
        for (const char* name : {"1:out.zip:continuous", "2:out.zip:continuous",
                                 "1:out.zip:sequential", "2:out.zip:sequential"})
            QVERIFY2(four.out.contains(name), four.out.constData());
        // One report: its two runs side by side, no prefix needed.
        CliResult one = runCli({"report", "compare", zip_}, xdg_);
        CLI_VERIFY_OK(one);
        const QString head = QString::fromUtf8(one.out).section('\n', 0, 0);
        QVERIFY2(head.contains(QRegularExpression("figure +continuous +sequential")),
                 qPrintable(head));
        // A report with one run alone: nothing to compare.
        CliResult alone = runCli({"report", "compare", single_}, xdg_);
        QVERIFY2(alone.started && alone.exitCode == 1, qPrintable(alone.describe()));
        QVERIFY(alone.err.startsWith("llmwb report compare: nothing to compare"));
    }

    // results.json in the zip: vLLM's keys, with the percentiles asked for.
    void resultsJsonHasVllmKeys() {
        const QList<QJsonObject> lines = resultsOfZip(zip_);
        QCOMPARE(lines.size(), 2);
        for (const QJsonObject& j : lines) {
            for (const char* key : llmwb::test::kVllmResultHeadKeys)
                QVERIFY2(j.contains(key), key);
            for (const char* key :
                 {"mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p50_ttft_ms", "p99_ttft_ms",
                  "mean_tpot_ms", "p50_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "p50_itl_ms",
                  "p99_itl_ms", "mean_e2el_ms", "p50_e2el_ms", "p99_e2el_ms"})
                QVERIFY2(j.contains(key), key);
            QCOMPARE(j.value("completed").toInt(), 6);
            QCOMPARE(j.value("failed").toInt(), 0);
            QVERIFY(j.value("p50_ttft_ms").toDouble() <= j.value("p99_ttft_ms").toDouble());
            QVERIFY(j.value("median_ttft_ms").toDouble() == j.value("p50_ttft_ms").toDouble());
            QVERIFY(!j.contains("p90_ttft_ms"));
            // The settings: the workload as vLLM names it, the engine's.
            const QJsonObject w = j.value("settings").toObject().value("workload").toObject();
            QCOMPARE(w.value("request_rate").toString(), QString("inf"));
            QVERIFY(w.value("max_concurrency").isNull());
            QCOMPARE(w.value("dataset").toString(), QString("random"));
            QCOMPARE(w.value("num_prompts").toInt(), 6);
            const QJsonObject e = j.value("settings").toObject().value("engine").toObject();
            QCOMPARE(e.value("scheduling_policy").toString(), j.value("policy").toString());
            QVERIFY(e.value("block_size").toInt() > 0 && e.value("num_gpu_blocks").toInt() > 0);
        }
        QCOMPARE(lines[0].value("total_output_tokens").toInteger(),
                 printed(benchOut_, "Total generated tokens:").toLongLong());
    }

    // A folder report: the five files, readable by `report show`; only its names are written.
    void folderReport() {
        const QString dir = tmp_.filePath("report-folder");
        QVERIFY(QDir().mkpath(dir));
        QVERIFY(writeFile(dir + "/notes.txt", "mine"));
        CliResult b = runCli(workload() + QStringList{"--report", dir}, xdg_, 120000);
        CLI_VERIFY_OK(b);
        QStringList files = QDir(dir).entryList(QDir::Files, QDir::Name);
        QCOMPARE(files, (QStringList{"environment.json", "notes.txt", "report.html", "requests.csv",
                                     "results.json", "steps.csv"}));
        bool ok = false;
        QCOMPARE(readFile(dir + "/notes.txt", &ok), QByteArray("mine"));
        const QByteArray requests = readFile(dir + "/requests.csv", &ok);
        QVERIFY(ok);
        QCOMPARE(requests.trimmed().count('\n'), 6); // a header and six requests
        CliResult s = runCli({"report", "show", dir}, xdg_);
        CLI_VERIFY_OK(s);
        QCOMPARE(printed(s.out, "Total generated tokens:"),
                 printed(b.out, "Total generated tokens:"));
        // Written again: the same names are replaced, nothing else.
        CliResult again = runCli(workload() + QStringList{"--report", dir}, xdg_, 120000);
        CLI_VERIFY_OK(again);
        QCOMPARE(QDir(dir).entryList(QDir::Files, QDir::Name), files);
    }

    // --percentile-metrics / --metric-percentiles choose --save-result's keys and the lines.
    void percentilesShapeSaveResult() {
        const QString result = tmp_.filePath("chosen.json");
        CliResult r = runCli(workload() + QStringList{"--percentile-metrics", "ttft,e2el",
                                                      "--metric-percentiles", "50,99.9",
                                                      "--result-filename", result},
                             xdg_, 120000);
        CLI_VERIFY_OK(r);
        bool ok = false;
        const QJsonObject j = QJsonDocument::fromJson(readFile(result, &ok)).object();
        QVERIFY(ok);
        for (const char* key : {"mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p50_ttft_ms",
                                "p99.9_ttft_ms", "mean_e2el_ms", "p50_e2el_ms", "p99.9_e2el_ms"})
            QVERIFY2(j.contains(key), key);
        for (const char* key : {"p99_ttft_ms", "mean_itl_ms", "mean_tpot_ms", "p99_itl_ms"})
            QVERIFY2(!j.contains(key), key);
        QVERIFY(j.value("p50_ttft_ms").toDouble() <= j.value("p99.9_ttft_ms").toDouble());
        QVERIFY(r.out.contains("P99.9 TTFT (ms):"));
        QVERIFY(r.out.contains("P50 E2EL (ms):"));
        QVERIFY(!r.out.contains("Mean ITL (ms):"));
        QVERIFY(!r.out.contains("Mean TPOT (ms):"));
    }

    void errors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("error");
        const QString missing = tmp_.filePath("missing.zip");
        QTest::newRow("bad percentile")
            << QStringList{"bench", "--metric-percentiles", "50,abc", "--report", "x.zip"}
            << "llmwb bench: --metric-percentiles: 'abc' is not a number";
        QTest::newRow("percentile out of range")
            << QStringList{"bench", "--metric-percentiles", "150"}
            << "llmwb bench: --metric-percentiles: 150 is outside [0, 100]";
        QTest::newRow("bad metric") << QStringList{"bench", "--percentile-metrics", "ttft,foo"}
                                    << "llmwb bench: --percentile-metrics: unknown metric 'foo'";
        QTest::newRow("show missing")
            << QStringList{"report", "show", missing}
            << "llmwb report show: " + missing + ": no such file or folder";
        QTest::newRow("compare missing")
            << QStringList{"report", "compare", missing, missing}
            << "llmwb report compare: " + missing + ": no such file or folder";
        QTest::newRow("no subcommand")
            << QStringList{"report"} << "llmwb report: give a subcommand";
        QTest::newRow("unknown subcommand")
            << QStringList{"report", "open", "x.zip"} << "llmwb report: unknown subcommand 'open'";
        QTest::newRow("show two") << QStringList{"report", "show", "a.zip", "b.zip"}
                                  << "llmwb report show: give one report";
        QTest::newRow("empty folder") << QStringList{"report", "show", tmp_.path() + "/xdg"}
                                      << "llmwb report show: " + tmp_.path() + "/xdg: not a report";
    }
    void errors() {
        QFETCH(QStringList, args);
        QFETCH(QString, error);
        CliResult r = runCli(args, xdg_);
        QVERIFY2(r.started && !r.crashed && r.exitCode == 1, qPrintable(r.describe()));
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(err.startsWith(error), qPrintable(err));
        QCOMPARE(err.count('\n'), 1);
        QVERIFY(!QFile::exists("x.zip"));
    }

    // Files that are no zip: an error naming the file, nothing printed.
    void showOfANonZip() {
        const QString text = tmp_.filePath("notes.zip"), other = tmp_.filePath("notes.txt");
        QVERIFY(writeFile(text, "this is not a zip archive\n"));
        QVERIFY(writeFile(other, "{}\n"));
        for (const QString& path : {text, other}) {
            CliResult r = runCli({"report", "show", path}, xdg_);
            QVERIFY2(r.started && !r.crashed && r.exitCode == 1, qPrintable(r.describe()));
            QVERIFY(r.out.isEmpty());
            const QString err = QString::fromUtf8(r.err);
            QVERIFY2(err.startsWith("llmwb report show: ") && err.contains(path), qPrintable(err));
        }
        // A report target that is an existing file (not .zip): refused before the run.
        CliResult b = runCli(workload() + QStringList{"--report", other}, xdg_);
        QVERIFY2(b.started && b.exitCode == 1, qPrintable(b.describe()));
        QVERIFY2(b.err.contains("exists and is not a folder"), b.err.constData());
        QVERIFY(b.out.isEmpty()); // nothing ran
        // A zip in a folder that does not exist: refused before the run.
        CliResult nodir =
            runCli(workload() + QStringList{"--report", tmp_.filePath("no/such/dir/r.zip")}, xdg_);
        QVERIFY2(nodir.started && nodir.exitCode == 1, qPrintable(nodir.describe()));
        QVERIFY(nodir.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TstCliReport)
#include "tst_cli_report.moc"
