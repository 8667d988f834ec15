// Think harder runs in the chat database (table think_runs, schema v7), beside the benchmark
// runs: each run's think.json entry (think_types.h) and the columns its list shows. A stored run
// is read back checked (the database is a file on disk: anything may be in it). Used on the
// thread that opened the Database.
#pragma once

#include <QCoreApplication>
#include <QDateTime>
#include <QList>
#include <QString>
#include <optional>

#include <nlohmann/json.hpp>

namespace llmwb {

class Database;

struct ThinkRunEntry { // one line of the runs list
    qint64 id = 0;
    QString name, model, taskSet, ladder, status;
    QDateTime createdAt;
};

class ThinkStore {
    Q_DECLARE_TR_FUNCTIONS(llmwb::ThinkStore)

  public:
    explicit ThinkStore(Database& db);

    // Returns the run's id, nullopt on error (lastError()).
    std::optional<qint64> addRun(const nlohmann::ordered_json& run);
    QList<ThinkRunEntry> runs(); // newest first
    // The run's JSON, each rung checked by parse_think_rung_json (an error names the run).
    std::optional<nlohmann::ordered_json> run(qint64 id);
    bool deleteRun(qint64 id);

    QString lastError() const { return error_; }

  private:
    Database& db_;
    QString error_;
};

} // namespace llmwb
