#include "app/services/bench_store.h"

#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>
#include <algorithm>
#include <cmath>

#include "app/report/report_files.h"
#include "app/report/report_text.h"
#include "app/services/database.h"

namespace llmwb {

namespace {

using oj = nlohmann::ordered_json;

constexpr const char* kColumns =
    "id, group_id, name, model, policy, status, error, sweep_setting, sweep_value, results, "
    "imported_from, created_at, environment, requests_csv, steps_csv";
enum Col {
    kId,
    kGroup,
    kName,
    kModel,
    kPolicy,
    kStatus,
    kError,
    kSweepSetting,
    kSweepValue,
    kResults,
    kImportedFrom,
    kCreated,
    kEnvironment,
    kRequests,
    kSteps
};

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

std::string utf8(const QVariant& v) {
    return v.toString().toStdString();
}

// A number of a results line for the runs list: what is there and finite, else 0 (the list
// shows a damaged row; opening it says what is wrong).
double number(const oj& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number())
        return 0;
    const double v = it->get<double>();
    return std::isfinite(v) ? v : 0;
}

BenchRunEntry readEntry(const QSqlQuery& q) {
    BenchRunEntry e;
    e.id = q.value(kId).toLongLong();
    e.groupId = q.value(kGroup).isNull() ? e.id : q.value(kGroup).toLongLong();
    e.name = q.value(kName).toString();
    e.model = q.value(kModel).toString();
    e.policy = q.value(kPolicy).toString();
    e.status = q.value(kStatus).toString();
    e.error = q.value(kError).toString();
    e.sweepSetting = q.value(kSweepSetting).toString();
    e.sweepValue = q.value(kSweepValue).toDouble();
    e.importedFrom = q.value(kImportedFrom).toString();
    e.createdAt = QDateTime::fromMSecsSinceEpoch(q.value(kCreated).toLongLong());
    const std::string results = utf8(q.value(kResults));
    auto j = report_detail::parse_json_text(results, "results");
    if (j && j->is_object()) {
        e.outputThroughput = number(*j, "output_throughput");
        e.requestThroughput = number(*j, "request_throughput");
        e.meanTtftMs = number(*j, "mean_ttft_ms");
        e.meanTpotMs = number(*j, "mean_tpot_ms");
        e.completed = static_cast<int>(std::clamp(number(*j, "completed"), 0.0, 2e9));
        e.numPrompts = static_cast<int>(std::clamp(number(*j, "num_prompts"), 0.0, 2e9));
    }
    return e;
}

// A stored run read back: its results line, its CSV rows and its environment, each checked as
// a report's files are (the database is a file on disk: anything may be in it).
Result<StoredBenchRun> readRun(const QSqlQuery& q) {
    StoredBenchRun out;
    out.entry = readEntry(q);
    auto line = report_detail::parse_json_text(utf8(q.value(kResults)), "results");
    if (!line)
        return line.error();
    auto run = parse_run_results_json(*line, "results");
    if (!run)
        return run.error();
    std::vector<BenchRun> runs{std::move(*run)};
    const std::string requests = utf8(q.value(kRequests));
    if (Status s = parse_requests_csv(requests, runs); !s)
        return s.error();
    const std::string steps = utf8(q.value(kSteps));
    if (Status s = parse_steps_csv(steps, runs); !s)
        return s.error();
    auto env = report_detail::parse_json_text(utf8(q.value(kEnvironment)), "environment");
    if (!env)
        return env.error();
    if (!env->is_object())
        return make_error("environment: not a JSON object");
    out.run = std::move(runs[0]);
    out.run.name = q.value(kName).toString().toStdString(); // renameRun changes the column only
    out.environment = std::move(*env);
    return out;
}

} // namespace

BenchStore::BenchStore(Database& db) : db_(db) {}

std::optional<qint64> BenchStore::addRun(const BenchRun& run, const oj& environment, qint64 groupId,
                                         const QString& importedFrom) {
    QSqlDatabase db = db_.connection();
    if (!db.transaction()) {
        error_ = tr("Benchmark runs: %1").arg(db.lastError().text().simplified());
        return std::nullopt;
    }
    const auto id = insertRun(run, environment, groupId, importedFrom);
    if (!id || !db.commit()) {
        if (id)
            error_ = tr("Benchmark runs: %1").arg(db.lastError().text().simplified());
        db.rollback();
        return std::nullopt;
    }
    return id;
}

