#include "app/services/database.h"

#include <QAtomicInteger>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QUrl>
#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace llmwb {

namespace {

QAtomicInteger<quint64> g_connectionCounter = 0;

// Ids are AUTOINCREMENT so that a deleted message's id is never reused (the UI and search
// hits refer to messages by id).
QStringList migrationV1() {
    return {
        QStringLiteral("CREATE TABLE conversations ("
                       " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                       " title TEXT NOT NULL DEFAULT '',"
                       " system_prompt TEXT NOT NULL DEFAULT '',"
                       " sampling TEXT NOT NULL DEFAULT '{}',"
                       " model TEXT NOT NULL DEFAULT '',"
                       " created_at INTEGER NOT NULL,"
                       " updated_at INTEGER NOT NULL)"),
        QStringLiteral("CREATE TABLE messages ("
                       " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                       " conversation_id INTEGER NOT NULL"
                       "   REFERENCES conversations(id) ON DELETE CASCADE,"
                       " role TEXT NOT NULL,"
                       " content TEXT NOT NULL DEFAULT '',"
                       " model TEXT NOT NULL DEFAULT '',"
                       " sampling TEXT NOT NULL DEFAULT '{}',"
                       " prompt_tokens INTEGER,"
                       " completion_tokens INTEGER,"
                       " ttft_ms REAL,"
                       " tokens_per_s REAL,"
                       " created_at INTEGER NOT NULL,"
                       " state TEXT NOT NULL DEFAULT 'complete')"),
        QStringLiteral("CREATE INDEX messages_by_conversation ON messages(conversation_id, id)"),
        QStringLiteral("CREATE INDEX conversations_by_update ON conversations(updated_at)"),
    };
}

QStringList migrationV2() {
    return {
        QStringLiteral("CREATE TABLE presets ("
                       " id INTEGER PRIMARY KEY,"
                       " name TEXT NOT NULL UNIQUE,"
                       " settings TEXT NOT NULL DEFAULT '{}',"
                       " created_at INTEGER NOT NULL)"),
        QStringLiteral("CREATE TABLE bench_runs ("
                       " id INTEGER PRIMARY KEY,"
                       " name TEXT NOT NULL DEFAULT '',"
                       " model TEXT NOT NULL DEFAULT '',"
                       " config TEXT NOT NULL DEFAULT '{}',"
                       " results TEXT NOT NULL DEFAULT '{}',"
                       " created_at INTEGER NOT NULL)"),
        // Trigram tokens give substring search in every script (CJK has no spaces between
        // words); terms shorter than three characters are searched with LIKE instead.
        QStringLiteral("CREATE VIRTUAL TABLE messages_fts USING fts5("
                       " content, content='messages', content_rowid='id', tokenize='trigram')"),
        QStringLiteral("CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN"
                       " INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);"
                       " END"),
        QStringLiteral("CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN"
                       " INSERT INTO messages_fts(messages_fts, rowid, content)"
                       "   VALUES ('delete', old.id, old.content);"
                       " END"),
        QStringLiteral(
            "CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN"
            " INSERT INTO messages_fts(messages_fts, rowid, content)"
            "   VALUES ('delete', old.id, old.content);"
            " INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);"
            " END"),
        // Index the messages written under version 1.
        QStringLiteral("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')"),
    };
}

// Why each answer ended ("stop", "length", "abort", later also "context", "kv_pool", "error"; NULL:
// unknown, as for every message written before version 3).
QStringList migrationV3() {
    return {QStringLiteral("ALTER TABLE messages ADD COLUMN finish_reason TEXT")};
}

// The message of a failed answer (NULL: none, and for every message written before version 4).
QStringList migrationV4() {
    return {QStringLiteral("ALTER TABLE messages ADD COLUMN error TEXT")};
}

// Earlier answers kept when an answer is regenerated (flipped through as "< 1/3 >" on the
// answer): the columns of messages plus parent_id, the message the answers reply to. The
// versions of a conversation go with it; those of a deleted message stay until then.
QStringList migrationMessageVersions() {
    return {QStringLiteral("CREATE TABLE message_versions ("
                           " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                           " conversation_id INTEGER NOT NULL"
                           "  REFERENCES conversations(id) ON DELETE CASCADE,"
                           " parent_id INTEGER NOT NULL,"
                           " role TEXT NOT NULL,"
                           " content TEXT NOT NULL DEFAULT '',"
                           " model TEXT NOT NULL DEFAULT '',"
                           " sampling TEXT NOT NULL DEFAULT '{}',"
                           " prompt_tokens INTEGER, completion_tokens INTEGER,"
                           " ttft_ms REAL, tokens_per_s REAL,"
                           " created_at INTEGER NOT NULL,"
                           " state TEXT NOT NULL DEFAULT 'complete',"
                           " finish_reason TEXT)"),
            QStringLiteral(
                "CREATE INDEX message_versions_by_parent ON message_versions(parent_id, id)")};
}

// Benchmark runs as BenchStore keeps them (version 2 made the table; nothing wrote it before 6):
// `config` holds the run's settings, `results` its results.json line; what a report has beside
// it, per run: the group of runs made together (a sweep, a policy comparison, one imported report;
// the id of its first run, NULL for older rows: the run alone), the status and its error, the
// swept setting, environment.json's object, the run's rows of requests.csv and steps.csv, and the
// report file it was imported from ('' = run here). Older rows read as completed runs.
QStringList migrationBenchRuns() {
    return {
        QStringLiteral("ALTER TABLE bench_runs ADD COLUMN group_id INTEGER"),
        QStringLiteral("ALTER TABLE bench_runs ADD COLUMN policy TEXT NOT NULL DEFAULT ''"),
        QStringLiteral(
            "ALTER TABLE bench_runs ADD COLUMN status TEXT NOT NULL DEFAULT 'completed'"),
        QStringLiteral("ALTER TABLE bench_runs ADD COLUMN error TEXT NOT NULL DEFAULT ''"),
        QStringLiteral("ALTER TABLE bench_runs ADD COLUMN sweep_setting TEXT NOT NULL DEFAULT ''"),
        QStringLiteral("ALTER TABLE bench_runs ADD COLUMN sweep_value REAL NOT NULL DEFAULT 0"),
        QStringLiteral("ALTER TABLE bench_runs ADD COLUMN environment TEXT NOT NULL DEFAULT '{}'"),
        QStringLiteral("ALTER TABLE bench_runs ADD COLUMN requests_csv TEXT NOT NULL DEFAULT ''"),
        QStringLiteral("ALTER TABLE bench_runs ADD COLUMN steps_csv TEXT NOT NULL DEFAULT ''"),
        QStringLiteral("ALTER TABLE bench_runs ADD COLUMN imported_from TEXT NOT NULL DEFAULT ''"),
        QStringLiteral("CREATE INDEX bench_runs_by_group ON bench_runs(group_id)"),
    };
}

// Think harder runs (issue 20), stored beside the benchmark runs: each run's think.json entry
// (settings, tasks, rungs with every question's samples and vote) and the columns of its list.
QStringList migrationThinkRuns() {
    return {QStringLiteral("CREATE TABLE think_runs ("
                           " id INTEGER PRIMARY KEY,"
                           " name TEXT NOT NULL,"
                           " model TEXT NOT NULL DEFAULT '',"
                           " task_set TEXT NOT NULL DEFAULT '',"
                           " ladder TEXT NOT NULL DEFAULT '',"
                           " status TEXT NOT NULL DEFAULT 'completed',"
                           " run TEXT NOT NULL,"
                           " created_at INTEGER NOT NULL)")};
}

} // namespace

