#include "app/services/preset_store.h"

#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include "app/services/database.h"

namespace llmwb {

namespace {

SettingsPreset readPreset(const QSqlQuery& q) {
    SettingsPreset p;
    p.id = q.value(0).toLongLong();
    p.name = q.value(1).toString();
    const QJsonDocument doc = QJsonDocument::fromJson(q.value(2).toString().toUtf8());
    p.settings = doc.isObject() ? doc.object() : QJsonObject();
    p.created = QDateTime::fromMSecsSinceEpoch(q.value(3).toLongLong());
    return p;
}

} // namespace

PresetStore::PresetStore(Database& db) : db_(db) {}

bool PresetStore::fail(const QString& detail) {
    error_ = tr("Presets: %1").arg(detail.simplified());
    return false;
}

QList<SettingsPreset> PresetStore::presets() {
    QList<SettingsPreset> out;
    QSqlQuery q(db_.connection());
    if (!q.exec(QStringLiteral("SELECT id, name, settings, created_at FROM presets "
                               "ORDER BY name COLLATE NOCASE, id"))) {
        fail(q.lastError().text());
        return out;
    }
    while (q.next())
        out << readPreset(q);
    return out;
}

std::optional<SettingsPreset> PresetStore::preset(const QString& name) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("SELECT id, name, settings, created_at FROM presets WHERE name = ?"));
    q.addBindValue(name.trimmed());
    if (!q.exec()) {
        fail(q.lastError().text());
        return std::nullopt;
    }
    if (!q.next())
        return std::nullopt;
    return readPreset(q);
}

std::optional<SettingsPreset> PresetStore::savePreset(const QString& name,
                                                      const QJsonObject& settings) {
    const QString trimmed = name.trimmed();
    if (trimmed.isEmpty()) {
        fail(tr("a preset needs a name"));
        return std::nullopt;
    }
    QSqlDatabase db = db_.connection();
    if (!db.transaction()) {
        fail(db.lastError().text());
        return std::nullopt;
    }
    const QString json = QString::fromUtf8(QJsonDocument(settings).toJson(QJsonDocument::Compact));
    QSqlQuery q(db);
    q.prepare(QStringLiteral("UPDATE presets SET settings = ? WHERE name = ?"));
    q.addBindValue(json);
    q.addBindValue(trimmed);
    bool ok = q.exec();
    if (ok && q.numRowsAffected() == 0) {
        q.prepare(QStringLiteral("INSERT INTO presets(name, settings, created_at) "
                                 "VALUES (?, ?, ?)"));
        q.addBindValue(trimmed);
        q.addBindValue(json);
        q.addBindValue(QDateTime::currentMSecsSinceEpoch());
        ok = q.exec();
    }
    if (!ok) {
        const QString error = q.lastError().text();
        db.rollback();
        fail(error);
        return std::nullopt;
    }
    if (!db.commit()) {
        const QString error = db.lastError().text();
        db.rollback();
        fail(error);
        return std::nullopt;
    }
    return preset(trimmed);
}

bool PresetStore::renamePreset(const QString& from, const QString& to) {
    const QString target = to.trimmed();
    if (target.isEmpty())
        return fail(tr("a preset needs a name"));
    if (target != from.trimmed() && preset(target))
        return fail(tr("a preset named \"%1\" already exists").arg(target));
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("UPDATE presets SET name = ? WHERE name = ?"));
    q.addBindValue(target);
    q.addBindValue(from.trimmed());
    if (!q.exec())
        return fail(q.lastError().text());
    if (q.numRowsAffected() == 0)
        return fail(tr("there is no preset named \"%1\"").arg(from.trimmed()));
    return true;
}

bool PresetStore::deletePreset(const QString& name) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("DELETE FROM presets WHERE name = ?"));
    q.addBindValue(name.trimmed());
    if (!q.exec())
        return fail(q.lastError().text());
    if (q.numRowsAffected() == 0)
        return fail(tr("there is no preset named \"%1\"").arg(name.trimmed()));
    return true;
}

} // namespace llmwb
