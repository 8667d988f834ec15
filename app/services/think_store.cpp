#include "app/services/think_store.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include "app/report/report_text.h"
#include "app/services/database.h"
#include "engine/serving/think_ladder.h"

namespace llmwb {

namespace {

QString thinkStoreText(const nlohmann::ordered_json& run, const char* key) {
    const auto it = run.find(key);
    return it != run.end() && it->is_string() ? QString::fromStdString(it->get<std::string>())
                                              : QString();
}

} // namespace

ThinkStore::ThinkStore(Database& db) : db_(db) {}

std::optional<qint64> ThinkStore::addRun(const nlohmann::ordered_json& run) {
    if (!run.is_object()) {
        error_ = tr("Think harder runs: the run is not a JSON object");
        return std::nullopt;
    }
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("INSERT INTO think_runs(name, model, task_set, ladder, status, run, "
                             "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(thinkStoreText(run, "name"));
    q.addBindValue(thinkStoreText(run, "model"));
    q.addBindValue(thinkStoreText(run, "task_set"));
    q.addBindValue(thinkStoreText(run, "ladder"));
    const QString status = thinkStoreText(run, "status");
    q.addBindValue(status.isEmpty() ? QStringLiteral("completed") : status);
    q.addBindValue(QString::fromStdString(run.dump()));
    q.addBindValue(QDateTime::currentMSecsSinceEpoch());
    if (!q.exec()) {
        error_ = tr("Think harder runs: cannot store the run \"%1\": %2")
                     .arg(thinkStoreText(run, "name"), q.lastError().text().simplified());
        return std::nullopt;
    }
    return q.lastInsertId().toLongLong();
}

QList<ThinkRunEntry> ThinkStore::runs() {
    QList<ThinkRunEntry> out;
    QSqlQuery q(db_.connection());
    if (!q.exec(QStringLiteral("SELECT id, name, model, task_set, ladder, status, created_at "
                               "FROM think_runs ORDER BY id DESC"))) {
        error_ = tr("Think harder runs: %1").arg(q.lastError().text().simplified());
        return out;
    }
    while (q.next()) {
        ThinkRunEntry e;
        e.id = q.value(0).toLongLong();
        e.name = q.value(1).toString();
        e.model = q.value(2).toString();
        e.taskSet = q.value(3).toString();
        e.ladder = q.value(4).toString();
        e.status = q.value(5).toString();
        e.createdAt = QDateTime::fromMSecsSinceEpoch(q.value(6).toLongLong());
        out << e;
    }
    return out;
}

std::optional<nlohmann::ordered_json> ThinkStore::run(qint64 id) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("SELECT run FROM think_runs WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) {
        error_ = tr("Think harder runs: no run %1").arg(id);
        return std::nullopt;
    }
    const std::string where = "think run " + std::to_string(id);
    auto j = report_detail::parse_json_text(q.value(0).toString().toStdString(), where);
    if (!j) {
        error_ = QString::fromStdString(j.message());
        return std::nullopt;
    }
    const auto rungs = j->is_object() ? j->find("rungs") : j->end();
    if (!j->is_object() || rungs == j->end() || !rungs->is_array()) {
        error_ = tr("Think harder runs: run %1 has no rungs").arg(id);
        return std::nullopt;
    }
    for (size_t k = 0; k < rungs->size(); ++k) {
        // parse_think_rung_json checks a plain json; the ordered one converts.
        const nlohmann::json plain = (*rungs)[k];
        if (auto r = parse_think_rung_json(plain, where + " rung " + std::to_string(k)); !r) {
            error_ = QString::fromStdString(r.message());
            return std::nullopt;
        }
    }
    return *j;
}

bool ThinkStore::deleteRun(qint64 id) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("DELETE FROM think_runs WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) {
        error_ = tr("Think harder runs: %1").arg(q.lastError().text().simplified());
        return false;
    }
    return true;
}

} // namespace llmwb