const QList<QStringList>& databaseMigrations() {
    static const QList<QStringList> migrations = {migrationV1(),
                                                  migrationV2(),
                                                  migrationV3(),
                                                  migrationV4(),
                                                  migrationMessageVersions(),
                                                  migrationBenchRuns(),
                                                  migrationThinkRuns()};
    return migrations;
}

Database::Database(QString filePath)
    : path_(filePath.isEmpty() ? defaultPath() : std::move(filePath)),
      connectionName_(QStringLiteral("llmwb-db-%1").arg(++g_connectionCounter)) {}

Database::~Database() {
    close();
}

QString Database::defaultPath() {
    QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    if (dir.isEmpty())
        dir = QDir::homePath() + QStringLiteral("/.local/share/llm-workbench");
    return dir + QStringLiteral("/llmwb.sqlite");
}

QSqlDatabase Database::connection() const {
    return QSqlDatabase::database(connectionName_, false);
}

bool Database::fail(const QString& what, const QString& detail) {
    error_ = tr("Chat database %1: %2 (%3)")
                 .arg(QDir::toNativeSeparators(path_), what, detail.simplified());
    if (problem_ == Problem::None)
        problem_ = Problem::Other;
    return false;
}

void Database::classify(const QString& sqliteError) {
    const QString e = sqliteError.toLower();
    if (e.contains(QLatin1String("readonly")) || e.contains(QLatin1String("read-only")))
        problem_ = Problem::ReadOnly;
    else if (e.contains(QLatin1String("malformed")) || e.contains(QLatin1String("not a database")))
        problem_ = Problem::Damaged;
}

