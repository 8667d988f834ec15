// llmwb bench end to end: under every policy the printed and saved figures agree with the
// per-request records (completed == num_prompts, total tokens == the sums of the per-request
// lengths, ITL/TTFT means == the means of the per-request values), greedy outputs are the same
// token for token whichever policy ran them, vLLM's flag names work and its other options are
// refused by name, and no progress line goes to a stderr that is not a terminal.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include "cli/cli_runner.h"
#include "support/vllm_result_keys.h"

using namespace clitest;

class TstCliBench : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString xdg_, model_;
    QMap<QString, QJsonArray> outputIds_; // policy -> output_ids

    QJsonObject readJson(const QString& path) {
        bool ok = false;
        const QByteArray b = readFile(path, &ok);
        return ok ? QJsonDocument::fromJson(b).object() : QJsonObject();
    }
    QStringList workload() const {
        return {"bench", "--model",
                model_,  "--num-prompts",
                "6",     "--seed",
                "5",     "--random-input-len",
                "12",    "--random-output-len",
                "5",     "--random-range-ratio",
                "0.5",   "--threads",
                "2"};
    }
    static double mean(const std::vector<double>& v) {
        double s = 0;
        for (double x : v)
            s += x;
        return v.empty() ? 0 : s / double(v.size());
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        xdg_ = tmp_.filePath("xdg");
        QVERIFY(QDir().mkpath(xdg_));
        model_ = tmp_.filePath("m.gguf");
        CliResult r = makeSmallModel(model_, "llama", 3, xdg_);
        CLI_VERIFY_OK(r);
    }

    void figuresMatchRecords_data() {
        QTest::addColumn<QString>("policy");
        for (const char* p : {"continuous", "static", "sequential"})
            QTest::newRow(p) << QString(p);
    }
    void figuresMatchRecords() {
        QFETCH(QString, policy);
        const QString result = tmp_.filePath(policy + ".json");
        const QString report = tmp_.filePath(policy + "-report.json");
        CliResult r =
            runCli(workload() + QStringList{"--policy", policy, "--save-detailed",
                                            "--result-filename", result, "--json", report},
                   xdg_, 120000);
        CLI_VERIFY_OK(r);
        QVERIFY2(!r.err.contains('\r'), "a progress line went to a stderr that is no terminal");
        const QJsonObject j = readJson(result);
        QVERIFY2(!j.isEmpty(), qPrintable("no result file " + result));
        for (const char* key : llmwb::test::kVllmResultHeadKeys)
            QVERIFY2(j.contains(key), key);
        for (const char* key :
             {"mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
              "p99_tpot_ms", "mean_itl_ms", "p99_itl_ms", "input_lens", "output_lens", "ttfts",
              "itls", "generated_texts", "errors", "output_ids"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j.value("num_prompts").toInt(), 6);
        QCOMPARE(j.value("completed").toInt(), 6);
        QCOMPARE(j.value("failed").toInt(), 0);
        QCOMPARE(j.value("request_rate").toString(), QString("inf"));
        QVERIFY(j.value("max_concurrency").isNull());
        const QJsonArray inputs = j.value("input_lens").toArray(),
                         outputs = j.value("output_lens").toArray(),
                         ids = j.value("output_ids").toArray(), itls = j.value("itls").toArray(),
                         ttfts = j.value("ttfts").toArray(),
                         texts = j.value("generated_texts").toArray();
        QCOMPARE(inputs.size(), 6);
        QCOMPARE(outputs.size(), 6);
        QCOMPARE(ids.size(), 6);
        QCOMPARE(texts.size(), 6);
        qint64 inSum = 0, outSum = 0;
        std::vector<double> allItls, allTtfts;
        for (int i = 0; i < 6; ++i) {
            inSum += inputs[i].toInt();
            outSum += outputs[i].toInt();
            QVERIFY(inputs[i].toInt() >= 6 && inputs[i].toInt() <= 18); // 12 x (1 +- 0.5)
            QVERIFY(outputs[i].toInt() >= 2 && outputs[i].toInt() <= 8);
            QCOMPARE(ids[i].toArray().size(), outputs[i].toInt());
            QCOMPARE(itls[i].toArray().size(), outputs[i].toInt() - 1);
            for (const auto& x : itls[i].toArray())
                allItls.push_back(x.toDouble());
            allTtfts.push_back(ttfts[i].toDouble());
            QCOMPARE(j.value("errors").toArray()[i].toString(), QString());
        }
        QCOMPARE(j.value("total_input_tokens").toInteger(), inSum);
        QCOMPARE(j.value("total_output_tokens").toInteger(), outSum);
        // ITLs: the same sampling times as the runner's figures.
        const double itl = j.value("mean_itl_ms").toDouble();
        QVERIFY2(std::fabs(itl - 1000 * mean(allItls)) <= 1e-6 * std::max(1.0, itl),
                 qPrintable(QString("mean_itl_ms %1 vs %2").arg(itl).arg(1000 * mean(allItls))));
        // TTFTs: the engine's arrival vs the runner's submit time (microseconds apart).
        const double ttft = j.value("mean_ttft_ms").toDouble();
        QVERIFY2(std::fabs(ttft - 1000 * mean(allTtfts)) <= 2 + 0.02 * ttft,
                 qPrintable(QString("mean_ttft_ms %1 vs %2").arg(ttft).arg(1000 * mean(allTtfts))));
        QVERIFY(j.value("max_concurrent_requests").toInt() >= 1);
        QVERIFY(j.value("max_output_tokens_per_s").toDouble() >= 1);
        // The printed block and llmwb's report say the same.
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains(QRegularExpression("Successful requests: +6\\n")), qPrintable(out));
        QVERIFY2(
            out.contains(QRegularExpression(QString("Total generated tokens: +%1\\n").arg(outSum))),
            qPrintable(out));
        QVERIFY(out.contains(QRegularExpression(QString("Total input tokens: +%1\\n").arg(inSum))));
        const QJsonObject rep =
            readJson(report).value("results").toObject().value(policy).toObject();
        QCOMPARE(rep.value("completed").toInt(), 6);
        QCOMPARE(rep.value("total_output_tokens").toInteger(), outSum);
        QCOMPARE(rep.value("mean_itl_ms").toDouble(), itl);
        outputIds_[policy] = ids;
    }

    // Greedy: continuous batching and one request at a time produce the same tokens. (Static
    // batches pad prompts, which changes what a random-weight model says.)
    void sameTokensAcrossPolicies() {
        QVERIFY(outputIds_.contains("continuous") && outputIds_.contains("sequential"));
        QCOMPARE(outputIds_["continuous"], outputIds_["sequential"]);
    }

    // Several policies in one run: each runs the whole workload, ratios printed.
    void severalPolicies() {
        const QString report = tmp_.filePath("all.json");
        CliResult r = runCli(workload() + QStringList{"--policy", "continuous,static,sequential",
                                                      "--json", report, "--quiet"},
                             xdg_, 120000);
        CLI_VERIFY_OK(r);
        const QJsonObject res = readJson(report).value("results").toObject();
        for (const char* p : {"continuous", "static", "sequential"})
            QCOMPARE(res.value(p).toObject().value("completed").toInt(), 6);
        QVERIFY(r.out.contains("Ratios vs continuous:"));
        QVERIFY(r.err.isEmpty());
    }

    // vLLM's names select the same workload as llmwb's own; the result records the traffic.
    void vllmNames() {
        const QString a = tmp_.filePath("vllm-a.json"), b = tmp_.filePath("vllm-b.json");
        CliResult r1 = runCli({"bench",
                               "--model",
                               model_,
                               "--dataset-name",
                               "random",
                               "--num-prompts",
                               "4",
                               "--random-input-len",
                               "10",
                               "--random-output-len",
                               "3",
                               "--random-prefix-len",
                               "4",
                               "--random-range-ratio",
                               "0.3",
                               "--request-rate",
                               "200",
                               "--burstiness",
                               "1",
                               "--max-concurrency",
                               "2",
                               "--seed",
                               "9",
                               "--ignore-eos",
                               "--disable-tqdm",
                               "--save-result",
                               "--result-filename",
                               a},
                              xdg_, 120000);
        CLI_VERIFY_OK(r1);
        CliResult r2 = runCli({"bench",
                               "--model",
                               model_,
                               "--num-prompts",
                               "4",
                               "--input-len",
                               "10",
                               "--output-len",
                               "3",
                               "--prefix-len",
                               "4",
                               "--range-ratio",
                               "0.3",
                               "--request-rate",
                               "200",
                               "--max-concurrency",
                               "2",
                               "--seed",
                               "9",
                               "--quiet",
                               "--save-detailed",
                               "--result-filename",
                               b},
                              xdg_, 120000);
        CLI_VERIFY_OK(r2);
        const QJsonObject ja = readJson(a), jb = readJson(b);
        QCOMPARE(ja.value("request_rate").toDouble(), 200.0);
        QCOMPARE(ja.value("burstiness").toDouble(), 1.0);
        QCOMPARE(ja.value("max_concurrency").toInt(), 2);
        QCOMPARE(ja.value("completed").toInt(), 4);
        QVERIFY(!ja.contains("input_lens")); // per-request arrays only with --save-detailed
        QVERIFY(jb.contains("input_lens"));
        QCOMPARE(ja.value("total_input_tokens").toInteger(),
                 jb.value("total_input_tokens").toInteger());
        QCOMPARE(ja.value("total_output_tokens").toInteger(),
                 jb.value("total_output_tokens").toInteger());
    }

    void refusedByName_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("option");
        QTest::newRow("host") << QStringList{"--host", "x"} << "--host";
        QTest::newRow("header") << QStringList{"--header", "X-A=b"} << "--header";
        QTest::newRow("tokenizer-mode")
            << QStringList{"--tokenizer-mode", "slow"} << "--tokenizer-mode";
        QTest::newRow("temperature") << QStringList{"--temperature=0.7"} << "--temperature";
        QTest::newRow("dataset-path")
            << QStringList{"--dataset-path", "x.json"} << "--dataset-path";
        QTest::newRow("sharegpt-output-len")
            << QStringList{"--sharegpt-output-len", "5"} << "--sharegpt-output-len";
        QTest::newRow("goodput") << QStringList{"--goodput", "ttft:10"} << "--goodput";
        QTest::newRow("profile") << QStringList{"--profile"} << "--profile";
    }
    void refusedByName() {
        QFETCH(QStringList, args);
        QFETCH(QString, option);
        CliResult r =
            runCli(QStringList{"bench", "--model", model_, "--num-prompts", "1"} + args, xdg_);
        QVERIFY2(r.started && !r.crashed && r.exitCode == 1, qPrintable(r.describe()));
        QVERIFY(r.out.isEmpty());
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(err.startsWith("llmwb bench: " + option +
                                " is a vllm bench serve option llmwb bench does not support: "),
                 qPrintable(err));
        QCOMPARE(err.count('\n'), 1);
    }

    void otherDatasetsRefused() {
        CliResult r = runCli({"bench", "--model", model_, "--dataset-name", "sharegpt"}, xdg_);
        QVERIFY(r.started && !r.crashed && r.exitCode == 1);
        QVERIFY2(r.err.startsWith("llmwb bench: --dataset-name sharegpt is a vllm bench serve "
                                  "dataset llmwb bench does not support"),
                 r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TstCliBench)
#include "tst_cli_bench.moc"
