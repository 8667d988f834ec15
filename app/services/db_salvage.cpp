#include "app/services/db_salvage.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QUrl>
#include <QVariant>
#include <utility>
#include <vector>

#include "app/services/database.h"

namespace llmwb {

namespace {

QAtomicInteger<quint64> g_salvageCounter = 0;

// The tables copied, parents first. The FTS index and schema_version are made by the new
// database; sqlite_sequence follows the ids inserted.
const char* const kTables[] = {"conversations", "messages", "message_versions", "presets",
                               "bench_runs"};
constexpr qint64 kChunk = 256; // rowids per range read

// A read-only connection to the damaged file (mode=ro reads its WAL too; immutable=1 where the
// WAL index cannot be opened).
class SourceConnection {
  public:
    explicit SourceConnection(const QString& path)
        : name_(QStringLiteral("llmwb-salvage-%1").arg(++g_salvageCounter)) {
        for (const char* mode : {"mode=ro", "immutable=1"}) {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name_);
            QUrl url = QUrl::fromLocalFile(QFileInfo(path).absoluteFilePath());
            url.setQuery(QLatin1String(mode));
            db.setDatabaseName(url.toString(QUrl::FullyEncoded));
            db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_URI;QSQLITE_OPEN_READONLY"));
            if (db.open()) {
                QSqlQuery q(db);
                if (q.exec(QStringLiteral("SELECT name FROM sqlite_master WHERE type='table'"))) {
                    while (q.next())
                        tables_.insert(q.value(0).toString());
                    if (!q.lastError().isValid()) {
                        ok_ = true;
                        return;
                    }
                }
                error_ = q.lastError().text();
                q = QSqlQuery();
                db.close();
            } else {
                error_ = db.lastError().text();
            }
            db = QSqlDatabase();
            QSqlDatabase::removeDatabase(name_);
        }
    }
    ~SourceConnection() {
        if (!QSqlDatabase::contains(name_))
            return;
        {
            QSqlDatabase db = QSqlDatabase::database(name_, false);
            db.close();
        }
        QSqlDatabase::removeDatabase(name_);
    }
    SourceConnection(const SourceConnection&) = delete;
    SourceConnection& operator=(const SourceConnection&) = delete;

    bool ok() const { return ok_; }
    QString error() const { return error_; }
    bool hasTable(const QString& t) const { return tables_.contains(t); }
    QSqlDatabase db() const { return QSqlDatabase::database(name_, false); }

  private:
    QString name_;
    QSet<QString> tables_;
    QString error_;
    bool ok_ = false;
};

QStringList columnsOf(const QSqlDatabase& db, const QString& table) {
    QStringList cols;
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("PRAGMA table_info(%1)").arg(table)))
        return cols;
    while (q.next())
        cols << q.value(1).toString();
    return cols;
}

// The readable rowid span of a table: min/max when those pages read, else 1 .. what
// sqlite_sequence says (or a generous default).
std::pair<qint64, qint64> rowidSpan(const QSqlDatabase& db, const QString& table) {
    QSqlQuery q(db);
    if (q.exec(QStringLiteral("SELECT min(rowid), max(rowid) FROM %1").arg(table)) && q.next() &&
        !q.lastError().isValid()) {
        if (q.value(0).isNull())
            return {1, 0}; // empty (or the first page reads as empty)
        return {q.value(0).toLongLong(), q.value(1).toLongLong()};
    }
    qint64 hi = 1 << 20;
    QSqlQuery s(db);
    if (s.exec(QStringLiteral("SELECT seq FROM sqlite_sequence WHERE name = '%1'").arg(table)) &&
        s.next())
        hi = std::max<qint64>(1, s.value(0).toLongLong());
    return {1, hi};
}

struct Row {
    qint64 rowid;
    QVariantList values;
};

// The rows of rowids lo..hi, or false when any page on the way is unreadable.
bool readRange(const QSqlDatabase& db, const QString& table, const QString& columns, qint64 lo,
               qint64 hi, std::vector<Row>& out) {
    out.clear();
    QSqlQuery q(db);
    q.setForwardOnly(true);
    if (!q.prepare(QStringLiteral("SELECT rowid, %1 FROM %2 WHERE rowid BETWEEN ? AND ? "
                                  "ORDER BY rowid")
                       .arg(columns, table)))
        return false;
    q.addBindValue(lo);
    q.addBindValue(hi);
    if (!q.exec())
        return false;
    const int n = q.record().count();
    while (q.next()) {
        Row r;
        r.rowid = q.value(0).toLongLong();
        for (int i = 1; i < n; ++i)
            r.values << q.value(i);
        out.push_back(std::move(r));
    }
    return !q.lastError().isValid();
}

} // namespace

