// Salvage of a damaged chat database (SQLite 3.40 has no recover API): rows are read by rowid
// ranges from the damaged file, opened read-only; a range that fails (a corrupt page) is split
// in halves down to single rowids, so only the rows on unreadable pages are lost. What reads is
// copied, with the same ids, into a fresh database of the current schema (the search index is
// rebuilt by its triggers). Messages whose conversation row was lost get a placeholder
// conversation. The damaged file is never deleted: salvageDatabase() renames it (and its WAL)
// with a timestamp and puts the salvaged database in its place.
#pragma once

#include <QCoreApplication>
#include <QList>
#include <QString>

namespace llmwb {

struct SalvageTable {
    QString name;
    qint64 copied = 0;         // rows copied
    qint64 unreadableRows = 0; // single rowids that failed to read
    qint64 skippedRows = 0;    // read but refused by the new schema (NOT NULL, ...)
    bool complete = true;      // false: the table could not be read (or the query budget ran out)
};

struct SalvageReport {
    bool ok = false;
    QString error;       // when !ok: why nothing was changed
    QString damagedPath; // salvageDatabase(): where the damaged file now is
    QList<SalvageTable> tables;
    qint64 placeholderConversations = 0;
    qint64 queries = 0; // range reads issued
    qint64 copied(const QString& table) const;
    qint64 unreadable(const QString& table) const;
    QString summary() const; // one paragraph for the user
};

class DbSalvage {
    Q_DECLARE_TR_FUNCTIONS(llmwb::DbSalvage)

  public:
    // Range reads allowed per table before giving up on the rest of it.
    static constexpr qint64 kMaxQueriesPerTable = 200000;

    // Copies what is readable of sourcePath into a new database at destPath (which must not
    // exist). sourcePath is only read.
    static SalvageReport copy(const QString& sourcePath, const QString& destPath);
    // Renames path (and -wal, -shm) to "<path>.damaged-YYYYMMDD-HHMMSS", salvages it into a
    // new database at path. On failure the original is put back under its name.
    static SalvageReport salvage(const QString& path);
    // The name the damaged file gets (free: an existing name gets "-2", "-3", ...).
    static QString damagedName(const QString& path);
};

} // namespace llmwb