QString Database::writeProblem(const QString& filePath) {
    const QFileInfo info(filePath);
    const QByteArray file = QFile::encodeName(info.absoluteFilePath());
    const QByteArray dir = QFile::encodeName(info.absolutePath());
    if (info.exists() && ::access(file.constData(), W_OK) != 0)
        return tr("the file cannot be written (%1)").arg(QString::fromLocal8Bit(strerror(errno)));
    if (::access(dir.constData(), W_OK) != 0)
        return tr("its folder %1 cannot be written (%2), and SQLite keeps its journal files "
                  "there")
            .arg(QDir::toNativeSeparators(info.absolutePath()),
                 QString::fromLocal8Bit(strerror(errno)));
    return {};
}

bool Database::openConnection(const QString& name, const QString& options) {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connectionName_);
    db.setDatabaseName(name);
    db.setConnectOptions(options);
    if (!db.open()) {
        const QString detail = db.lastError().text();
        db = QSqlDatabase();
        QSqlDatabase::removeDatabase(connectionName_);
        classify(detail);
        return fail(tr("cannot open"), detail);
    }
    open_ = true;
    return true;
}

bool Database::exec(const QString& sql) {
    QSqlQuery q(connection());
    if (!q.exec(sql)) {
        classify(q.lastError().text());
        return fail(tr("a statement failed"), q.lastError().text());
    }
    return true;
}

