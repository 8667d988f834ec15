// llmwb info: the type histogram (tensors, parameters, bytes per type) and the average bits per
// weight, in --json and in text, over models written by make-model (F32, Q8_0, Q4_K_M).
#include <QDir>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include "cli/cli_runner.h"

using namespace clitest;

class TstCliInfo : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString xdg_;

    QString path(const QString& name) const { return tmp_.filePath(name); }
    QJsonObject info(const QString& model) {
        CliResult r = runCli({"info", "--model", model, "--json"}, xdg_);
        if (!r.ok()) {
            qWarning("%s", qPrintable(r.describe()));
            return {};
        }
        bool ok = false;
        QJsonObject j = parseJsonLine(r.out, &ok);
        return ok ? j : QJsonObject{};
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        xdg_ = path("xdg");
        QVERIFY(QDir().mkpath(xdg_));
        for (QString type : {"f32", "q8_0", "q4_k_m"}) {
            CliResult r =
                runCli({"make-model", "--out", path(type + ".gguf"), "--type", type, "--hidden",
                        "256", "--intermediate", "512", "--layers", "3", "--context", "256"},
                       xdg_);
            CLI_VERIFY_OK(r);
        }
    }

    void histogram_data() {
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("mainType"); // the type with the most bytes
        QTest::addColumn<double>("minBpw");    // over the weight matrices
        QTest::addColumn<double>("maxBpw");
        QTest::newRow("f32") << "f32"
                             << "F32" << 32.0 << 32.0;
        QTest::newRow("q8_0") << "q8_0"
                              << "Q8_0" << 8.5 << 8.5;
        QTest::newRow("q4_k_m") << "q4_k_m"
                                << "Q4_K" << 4.51 << 6.56;
    }
    void histogram() {
        QFETCH(QString, type);
        QFETCH(QString, mainType);
        QFETCH(double, minBpw);
        QFETCH(double, maxBpw);
        QJsonObject j = info(path(type + ".gguf"));
        QVERIFY(!j.isEmpty());
        const QJsonArray h = j["type_histogram"].toArray();
        QVERIFY(!h.isEmpty());
        QCOMPARE(h[0].toObject()["type"].toString(), mainType);
        qint64 bytes = 0, params = 0;
        int tensors = 0;
        for (const QJsonValue& v : h) {
            const QJsonObject e = v.toObject();
            bytes += e["bytes"].toInteger();
            params += e["parameters"].toInteger();
            tensors += e["tensors"].toInt();
            QVERIFY(e["bits_per_weight"].toDouble() > 0);
        }
        QCOMPARE(bytes, j["weight_bytes"].toInteger());
        QVERIFY(tensors > 0);
        const double matrices = j["bits_per_weight"].toObject()["weight_matrices"].toDouble();
        const double all = j["bits_per_weight"].toObject()["all_tensors"].toDouble();
        QVERIFY2(matrices >= minBpw && matrices <= maxBpw, qPrintable(QString::number(matrices)));
        QVERIFY2(std::abs(all - bytes * 8.0 / params) < 1e-9, qPrintable(QString::number(all)));
        // embedding + 3 x (q, k, v, o, gate, up, down) + output (untied)
        QCOMPARE(j["weight_matrices"].toObject()["tensors"].toInt(), 1 + 3 * 7 + 1);
        // Each group also carries its parameters and bits per weight.
        const QJsonObject ffn = j["tensor_types"].toObject()["ffn"].toObject();
        QVERIFY(ffn["parameters"].toInteger() == 3 * 3 * 256 * 512);
        QVERIFY(ffn["bits_per_weight"].toDouble() >= minBpw);
    }

    void text() {
        CliResult r = runCli({"info", "--model", path("q4_k_m.gguf")}, xdg_);
        CLI_VERIFY_OK(r);
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains("type histogram"), qPrintable(out));
        QVERIFY2(out.contains(QRegularExpression("\\n  Q4_K +\\d+ +\\d+ .*4\\.500\\n")),
                 qPrintable(out));
        QVERIFY2(out.contains(QRegularExpression("\\n  Q6_K +\\d+ +\\d+ .*6\\.562\\n")),
                 qPrintable(out));
        QVERIFY2(out.contains(QRegularExpression(
                     "bits per weight \\d\\.\\d{3} over the weight matrices \\(23 tensors\\)")),
                 qPrintable(out));
        QVERIFY2(out.contains(QRegularExpression("ffn .* bpw\\n")), qPrintable(out));
    }
};

QTEST_GUILESS_MAIN(TstCliInfo)
#include "tst_cli_info.moc"
