// The chat database: one SQLite file (QSQLITE) with a schema version table and ordered
// migrations, opened with WAL, foreign keys and synchronous=NORMAL. A Database owns one named
// Qt Sql connection; it is used from the thread that opened it.
#pragma once

#include <QCoreApplication>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

namespace llmwb {

// A value for a NOT NULL text column: the stores keep '' for "none", and a null QString would
// bind as SQL NULL.
inline QString sqlText(const QString& s) {
    return s.isNull() ? QStringLiteral("") : s;
}

class Database {
    Q_DECLARE_TR_FUNCTIONS(llmwb::Database)

  public:
    // Schema versions: 1 = conversations + messages; 2 = presets, bench_runs, FTS5 search;
    // 3 = messages.finish_reason; 4 = messages.error; 5 = message_versions; 6 = bench_runs as
    // BenchStore keeps them (group, policy, status, sweep, environment, CSV rows, import source);
    // 7 = think_runs (ThinkStore).
    static constexpr int kLatestVersion = 7;

    // filePath empty: defaultPath() (QStandardPaths::AppDataLocation/llmwb.sqlite).
    explicit Database(QString filePath = {});
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    // What kind of failure the last open() met (the app offers a choice for some of them).
    enum class Problem {
        None,
        ReadOnly, // the file, its folder or the file system cannot be written
        Damaged,  // SQLite says the file is malformed or not a database
        Other,
    };

    // Opens (creating the file and its directory when needed) and migrates up to
    // targetVersion (tests use a lower target to build old schemas). On failure returns false;
    // errorString() says why in one line, naming the file, and problem() what kind of failure.
    // A file (or folder: WAL needs its journal files there) that cannot be written fails here,
    // not at the first send. Never crashes on a bad file.
    bool open(int targetVersion = kLatestVersion);
    // Opens an existing database of the current schema for reading only (browsing old chats
    // on a read-only file or file system): no migration, no pragma that writes. Every write
    // fails. Falls back to SQLite's immutable mode where the folder cannot hold the WAL index.
    bool openReadOnly();
    void close();
    bool isOpen() const { return open_; }
    bool isReadOnly() const { return readOnly_; }
    Problem problem() const { return problem_; }
    // Why filePath cannot be written ("" when it can): the file is read-only, or its folder
    // (where SQLite makes the -wal and -shm files) is not writable, with the system's reason
    // (e.g. "Read-only file system").
    static QString writeProblem(const QString& filePath);

    QString errorString() const { return error_; }
    QString filePath() const { return path_; }
    QSqlDatabase connection() const;
    int schemaVersion() const; // 0 when empty or unreadable
    QString integrityCheck();  // "ok" or SQLite's findings (or the error)
    // PRAGMA quick_check (what the app runs at start: O(size), no index cross-checks): "ok" or
    // SQLite's findings, at most maxLines of them (or the error).
    QString quickCheck(int maxLines = 20);

    static QString defaultPath();

  private:
    bool exec(const QString& sql);
    bool applyPragmas();
    bool migrate(int targetVersion);
    bool fail(const QString& what, const QString& detail);
    bool openConnection(const QString& name, const QString& options);
    void classify(const QString& sqliteError);

    QString path_;
    QString connectionName_;
    QString error_;
    bool open_ = false;
    bool readOnly_ = false;
    Problem problem_ = Problem::None;
};

// The SQL of each migration, in order (index 0 = version 1). Each statement is one element.
const QList<QStringList>& databaseMigrations();

} // namespace llmwb
