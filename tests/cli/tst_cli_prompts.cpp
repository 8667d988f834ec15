// llmwb generate --prompts FILE.jsonl end to end: one record per prompt in input order, the
// per-line options honoured (max_tokens, temperature + seed, stop, stop_token_ids), greedy lines
// equal to `llmwb generate` of the same prompt, and invalid lines answered by an error record in
// their place while the other lines still run.
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include "cli/cli_runner.h"

using namespace clitest;

class TstCliPrompts : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    QString xdg_, model_;
    int vocab_ = 0;

    QString writeLines(const QString& name, const QList<QByteArray>& lines) {
        const QString path = tmp_.filePath(name);
        writeFile(path, lines.join('\n') + '\n');
        return path;
    }
    // Every stdout line as a JSON object (fails the test when one is not).
    static QList<QJsonObject> records(const QByteArray& out) {
        QList<QJsonObject> r;
        for (const QByteArray& line : out.split('\n')) {
            if (line.isEmpty())
                continue;
            const QJsonDocument d = QJsonDocument::fromJson(line);
            if (!d.isObject())
                return {};
            r << d.object();
        }
        return r;
    }
    // `llmwb generate --ids ... --temperature 0 --ignore-eos --json` of one prompt.
    QJsonObject greedy(const std::vector<int>& ids, int maxTokens) {
        CliResult r =
            runCli({"generate", "--model", model_, "--ids", idList(ids), "--temperature", "0",
                    "--ignore-eos", "--max-tokens", QString::number(maxTokens), "--json"},
                   xdg_);
        bool ok = false;
        const QJsonObject j = parseJsonLine(r.out, &ok);
        if (!r.ok() || !ok)
            qWarning("%s", qPrintable(r.describe()));
        return j;
    }
    static QByteArray idsJson(const std::vector<int>& ids) {
        QByteArray s = "[";
        for (size_t i = 0; i < ids.size(); ++i)
            s += (i ? "," : "") + QByteArray::number(ids[i]);
        return s + "]";
    }
    // A deterministic prompt of n ids.
    std::vector<int> prompt(int n, int salt) const {
        std::vector<int> ids;
        for (int i = 0; i < n; ++i)
            ids.push_back(3 + (i * 7 + salt * 13) % (vocab_ - 3));
        return ids;
    }

  private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        xdg_ = tmp_.filePath("xdg");
        QVERIFY(QDir().mkpath(xdg_));
        model_ = tmp_.filePath("m.gguf");
        CliResult r = makeSmallModel(model_, "qwen2", 7, xdg_);
        CLI_VERIFY_OK(r);
        r = runCli({"info", "--model", model_, "--json"}, xdg_);
        CLI_VERIFY_OK(r);
        bool ok = false;
        vocab_ = parseJsonLine(r.out, &ok).value("vocab_size").toInt();
        QVERIFY(ok && vocab_ > 20);
    }

    // 16 prompts of different lengths and max_tokens (long ones first, so they finish last):
    // records come back in input order, each with its own max_tokens, and each greedy line is
    // exactly what `llmwb generate` gives for that prompt alone.
    void outputInInputOrder() {
        QList<QByteArray> lines;
        std::vector<std::vector<int>> prompts;
        std::vector<int> maxTokens;
        for (int i = 0; i < 16; ++i) {
            prompts.push_back(prompt(4 + (i * 5) % 23, i));
            maxTokens.push_back(16 - i);
            lines << "{\"ids\": " + idsJson(prompts.back()) +
                         ", \"max_tokens\": " + QByteArray::number(maxTokens.back()) + "}";
        }
        const QString file = writeLines("order.jsonl", lines);
        CliResult r = runCli({"generate", "--model", model_, "--prompts", file, "--temperature",
                              "0", "--ignore-eos", "--max-num-seqs", "5"},
                             xdg_);
        CLI_VERIFY_OK(r);
        const QList<QJsonObject> recs = records(r.out);
        QCOMPARE(recs.size(), 16);
        for (int i = 0; i < 16; ++i) {
            const QJsonObject& o = recs[i];
            QCOMPARE(o.value("index").toInt(), i);
            QCOMPARE(o.value("completion_tokens").toInt(), maxTokens[i]);
            QCOMPARE(o.value("finish_reason").toString(), QString("length"));
            QCOMPARE(o.value("prompt_tokens").toInt(), int(prompts[i].size()));
            const QJsonObject single = greedy(prompts[i], maxTokens[i]);
            QCOMPARE(toIntVector(o.value("ids").toArray()),
                     toIntVector(single.value("ids").toArray()));
            QCOMPARE(o.value("text").toString(), single.value("text").toString());
        }
    }

    // Options per line: max_tokens, temperature + seed (same seed, same output), stop_token_ids
    // and stop strings; the command line's sampling flags are the defaults of every line.
    void perLineOptions() {
        const std::vector<int> p = prompt(9, 1);
        const QJsonObject ref = greedy(p, 12);
        const auto refIds = toIntVector(ref.value("ids").toArray());
        QCOMPARE(refIds.size(), size_t(12));
        const int stopId = refIds[4];
        const size_t stopAt =
            size_t(std::find(refIds.begin(), refIds.end(), stopId) - refIds.begin());
        const QString text = ref.value("text").toString();
        QString stop = text.mid(text.size() / 2, 2);
        const bool haveStop = !stop.trimmed().isEmpty() && !stop.contains(QChar(0xFFFD));
        if (!haveStop)
            stop = "\x01\x02zzq";
        const QByteArray ids = idsJson(p);
        QList<QByteArray> lines = {
            "{\"ids\": " + ids + "}", // defaults: --max-tokens 12, --temperature 0
            "{\"ids\": " + ids + ", \"max_tokens\": 3}",
            "{\"ids\": " + ids + ", \"temperature\": 1.5, \"seed\": 11}",
            "{\"ids\": " + ids + ", \"temperature\": 1.5, \"seed\": 11}",
            "{\"ids\": " + ids + ", \"stop_token_ids\": [" + QByteArray::number(stopId) + "]}",
            "{\"ids\": " + ids + ", \"stop\": " +
                QJsonDocument(QJsonArray{stop}).toJson(QJsonDocument::Compact) + "}",
        };
        const QString file = writeLines("options.jsonl", lines);
        CliResult r = runCli({"generate", "--model", model_, "--prompts", file, "--temperature",
                              "0", "--max-tokens", "12", "--ignore-eos"},
                             xdg_);
        CLI_VERIFY_OK(r);
        const QList<QJsonObject> recs = records(r.out);
        QCOMPARE(recs.size(), lines.size());
        QCOMPARE(toIntVector(recs[0].value("ids").toArray()), refIds);
        QCOMPARE(toIntVector(recs[1].value("ids").toArray()),
                 std::vector<int>(refIds.begin(), refIds.begin() + 3));
        QCOMPARE(recs[2].value("ids").toArray(), recs[3].value("ids").toArray());
        QCOMPARE(recs[2].value("completion_tokens").toInt(), 12);
        QCOMPARE(toIntVector(recs[4].value("ids").toArray()),
                 std::vector<int>(refIds.begin(), refIds.begin() + stopAt + 1));
        QCOMPARE(recs[4].value("finish_reason").toString(), QString("stop"));
        if (haveStop) {
            QCOMPARE(recs[5].value("finish_reason").toString(), QString("stop"));
            QCOMPARE(recs[5].value("text").toString(), text.left(text.indexOf(stop)));
            QCOMPARE(recs[5].value("stop").toString(), stop);
        } else {
            QCOMPARE(recs[5].value("text").toString(), text);
        }
    }

    // Invalid lines: an error record in place (index, line, error), one stderr line each, the
    // good lines still run, exit code 1. The error of a bad value is the CLI flag's message.
    void badLinesInPlace() {
        const QByteArray ids = idsJson(prompt(5, 2));
        QList<QByteArray> lines = {
            "{\"ids\": " + ids + ", \"max_tokens\": 2}",
            "{\"ids\": " + ids + ", \"max_tokens\": ", // malformed
            "",                                        // blank: skipped
            "{\"ids\": " + ids + ", \"temperature\": -1}",
            "{\"ids\": " + ids + ", \"max_tokenz\": 2}",
            "{\"ids\": [1, " + QByteArray::number(vocab_) + "]}", // the engine refuses it
            "{\"ids\": " + ids + ", \"stop_token_ids\": [" + QByteArray::number(vocab_) + "]}",
            "\"just a string\"",
            "{\"prompt\": \"hello\", \"max_tokens\": 2}",
        };
        const QString file = writeLines("bad.jsonl", lines);
        CliResult r = runCli({"generate", "--model", model_, "--prompts", file, "--temperature",
                              "0", "--ignore-eos"},
                             xdg_);
        QVERIFY2(r.started && !r.timedOut && !r.crashed, qPrintable(r.describe()));
        QCOMPARE(r.exitCode, 1);
        const QList<QJsonObject> recs = records(r.out);
        QCOMPARE(recs.size(), 8);
        const int fileLines[] = {1, 2, 4, 5, 6, 7, 8, 9};
        const bool bad[] = {false, true, true, true, true, true, true, false};
        for (int i = 0; i < 8; ++i) {
            QCOMPARE(recs[i].value("index").toInt(), i);
            QCOMPARE(recs[i].contains("error"), bad[i]);
            if (bad[i])
                QCOMPARE(recs[i].value("line").toInt(), fileLines[i]);
            else
                QCOMPARE(recs[i].value("completion_tokens").toInt(), 2);
        }
        QCOMPARE(recs[1].value("error").toString(), QString("invalid JSON"));
        const QString tempError = recs[2].value("error").toString();
        QCOMPARE(tempError, QString("temperature must be in [0, inf), got -1"));
        QCOMPARE(recs[3].value("error").toString(), QString("unknown key \"max_tokenz\""));
        QVERIFY(recs[4].value("error").toString().contains(QString::number(vocab_)));
        QVERIFY(recs[5].value("error").toString().contains(QString::number(vocab_)));
        QVERIFY(recs[6].value("error").toString().contains("expected a JSON object"));
        const QStringList err = QString::fromUtf8(r.err).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(err.size(), 7); // six bad lines + the summary
        QVERIFY(err[0].startsWith("llmwb generate: " + file + ":2: "));
        QVERIFY2(err.last().contains("6 of 8"), qPrintable(err.last()));

        // The same bad value as a flag: the same message, after the flag's name.
        CliResult flag =
            runCli({"generate", "--model", model_, "--prompts", file, "--temperature", "-1"}, xdg_);
        QVERIFY(!flag.ok() && flag.out.isEmpty());
        QCOMPARE(QString::fromUtf8(flag.err), "llmwb generate: --temperature: " + tempError + "\n");
        flag = runCli({"generate", "--model", model_, "--ids", "1,2", "--temperature", "-1"}, xdg_);
        QCOMPARE(QString::fromUtf8(flag.err), "llmwb generate: --temperature: " + tempError + "\n");
    }

    // Every line invalid: error records only, no crash, exit 1.
    void allLinesBad() {
        const QString file = writeLines("allbad.jsonl", {"{", "{\"ids\": [1], \"top_p\": 0}"});
        CliResult r = runCli({"generate", "--model", model_, "--prompts", file}, xdg_);
        QVERIFY2(r.started && !r.timedOut && !r.crashed, qPrintable(r.describe()));
        QCOMPARE(r.exitCode, 1);
        const QList<QJsonObject> recs = records(r.out);
        QCOMPARE(recs.size(), 2);
        QCOMPARE(recs[1].value("error").toString(), QString("top_p must be in (0, 1], got 0"));
    }

    // --json was accepted and ignored: now it is refused with the reason.
    void jsonFlagRefused() {
        const QString file = writeLines("one.jsonl", {"{\"ids\": [1, 2]}"});
        CliResult r = runCli({"generate", "--model", model_, "--prompts", file, "--json"}, xdg_);
        QVERIFY(r.started && !r.crashed && r.exitCode == 1);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.startsWith("llmwb generate: --json: "), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TstCliPrompts)
#include "tst_cli_prompts.moc"