qint64 SalvageReport::copied(const QString& table) const {
    for (const SalvageTable& t : tables) {
        if (t.name == table)
            return t.copied;
    }
    return 0;
}

qint64 SalvageReport::unreadable(const QString& table) const {
    for (const SalvageTable& t : tables) {
        if (t.name == table)
            return t.unreadableRows;
    }
    return 0;
}

QString SalvageReport::summary() const {
    if (!ok)
        return DbSalvage::tr("Nothing was salvaged: %1").arg(error);
    QString s = DbSalvage::tr("Recovered %1 conversation(s) and %2 message(s); %3 message(s) "
                              "could not be read.")
                    .arg(copied(QStringLiteral("conversations")))
                    .arg(copied(QStringLiteral("messages")))
                    .arg(unreadable(QStringLiteral("messages")));
    if (placeholderConversations > 0)
        s += QLatin1Char(' ') +
             DbSalvage::tr("%1 conversation(s) whose title was lost are named \"Recovered "
                           "conversation\".")
                 .arg(placeholderConversations);
    for (const SalvageTable& t : tables) {
        if (!t.complete)
            s += QLatin1Char(' ') +
                 DbSalvage::tr("The table %1 could not be read to its end.").arg(t.name);
    }
    if (!damagedPath.isEmpty())
        s += QLatin1Char(' ') + DbSalvage::tr("The damaged file is kept as %1.")
                                    .arg(QDir::toNativeSeparators(damagedPath));
    return s;
}

QString DbSalvage::damagedName(const QString& path) {
    const QString base = path + QStringLiteral(".damaged-") +
                         QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    QString name = base;
    for (int i = 2; QFileInfo::exists(name) || QFileInfo::exists(name + QStringLiteral("-wal"));
         ++i)
        name = base + QStringLiteral("-%1").arg(i);
    return name;
}

