// Benchmark runs in SQLite (BenchStore over schema v6) on real database files: a run with its
// rows reads back identical (doubles bit for bit), a report is one group stored all or nothing,
// rename/delete, the list's order, damaged rows (an error naming the run, never a crash), and
// the upgrade of a version-5 database that already holds bench_runs rows.
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include "app/report/report_files.h"
#include "app/services/bench_store.h"
#include "app/services/database.h"
#include "report/report_fixture.h"

using namespace llmwb;
using namespace llmwb::report_test;

namespace {

QVariant scalar(Database& db, const QString& sql) {
    QSqlQuery q(db.connection());
    if (!q.exec(sql) || !q.next())
        return {};
    return q.value(0);
}

bool execSql(Database& db, const QString& sql) {
    QSqlQuery q(db.connection());
    return q.exec(sql);
}

// Every field of two runs; QCOMPARE/QVERIFY fail the calling test (check currentTestFailed).
void compareRuns(const BenchRun& a, const BenchRun& b) {
    QCOMPARE(a.name, b.name);
    QCOMPARE(a.policy, b.policy);
    QCOMPARE(a.status, b.status);
    QCOMPARE(a.error, b.error);
    QCOMPARE(a.date, b.date);
    QCOMPARE(a.model_id, b.model_id);
    QCOMPARE(a.backend, b.backend);
    QCOMPARE(a.sweep_setting, b.sweep_setting);
    QVERIFY(same_bits(a.sweep_value, b.sweep_value));
    QCOMPARE(a.percentile_metrics, b.percentile_metrics);
    QCOMPARE(a.settings.dump(), b.settings.dump()); // values and key order
    // The figures as results.json writes them (every figure, doubles in their shortest exact
    // form), and a few compared bit for bit directly.
    QCOMPARE(run_results_json(a).dump(), run_results_json(b).dump());
    QVERIFY(same_bits(a.figures.duration_s, b.figures.duration_s));
    QVERIFY(same_bits(a.figures.output_throughput, b.figures.output_throughput));
    QVERIFY(same_bits(a.figures.request_rate, b.figures.request_rate));
    QVERIFY(same_bits(a.figures.ttft_ms.mean, b.figures.ttft_ms.mean));
    QCOMPARE(a.figures.ttft_ms.percentiles.size(), b.figures.ttft_ms.percentiles.size());
    for (size_t i = 0; i < a.figures.ttft_ms.percentiles.size(); ++i)
        QVERIFY(same_bits(a.figures.ttft_ms.percentiles[i].second,
                          b.figures.ttft_ms.percentiles[i].second));
    QVERIFY(same_bits(a.figures.mean_kv_usage, b.figures.mean_kv_usage));
    QCOMPARE(a.figures.per_request_ttft_ms.size(), b.figures.per_request_ttft_ms.size());
    QCOMPARE(a.figures.speculative.accepted_per_pos, b.figures.speculative.accepted_per_pos);

    QCOMPARE(a.requests.size(), b.requests.size());
    for (size_t i = 0; i < a.requests.size(); ++i) {
        const BenchRequestRow &x = a.requests[i], &y = b.requests[i];
        QCOMPARE(x.index, y.index);
        QVERIFY(same_bits(x.arrival_s, y.arrival_s));
        QVERIFY(same_bits(x.first_token_s, y.first_token_s));
        QVERIFY(same_bits(x.finish_s, y.finish_s));
        QCOMPARE(x.input_tokens, y.input_tokens);
        QCOMPARE(x.output_tokens, y.output_tokens);
        QCOMPARE(x.preemptions, y.preemptions);
        QCOMPARE(x.prefix_hit_tokens, y.prefix_hit_tokens);
        QCOMPARE(x.error, y.error);
    }
    QCOMPARE(a.steps.size(), b.steps.size());
    for (size_t i = 0; i < a.steps.size(); ++i) {
        const BenchStepRow &x = a.steps[i], &y = b.steps[i];
        QVERIFY(same_bits(x.time_s, y.time_s));
        QVERIFY(same_bits(x.step_ms, y.step_ms));
        QCOMPARE(x.prefill_tokens, y.prefill_tokens);
        QCOMPARE(x.decode_tokens, y.decode_tokens);
        QCOMPARE(x.running, y.running);
        QCOMPARE(x.waiting, y.waiting);
        QCOMPARE(x.preempted, y.preempted);
        QVERIFY(same_bits(x.kv_usage, y.kv_usage));
        QCOMPARE(x.draft_tokens, y.draft_tokens);
        QCOMPARE(x.accepted_tokens, y.accepted_tokens);
    }
}

} // namespace

