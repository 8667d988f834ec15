// The chat database: one SQLite file (QSQLITE) with a schema version table and ordered
// migrations, opened with WAL, foreign keys and synchronous=NORMAL. A Database owns one named
// Qt Sql connection; it is used from the thread that opened it.
#pragma once

#include <QCoreApplication>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

namespace llmwb {

class Database {
    Q_DECLARE_TR_FUNCTIONS(llmwb::Database)

  public:
    // Schema versions: 1 = conversations + messages; 2 = presets, bench_runs, FTS5 search;
    // 3 = messages.finish_reason; 4 = messages.error; 5 = message_versions; 6 = bench_runs as
    // BenchStore keeps them (group, policy, status, sweep, environment, CSV rows, import source).
    static constexpr int kLatestVersion = 6;

    // filePath empty: defaultPath() (QStandardPaths::AppDataLocation/llmwb.sqlite).
    explicit Database(QString filePath = {});
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    // Opens (creating the file and its directory when needed) and migrates up to
    // targetVersion (tests use a lower target to build old schemas). On failure returns false;
    // errorString() says why in one line, naming the file. Never crashes on a bad file.
    bool open(int targetVersion = kLatestVersion);
    void close();
    bool isOpen() const { return open_; }

    QString errorString() const { return error_; }
    QString filePath() const { return path_; }
    QSqlDatabase connection() const;
    int schemaVersion() const; // 0 when empty or unreadable
    QString integrityCheck();  // "ok" or SQLite's findings (or the error)

    static QString defaultPath();

  private:
    bool exec(const QString& sql);
    bool applyPragmas();
    bool migrate(int targetVersion);
    bool fail(const QString& what, const QString& detail);

    QString path_;
    QString connectionName_;
    QString error_;
    bool open_ = false;
};

// The SQL of each migration, in order (index 0 = version 1). Each statement is one element.
const QList<QStringList>& databaseMigrations();

} // namespace llmwb