SalvageReport DbSalvage::copy(const QString& sourcePath, const QString& destPath) {
    SalvageReport report;
    if (QFileInfo::exists(destPath)) {
        report.error = tr("%1 exists already").arg(QDir::toNativeSeparators(destPath));
        return report;
    }
    SourceConnection src(sourcePath);
    if (!src.ok()) {
        report.error =
            tr("the damaged file cannot be read at all (%1)").arg(src.error().simplified());
        return report;
    }
    Database dest(destPath);
    if (!dest.open()) {
        report.error = dest.errorString();
        return report;
    }
    QSqlDatabase out = dest.connection();
    if (!out.transaction()) {
        report.error = out.lastError().text();
        return report;
    }
    QSet<qint64> conversations; // ids present in the new database
    QSqlQuery placeholder(out);
    placeholder.prepare(QStringLiteral("INSERT OR IGNORE INTO conversations(id, title, "
                                       "created_at, updated_at) VALUES (?, ?, ?, ?)"));
    for (const char* tableName : kTables) {
        const QString table = QLatin1String(tableName);
        SalvageTable result;
        result.name = table;
        if (!src.hasTable(table)) { // an older schema: nothing to copy
            report.tables << result;
            continue;
        }
        const QStringList destCols = columnsOf(out, table);
        const QStringList srcCols = columnsOf(src.db(), table);
        QStringList cols;
        for (const QString& c : destCols) {
            if (srcCols.contains(c))
                cols << c;
        }
        if (cols.isEmpty()) {
            result.complete = false;
            report.tables << result;
            continue;
        }
        const int idCol = int(cols.indexOf(QStringLiteral("id")));
        const int convCol = int(cols.indexOf(QStringLiteral("conversation_id")));
        const int createdCol = int(cols.indexOf(QStringLiteral("created_at")));
        const bool needsConversation = convCol >= 0;
        QStringList marks;
        for (int i = 0; i < cols.size(); ++i)
            marks << QStringLiteral("?");
        QSqlQuery insert(out);
        insert.prepare(QStringLiteral("INSERT OR IGNORE INTO %1(%2) VALUES (%3)")
                           .arg(table, cols.join(QLatin1Char(',')), marks.join(QLatin1Char(','))));
        const QString colList = cols.join(QLatin1Char(','));

        const auto [lo, hi] = rowidSpan(src.db(), table);
        qint64 queries = 0;
        // Ranges still to read, as a stack (no recursion): a failed range is split in halves.
        std::vector<std::pair<qint64, qint64>> todo;
        for (qint64 end = hi; end >= lo;) {
            const qint64 begin = std::max(lo, end - kChunk + 1);
            todo.emplace_back(begin, end);
            if (begin == lo)
                break;
            end = begin - 1;
        }
        std::vector<Row> rows;
        while (!todo.empty()) {
            if (queries >= kMaxQueriesPerTable) {
                result.complete = false;
                break;
            }
            const auto [a, b] = todo.back();
            todo.pop_back();
            ++queries;
            if (!readRange(src.db(), table, colList, a, b, rows)) {
                if (a == b) {
                    ++result.unreadableRows;
                } else {
                    const qint64 mid = a + (b - a) / 2;
                    todo.emplace_back(mid + 1, b); // the lower half is read first
                    todo.emplace_back(a, mid);
                }
                continue;
            }
            for (const Row& r : rows) {
                if (needsConversation) {
                    const qint64 cid = r.values.at(convCol).toLongLong();
                    if (!conversations.contains(cid)) {
                        const QVariant created =
                            createdCol >= 0 ? r.values.at(createdCol) : QVariant(qint64(0));
                        placeholder.addBindValue(cid);
                        placeholder.addBindValue(tr("Recovered conversation %1").arg(cid));
                        placeholder.addBindValue(created);
                        placeholder.addBindValue(created);
                        if (placeholder.exec() && placeholder.numRowsAffected() == 1)
                            ++report.placeholderConversations;
                        conversations.insert(cid);
                    }
                }
                for (const QVariant& v : r.values)
                    insert.addBindValue(v);
                if (insert.exec() && insert.numRowsAffected() == 1) {
                    ++result.copied;
                    if (table == QLatin1String("conversations") && idCol >= 0)
                        conversations.insert(r.values.at(idCol).toLongLong());
                } else {
                    ++result.skippedRows; // refused by a constraint (OR IGNORE) or unwritable
                }
            }
        }
        report.queries += queries;
        report.tables << result;
    }
    if (!out.commit()) {
        report.error = out.lastError().text();
        out.rollback();
        return report;
    }
    report.ok = true;
    return report;
}

SalvageReport DbSalvage::salvage(const QString& path) {
    SalvageReport report;
    const QString damaged = damagedName(path);
    const QStringList suffixes = {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")};
    QStringList moved;
    for (const QString& suffix : suffixes) {
        if (!QFileInfo::exists(path + suffix))
            continue;
        if (!QFile::rename(path + suffix, damaged + suffix)) {
            for (const QString& m : std::as_const(moved)) // put back what was moved
                QFile::rename(damaged + m, path + m);
            report.error = tr("cannot rename %1 to %2")
                               .arg(QDir::toNativeSeparators(path + suffix),
                                    QDir::toNativeSeparators(damaged + suffix));
            return report;
        }
        moved << suffix;
    }
    const QString temp = path + QStringLiteral(".salvage");
    for (const QString& suffix : suffixes)
        QFile::remove(temp + suffix);
    report = copy(damaged, temp);
    if (report.ok && !QFile::rename(temp, path)) {
        report.ok = false;
        report.error = tr("cannot rename %1 to %2")
                           .arg(QDir::toNativeSeparators(temp), QDir::toNativeSeparators(path));
    }
    if (!report.ok) {
        for (const QString& suffix : suffixes)
            QFile::remove(temp + suffix);
        for (const QString& m : std::as_const(moved))
            QFile::rename(damaged + m, path + m);
        return report;
    }
    // Reading the damaged file made an empty WAL and its index beside it: not part of it.
    if (!moved.contains(QStringLiteral("-wal")) &&
        QFileInfo(damaged + QStringLiteral("-wal")).size() == 0) {
        QFile::remove(damaged + QStringLiteral("-wal"));
        if (!moved.contains(QStringLiteral("-shm")))
            QFile::remove(damaged + QStringLiteral("-shm"));
    }
    report.damagedPath = damaged;
    return report;
}

} // namespace llmwb