class TestAppBenchStore : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    int files_ = 0;
    QString freshPath() { return dir_.filePath(QStringLiteral("bench-%1.sqlite").arg(++files_)); }

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void runReadsBackIdentical() {
        Database db(freshPath());
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        BenchStore store(db);
        const BenchReport rep = make_report();
        for (const BenchRun& original : rep.runs) {
            const auto id = store.addRun(original, rep.environment);
            QVERIFY2(id, qPrintable(store.lastError()));
            const auto stored = store.run(*id);
            QVERIFY2(stored, qPrintable(store.lastError()));
            compareRuns(stored->run, original);
            if (QTest::currentTestFailed())
                return;
            QCOMPARE(stored->environment.dump(), rep.environment.dump());
            const BenchRunEntry& e = stored->entry;
            QCOMPARE(e.id, *id);
            QCOMPARE(e.groupId, *id); // a run alone starts its own group
            QCOMPARE(e.name, QString::fromStdString(original.name));
            QCOMPARE(e.model, QString::fromStdString(original.model_id));
            QCOMPARE(e.policy, QString::fromStdString(original.policy));
            QCOMPARE(e.status, QString::fromLatin1(bench_run_status_name(original.status)));
            QCOMPARE(e.error, QString::fromStdString(original.error));
            QCOMPARE(e.sweepSetting, QStringLiteral("max_num_seqs"));
            QVERIFY(same_bits(e.sweepValue, original.sweep_value));
            QVERIFY(same_bits(e.outputThroughput, original.figures.output_throughput));
            QVERIFY(same_bits(e.requestThroughput, original.figures.request_throughput));
            QVERIFY(same_bits(e.meanTtftMs, original.figures.ttft_ms.mean));
            QVERIFY(same_bits(e.meanTpotMs, original.figures.tpot_ms.mean));
            QCOMPARE(e.completed, original.figures.completed);
            QCOMPARE(e.numPrompts, static_cast<int>(original.requests.size()));
            QVERIFY(e.importedFrom.isEmpty());
            QVERIFY(qAbs(e.createdAt.secsTo(QDateTime::currentDateTime())) < 600);
        }
        // An explicit group, and the columns the schema names hold what they say.
        const auto first = store.runs().last().id;
        const auto joined = store.addRun(rep.runs[0], {}, first, QStringLiteral("a.zip"));
        QVERIFY(joined);
        QCOMPARE(store.run(*joined)->entry.groupId, first);
        QCOMPARE(store.run(*joined)->entry.importedFrom, QStringLiteral("a.zip"));
        QCOMPARE(store.run(*joined)->environment.dump(), std::string("{}"));
        QCOMPARE(
            scalar(db, QStringLiteral("SELECT config FROM bench_runs WHERE id = %1").arg(*joined))
                .toString()
                .toStdString(),
            rep.runs[0].settings.dump());
    }

    void reportIsOneGroupStoredTogether() {
        Database db(freshPath());
        QVERIFY(db.open());
        BenchStore store(db);
        const BenchReport rep = make_report();
        const auto ids = store.addReport(rep, QStringLiteral("/home/u/their-report.zip"));
        QVERIFY2(ids, qPrintable(store.lastError()));
        QCOMPARE(ids->size(), 3);
        for (int i = 0; i < 3; ++i) {
            const auto stored = store.run(ids->at(i));
            QVERIFY(stored);
            QCOMPARE(stored->entry.groupId, ids->first());
            QCOMPARE(stored->entry.importedFrom, QStringLiteral("/home/u/their-report.zip"));
            compareRuns(stored->run, rep.runs[static_cast<size_t>(i)]);
            if (QTest::currentTestFailed())
                return;
        }
        // Back as a report: the runs in the order asked, the first run's environment.
        const auto back = store.report({ids->at(2), ids->at(0)}, QStringLiteral("Two"));
        QVERIFY2(back, qPrintable(store.lastError()));
        QCOMPARE(back->title, std::string("Two"));
        QCOMPARE(back->runs.size(), size_t(2));
        compareRuns(back->runs[0], rep.runs[2]);
        compareRuns(back->runs[1], rep.runs[0]);
        QCOMPARE(back->environment.dump(), rep.environment.dump());
        QVERIFY(!store.report({ids->at(0), 999999}, QStringLiteral("x")));
        QVERIFY2(store.lastError().contains(QStringLiteral("999999")),
                 qPrintable(store.lastError()));
        QVERIFY(!store.addReport(BenchReport{}, {}));
    }

    // The third run's INSERT fails inside the transaction (a trigger refuses it, as a full disk
    // or a constraint would): nothing of the report is stored, the runs already there stay.
    void reportIsAllOrNothing() {
        Database db(freshPath());
        QVERIFY(db.open());
        BenchStore store(db);
        BenchReport rep = make_report();
        const auto before = store.addRun(rep.runs[0], rep.environment);
        QVERIFY(before);
        QVERIFY(execSql(db, QStringLiteral("CREATE TRIGGER refuse_third BEFORE INSERT ON "
                                           "bench_runs WHEN new.name = 'the third' BEGIN SELECT "
                                           "RAISE(ABORT, 'refused by the test'); END")));
        rep.runs[2].name = "the third";
        QVERIFY(!store.addReport(rep, QStringLiteral("r.zip")));
        QVERIFY2(store.lastError().contains(QStringLiteral("the third")) &&
                     store.lastError().contains(QStringLiteral("refused by the test")),
                 qPrintable(store.lastError()));
        QCOMPARE(scalar(db, QStringLiteral("SELECT count(*) FROM bench_runs")).toInt(), 1);
        QCOMPARE(store.runs().size(), 1);
        QVERIFY(store.run(*before));
        // The connection is usable afterwards (no transaction left open).
        rep.runs[2].name = "renamed third";
        QVERIFY2(store.addReport(rep, QStringLiteral("r.zip")), qPrintable(store.lastError()));
        QCOMPARE(store.runs().size(), 4);
    }

    void renameAndDelete() {
        Database db(freshPath());
        QVERIFY(db.open());
        BenchStore store(db);
        const BenchReport rep = make_report();
        const auto id = store.addRun(rep.runs[1], rep.environment);
        const auto other = store.addRun(rep.runs[0], rep.environment);
        QVERIFY(id && other);
        QVERIFY(store.renameRun(*id, QStringLiteral("  ngram 跑 ")));
        QCOMPARE(store.run(*id)->entry.name, QStringLiteral("ngram 跑"));
        QCOMPARE(store.run(*id)->run.name, std::string("ngram 跑"));
        QCOMPARE(store.report({*id}, {})->runs[0].name, std::string("ngram 跑"));
        QVERIFY(!store.renameRun(*id, QStringLiteral("   ")));
        QVERIFY(!store.renameRun(424242, QStringLiteral("x")));
        QVERIFY(store.lastError().contains(QStringLiteral("424242")));

        QVERIFY(store.deleteRun(*id));
        QVERIFY(!store.run(*id));
        QVERIFY(store.lastError().contains(QString::number(*id)));
        QVERIFY(!store.deleteRun(*id));
        QCOMPARE(store.runs().size(), 1);
        QCOMPARE(store.runs().first().id, *other);
        QVERIFY(store.run(*other));
    }

    void runsAreListedNewestFirst() {
        Database db(freshPath());
        QVERIFY(db.open());
        BenchStore store(db);
        BenchRun r = make_run(0, "a", 3, 2);
        QList<qint64> ids;
        for (const char* name : {"first", "second", "third"}) {
            r.name = name;
            ids.prepend(*store.addRun(r, {}));
            QTest::qWait(3); // distinct created_at (equal ones fall back to the id)
        }
        const auto listed = store.runs();
        QCOMPARE(listed.size(), 3);
        for (int i = 0; i < 3; ++i)
            QCOMPARE(listed[i].id, ids[i]);
        QCOMPARE(listed[0].name, QStringLiteral("third"));
        QVERIFY(listed[0].createdAt >= listed[2].createdAt);
    }

    void damagedRowIsAnErrorNamingTheRun_data() {
        QTest::addColumn<QString>("column");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("reason");
        QTest::newRow("results not JSON") << "results"
                                          << "{\"date\": \"2026" << QStringLiteral("results");
        QTest::newRow("results deep")
            << "results" << QString(100000, QLatin1Char('[')) << QStringLiteral("results");
        QTest::newRow("results wrong type") // "sql:": an SQL expression, not a value
            << "results"
            << "sql:json_set(results, '$.completed', 'many')" << QStringLiteral("'completed'");
        QTest::newRow("results unknown status")
            << "results"
            << "sql:json_set(results, '$.status', 'exploded')" << QStringLiteral("exploded");
        QTest::newRow("requests garbage") << "requests_csv"
                                          << "not,a\ncsv" << QString();
        QTest::newRow("steps run 7") << "steps_csv" << QString() << QString();
        QTest::newRow("environment array") << "environment"
                                           << "[1,2]" << QStringLiteral("environment");
    }
    void damagedRowIsAnErrorNamingTheRun() {
        QFETCH(QString, column);
        QFETCH(QString, value);
        QFETCH(QString, reason);
        Database db(freshPath());
        QVERIFY(db.open());
        BenchStore store(db);
        const BenchReport rep = make_report();
        const auto good = store.addRun(rep.runs[0], rep.environment);
        const auto bad = store.addRun(rep.runs[1], rep.environment);
        QVERIFY(good && bad);
        if (column == QLatin1String("steps_csv") && value.isEmpty()) {
            // A row naming run 7 of a one-run record.
            QString csv =
                scalar(db,
                       QStringLiteral("SELECT steps_csv FROM bench_runs WHERE id = %1").arg(*bad))
                    .toString();
            const int nl = csv.indexOf(QLatin1Char('\n'));
            QVERIFY(nl > 0 && csv.mid(nl + 1, 2) == QStringLiteral("0,"));
            csv.replace(nl + 1, 1, QStringLiteral("7"));
            value = csv;
        }
        QSqlQuery q(db.connection());
        if (value.startsWith(QLatin1String("sql:"))) {
            q.prepare(QStringLiteral("UPDATE bench_runs SET %1 = %2 WHERE id = ?")
                          .arg(column, value.mid(4)));
        } else {
            q.prepare(QStringLiteral("UPDATE bench_runs SET %1 = ? WHERE id = ?").arg(column));
            q.addBindValue(value);
        }
        q.addBindValue(*bad);
        QVERIFY2(q.exec(), qPrintable(q.lastError().text()));
        QCOMPARE(q.numRowsAffected(), 1);

        QVERIFY(!store.run(*bad));
        const QString error = store.lastError();
        qInfo("%s", qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("run %1").arg(*bad)), qPrintable(error));
        if (!reason.isEmpty())
            QVERIFY2(error.contains(reason), qPrintable(error));
        QVERIFY(!store.report({*good, *bad}, {}));
        // The list still shows both; the other run still opens.
        QCOMPARE(store.runs().size(), 2);
        QVERIFY(store.run(*good));
    }

    // A version-5 database with rows in bench_runs (the v2 columns only) upgrades to 6 (and on)
    // keeping
    // them: listed as completed runs, each its own group, not imported. Their results are not
    // a report's line, so opening one is an error naming it; new runs go in beside them.
    void upgradeFromVersion5KeepsOldRuns() {
        const QString path = freshPath();
        {
            Database db(path);
            QVERIFY2(db.open(5), qPrintable(db.errorString()));
            QCOMPARE(db.schemaVersion(), 5);
            QVERIFY(execSql(
                db, QStringLiteral("INSERT INTO bench_runs(id, name, model, config, results, "
                                   "created_at) VALUES (7, 'old load test', 'm.gguf', "
                                   "'{\"n\": 16}', '{\"output_throughput\": 41.5}', 1000)")));
            QVERIFY(execSql(db, QStringLiteral("INSERT INTO bench_runs(id, name, created_at) "
                                               "VALUES (8, 'older', 500)")));
        }
        Database db(path);
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        QCOMPARE(db.schemaVersion(), Database::kLatestVersion);
        QVERIFY(Database::kLatestVersion >= 6);
        BenchStore store(db);
        const auto listed = store.runs();
        QCOMPARE(listed.size(), 2);
        QCOMPARE(listed[0].id, qint64(7));
        QCOMPARE(listed[0].name, QStringLiteral("old load test"));
        QCOMPARE(listed[0].model, QStringLiteral("m.gguf"));
        QCOMPARE(listed[0].status, QStringLiteral("completed"));
        QCOMPARE(listed[0].groupId, qint64(7));
        QVERIFY(listed[0].importedFrom.isEmpty());
        QCOMPARE(listed[0].outputThroughput, 41.5);
        QCOMPARE(listed[0].createdAt.toMSecsSinceEpoch(), qint64(1000));
        QCOMPARE(listed[1].id, qint64(8));
        QCOMPARE(listed[1].status, QStringLiteral("completed"));
        QVERIFY(!store.run(7));
        QVERIFY2(store.lastError().contains(QStringLiteral("run 7")),
                 qPrintable(store.lastError()));
        QCOMPARE(
            scalar(db, QStringLiteral("SELECT config FROM bench_runs WHERE id = 7")).toString(),
            QStringLiteral("{\"n\": 16}"));

        const auto id = store.addRun(make_run(0, "new", 4, 3), {});
        QVERIFY2(id, qPrintable(store.lastError()));
        QVERIFY(*id > 8);
        QCOMPARE(store.runs().size(), 3);
        QCOMPARE(store.runs().first().id, *id);
        QCOMPARE(db.integrityCheck(), QStringLiteral("ok"));
    }
};

QTEST_GUILESS_MAIN(TestAppBenchStore)
#include "tst_app_bench_store.moc"