bool Database::open(int targetVersion) {
    close();
    error_.clear();
    problem_ = Problem::None;
    if (targetVersion < 1 || targetVersion > kLatestVersion)
        return fail(QStringLiteral("invalid schema version"), QString::number(targetVersion));
    const QFileInfo info(path_);
    if (!QDir().mkpath(info.absolutePath()))
        return fail(tr("cannot create the folder"), info.absolutePath());
    if (info.exists() && !info.isFile())
        return fail(tr("not a file"), path_);
    // A read-only file or file system would open and fail only at the first write.
    if (const QString why = writeProblem(path_); !why.isEmpty()) {
        problem_ = Problem::ReadOnly;
        error_ =
            tr("The chat database %1 is read-only: %2.").arg(QDir::toNativeSeparators(path_), why);
        return false;
    }
    if (!openConnection(path_, QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000")))
        return false;
    if (!applyPragmas() || !migrate(targetVersion)) {
        const QString err = error_;
        const Problem problem = problem_;
        close();
        error_ = err;
        problem_ = problem;
        return false;
    }
    return true;
}

bool Database::openReadOnly() {
    close();
    error_.clear();
    problem_ = Problem::None;
    if (!QFileInfo(path_).isFile())
        return fail(tr("cannot open"), tr("no such file"));
    // mode=ro reads the WAL too, but needs its index (-shm) in the folder; immutable=1 reads
    // the main file alone (a cleanly closed database has everything there).
    for (const char* mode : {"mode=ro", "immutable=1"}) {
        QUrl url = QUrl::fromLocalFile(QFileInfo(path_).absoluteFilePath());
        url.setQuery(QLatin1String(mode));
        if (!openConnection(url.toString(QUrl::FullyEncoded),
                            QStringLiteral("QSQLITE_OPEN_URI;QSQLITE_OPEN_READONLY;"
                                           "QSQLITE_BUSY_TIMEOUT=5000")))
            continue;
        QSqlQuery q(connection());
        if (q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master")) && q.next())
            break;
        const QString detail = q.lastError().text();
        q = QSqlQuery();
        close();
        classify(detail);
        fail(tr("cannot read"), detail);
    }
    if (!open_)
        return false;
    readOnly_ = true;
    error_.clear();
    problem_ = Problem::None;
    if (const int v = schemaVersion(); v != kLatestVersion) {
        close();
        return fail(tr("written by another version of the app; it cannot be upgraded while "
                       "read-only"),
                    QStringLiteral("schema %1, app %2").arg(v).arg(kLatestVersion));
    }
    QSqlQuery(connection()).exec(QStringLiteral("PRAGMA foreign_keys=ON"));
    return true;
}

void Database::close() {
    if (!QSqlDatabase::contains(connectionName_))
        return;
    {
        QSqlDatabase db = QSqlDatabase::database(connectionName_, false);
        if (db.isOpen())
            db.close();
    }
    QSqlDatabase::removeDatabase(connectionName_);
    open_ = false;
    readOnly_ = false;
}

bool Database::applyPragmas() {
    // The first statement that touches the file: a corrupt or foreign file fails here.
    QSqlQuery q(connection());
    if (!q.exec(QStringLiteral("PRAGMA journal_mode=WAL")) || !q.next()) {
        const QString detail = q.lastError().text();
        classify(detail);
        if (problem_ == Problem::ReadOnly)
            return fail(tr("read-only"), detail);
        return fail(tr("not a usable SQLite database"), detail);
    }
    const QString mode = q.value(0).toString().toLower();
    if (mode != QLatin1String("wal"))
        return fail(tr("cannot enable WAL"), mode);
    return exec(QStringLiteral("PRAGMA foreign_keys=ON")) &&
           exec(QStringLiteral("PRAGMA synchronous=NORMAL"));
}

int Database::schemaVersion() const {
    QSqlQuery q(connection());
    if (!q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master WHERE type='table' AND "
                               "name='schema_version'")) ||
        !q.next() || q.value(0).toInt() == 0)
        return 0;
    if (!q.exec(QStringLiteral("SELECT max(version) FROM schema_version")) || !q.next())
        return 0;
    return q.value(0).toInt();
}

bool Database::migrate(int targetVersion) {
    if (!exec(QStringLiteral("CREATE TABLE IF NOT EXISTS schema_version ("
                             " version INTEGER NOT NULL, applied_at INTEGER NOT NULL)")))
        return false;
    const int current = schemaVersion();
    if (current > kLatestVersion)
        return fail(tr("written by a newer version of the app"),
                    QStringLiteral("schema %1 > %2").arg(current).arg(kLatestVersion));
    const auto& migrations = databaseMigrations();
    QSqlDatabase db = connection();
    for (int v = current + 1; v <= targetVersion; ++v) {
        if (!db.transaction())
            return fail(QStringLiteral("BEGIN"), db.lastError().text());
        bool ok = true;
        for (const QString& sql : migrations.at(v - 1)) {
            if (!exec(sql)) {
                ok = false;
                break;
            }
        }
        if (ok) {
            QSqlQuery q(db);
            q.prepare(QStringLiteral("INSERT INTO schema_version(version, applied_at) "
                                     "VALUES (?, strftime('%s','now'))"));
            q.addBindValue(v);
            ok = q.exec() || fail(QStringLiteral("schema_version"), q.lastError().text());
        }
        if (!ok) {
            db.rollback();
            error_ = tr("%1 [migration to %2]").arg(error_).arg(v);
            return false;
        }
        if (!db.commit())
            return fail(QStringLiteral("COMMIT"), db.lastError().text());
    }
    return true;
}

QString Database::quickCheck(int maxLines) {
    QSqlQuery q(connection());
    if (!q.exec(QStringLiteral("PRAGMA quick_check(%1)").arg(std::max(1, maxLines))))
        return q.lastError().text();
    QStringList lines;
    while (q.next())
        lines << q.value(0).toString();
    if (lines.isEmpty())
        return q.lastError().text().isEmpty() ? tr("no answer") : q.lastError().text();
    return lines.join(QLatin1Char('\n'));
}

QString Database::integrityCheck() {
    QSqlQuery q(connection());
    if (!q.exec(QStringLiteral("PRAGMA integrity_check")))
        return q.lastError().text();
    QStringList lines;
    while (q.next())
        lines << q.value(0).toString();
    return lines.join(QLatin1Char('\n'));
}

} // namespace llmwb
