// Benchmark runs in the chat database (table bench_runs, schema v6): each run with its settings,
// figures (its results.json line), environment, and its per-request and per-step rows (the CSV
// text of report_files, so that a stored run and a report hold the very same values). Runs made
// together (a sweep, a policy comparison, one imported report) share a group. Imported runs keep
// the name of the report they came from. Used on the thread that opened the Database.
#pragma once

#include <QCoreApplication>
#include <QDateTime>
#include <QList>
#include <QString>
#include <optional>

#include "app/report/bench_report.h"

namespace llmwb {

class Database;

struct BenchRunEntry { // one line of the runs list
    qint64 id = 0;
    qint64 groupId = 0; // the first run of its group
    QString name, model, policy, status, error;
    QString sweepSetting;
    double sweepValue = 0;
    double outputThroughput = 0, requestThroughput = 0;
    double meanTtftMs = 0, meanTpotMs = 0;
    int completed = 0, numPrompts = 0;
    QString importedFrom; // the report file it came from ("" = run here)
    QDateTime createdAt;
};

struct StoredBenchRun {
    BenchRunEntry entry;
    BenchRun run;
    nlohmann::ordered_json environment;
};

class BenchStore {
    Q_DECLARE_TR_FUNCTIONS(llmwb::BenchStore)

  public:
    explicit BenchStore(Database& db);

    // Stores a run with its rows in one transaction; groupId 0 starts a new group (the run's
    // own id). Returns the run's id, nullopt on error (lastError()).
    std::optional<qint64> addRun(const BenchRun& run, const nlohmann::ordered_json& environment,
                                 qint64 groupId = 0, const QString& importedFrom = {});
    // Every run of a report in one transaction (one group): all stored or none. Returns the
    // ids in the report's order.
    std::optional<QList<qint64>> addReport(const BenchReport& report, const QString& importedFrom);
    QList<BenchRunEntry> runs(); // newest first
    // A stored run read back (its rows parsed again; a damaged row is an error naming the run).
    std::optional<StoredBenchRun> run(qint64 id);
    bool renameRun(qint64 id, const QString& name);
    bool deleteRun(qint64 id);
    // The runs as one report (environment: the first run's), for export.
    std::optional<BenchReport> report(const QList<qint64>& ids, const QString& title);

    QString lastError() const { return error_; }

  private:
    // One INSERT (and the group's id when it starts one), inside the caller's transaction.
    std::optional<qint64> insertRun(const BenchRun& run, const nlohmann::ordered_json& environment,
                                    qint64 groupId, const QString& importedFrom);

    Database& db_;
    QString error_;
};

} // namespace llmwb