std::optional<qint64> BenchStore::insertRun(const BenchRun& run, const oj& environment,
                                            qint64 groupId, const QString& importedFrom) {
    const std::vector<const BenchRun*> one{&run};
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral(
        "INSERT INTO bench_runs(name, model, config, results, created_at, group_id, policy, "
        "status, error, sweep_setting, sweep_value, environment, requests_csv, steps_csv, "
        "imported_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(sqlText(qs(run.name)));
    q.addBindValue(sqlText(qs(run.model_id)));
    q.addBindValue(qs((run.settings.is_object() ? run.settings : oj::object()).dump()));
    q.addBindValue(qs(run_results_json(run).dump()));
    q.addBindValue(QDateTime::currentMSecsSinceEpoch());
    q.addBindValue(groupId > 0 ? QVariant(groupId) : QVariant(QMetaType(QMetaType::LongLong)));
    q.addBindValue(sqlText(qs(run.policy)));
    q.addBindValue(QString::fromLatin1(bench_run_status_name(run.status)));
    q.addBindValue(sqlText(qs(run.error)));
    q.addBindValue(sqlText(qs(run.sweep_setting)));
    q.addBindValue(std::isfinite(run.sweep_value) ? run.sweep_value : 0.0);
    q.addBindValue(qs((environment.is_object() ? environment : oj::object()).dump()));
    q.addBindValue(sqlText(qs(requests_csv(one))));
    q.addBindValue(sqlText(qs(steps_csv(one))));
    q.addBindValue(sqlText(importedFrom));
    if (!q.exec()) {
        error_ = tr("Benchmark runs: cannot store the run \"%1\": %2")
                     .arg(qs(run.name), q.lastError().text().simplified());
        return std::nullopt;
    }
    const qint64 id = q.lastInsertId().toLongLong();
    if (groupId <= 0) {
        QSqlQuery g(db_.connection());
        g.prepare(QStringLiteral("UPDATE bench_runs SET group_id = id WHERE id = ?"));
        g.addBindValue(id);
        if (!g.exec()) {
            error_ = tr("Benchmark runs: cannot store the run \"%1\": %2")
                         .arg(qs(run.name), g.lastError().text().simplified());
            return std::nullopt;
        }
    }
    return id;
}

std::optional<QList<qint64>> BenchStore::addReport(const BenchReport& report,
                                                   const QString& importedFrom) {
    if (report.runs.empty()) {
        error_ = tr("Benchmark runs: the report holds no runs");
        return std::nullopt;
    }
    QSqlDatabase db = db_.connection();
    if (!db.transaction()) {
        error_ = tr("Benchmark runs: %1").arg(db.lastError().text().simplified());
        return std::nullopt;
    }
    QList<qint64> ids;
    for (const BenchRun& run : report.runs) {
        const auto id =
            insertRun(run, report.environment, ids.isEmpty() ? 0 : ids.first(), importedFrom);
        if (!id) {
            db.rollback();
            return std::nullopt;
        }
        ids.append(*id);
    }
    if (!db.commit()) {
        error_ = tr("Benchmark runs: %1").arg(db.lastError().text().simplified());
        db.rollback();
        return std::nullopt;
    }
    return ids;
}

QList<BenchRunEntry> BenchStore::runs() {
    QList<BenchRunEntry> out;
    QSqlQuery q(db_.connection());
    q.setForwardOnly(true);
    if (!q.exec(QStringLiteral("SELECT %1 FROM bench_runs ORDER BY created_at DESC, id DESC")
                    .arg(QLatin1String(kColumns)))) {
        error_ = tr("Benchmark runs: %1").arg(q.lastError().text().simplified());
        return out;
    }
    while (q.next())
        out.append(readEntry(q));
    return out;
}

std::optional<StoredBenchRun> BenchStore::run(qint64 id) {
    QSqlQuery q(db_.connection());
    q.setForwardOnly(true);
    q.prepare(
        QStringLiteral("SELECT %1 FROM bench_runs WHERE id = ?").arg(QLatin1String(kColumns)));
    q.addBindValue(id);
    if (!q.exec()) {
        error_ = tr("Benchmark runs: %1").arg(q.lastError().text().simplified());
        return std::nullopt;
    }
    if (!q.next()) {
        error_ = tr("Benchmark runs: there is no run %1").arg(id);
        return std::nullopt;
    }
    auto stored = readRun(q);
    if (!stored) {
        error_ = tr("Benchmark run %1 is damaged: %2").arg(id).arg(qs(stored.message()));
        return std::nullopt;
    }
    return std::move(*stored);
}

bool BenchStore::renameRun(qint64 id, const QString& name) {
    const QString trimmed = name.trimmed();
    if (trimmed.isEmpty()) {
        error_ = tr("Benchmark runs: a run needs a name");
        return false;
    }
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("UPDATE bench_runs SET name = ? WHERE id = ?"));
    q.addBindValue(trimmed);
    q.addBindValue(id);
    if (!q.exec()) {
        error_ = tr("Benchmark runs: %1").arg(q.lastError().text().simplified());
        return false;
    }
    if (q.numRowsAffected() == 0) {
        error_ = tr("Benchmark runs: there is no run %1").arg(id);
        return false;
    }
    return true;
}

bool BenchStore::deleteRun(qint64 id) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("DELETE FROM bench_runs WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) {
        error_ = tr("Benchmark runs: %1").arg(q.lastError().text().simplified());
        return false;
    }
    if (q.numRowsAffected() == 0) {
        error_ = tr("Benchmark runs: there is no run %1").arg(id);
        return false;
    }
    return true;
}

std::optional<BenchReport> BenchStore::report(const QList<qint64>& ids, const QString& title) {
    if (ids.isEmpty()) {
        error_ = tr("Benchmark runs: no runs chosen");
        return std::nullopt;
    }
    BenchReport out;
    out.title = title.toStdString();
    for (qint64 id : ids) {
        auto stored = run(id);
        if (!stored)
            return std::nullopt;
        if (out.runs.empty())
            out.environment = std::move(stored->environment);
        out.runs.push_back(std::move(stored->run));
    }
    return out;
}

} // namespace llmwb
