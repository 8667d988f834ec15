#include "app/services/conversation_store.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QVariant>

#include "app/services/database.h"

namespace llmwb {

namespace {

qint64 nowMs() {
    return QDateTime::currentMSecsSinceEpoch();
}

// A message whose completion tokens are counted streamed chunks (an endpoint without usage)
// says so in its stored sampling object.
constexpr const char* kTokenCountSourceKey = "completion_tokens_source";
constexpr const char* kCountedChunks = "streamed_chunks";

QString toJsonText(const QJsonObject& o) {
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

QJsonObject fromJsonText(const QString& text) {
    // Stored JSON is external input (the file may have been edited): anything that is not an
    // object reads as empty.
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8());
    return doc.isObject() ? doc.object() : QJsonObject();
}

QVariant optionalValue(const std::optional<qint64>& v) {
    return v ? QVariant(*v) : QVariant(QMetaType(QMetaType::LongLong));
}
QVariant optionalValue(const std::optional<double>& v) {
    return v ? QVariant(*v) : QVariant(QMetaType(QMetaType::Double));
}

std::optional<qint64> optionalInt(const QVariant& v) {
    if (v.isNull())
        return std::nullopt;
    return v.toLongLong();
}
std::optional<double> optionalDouble(const QVariant& v) {
    if (v.isNull())
        return std::nullopt;
    return v.toDouble();
}

// NULL for an unknown finish reason.
QVariant storedFinishReason(FinishReason r) {
    return r == FinishReason::None ? QVariant(QMetaType(QMetaType::QString))
                                   : QVariant(finishReasonName(r));
}

// NULL for no error; a message is bounded (it is shown in a tooltip and exported).
QVariant storedError(const QString& error) {
    return error.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(error.left(4000));
}

const char* kConversationColumns =
    "id, title, system_prompt, sampling, model, created_at, updated_at";
// The columns of message_versions read as a message (readMessage), named here and not through
// kMessageColumns: columns added to messages later need not exist in message_versions.
const char* kVersionColumns =
    "id, conversation_id, role, content, model, sampling, prompt_tokens, completion_tokens, "
    "ttft_ms, tokens_per_s, created_at, state, finish_reason";

const char* kMessageColumns =
    "id, conversation_id, role, content, model, sampling, prompt_tokens, completion_tokens, "
    "ttft_ms, tokens_per_s, created_at, state, finish_reason, error";

Conversation readConversation(const QSqlQuery& q) {
    Conversation c;
    c.id = q.value(0).toLongLong();
    c.title = q.value(1).toString();
    c.systemPrompt = q.value(2).toString();
    c.sampling = fromJsonText(q.value(3).toString());
    c.model = q.value(4).toString();
    c.created = QDateTime::fromMSecsSinceEpoch(q.value(5).toLongLong());
    c.updated = QDateTime::fromMSecsSinceEpoch(q.value(6).toLongLong());
    return c;
}

ChatMessage readMessage(const QSqlQuery& q) {
    ChatMessage m;
    m.id = q.value(0).toLongLong();
    m.conversationId = q.value(1).toLongLong();
    m.role = q.value(2).toString();
    m.content = q.value(3).toString();
    m.model = q.value(4).toString();
    m.sampling = fromJsonText(q.value(5).toString());
    m.completionTokensCounted = m.sampling.value(QLatin1String(kTokenCountSourceKey)).toString() ==
                                QLatin1String(kCountedChunks);
    m.promptTokens = optionalInt(q.value(6));
    m.completionTokens = optionalInt(q.value(7));
    m.ttftMs = optionalDouble(q.value(8));
    m.tokensPerSecond = optionalDouble(q.value(9));
    m.created = QDateTime::fromMSecsSinceEpoch(q.value(10).toLongLong());
    m.state = messageStateFromName(q.value(11).toString()).value_or(MessageState::Complete);
    m.finishReason = finishReasonFromName(q.value(12).toString()).value_or(FinishReason::None);
    m.error = q.value(13).toString();
    return m;
}

QString roleHeading(const QString& role) {
    if (role == QLatin1String("user"))
        return QStringLiteral("User");
    if (role == QLatin1String("assistant"))
        return QStringLiteral("Assistant");
    if (role == QLatin1String("system"))
        return QStringLiteral("System");
    return role;
}

// Escapes a term for use as an FTS5 string (a phrase): "..." with inner quotes doubled.
QString ftsPhrase(const QString& term) {
    QString t = term;
    t.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + t + QLatin1Char('"');
}

QString likePattern(const QString& term) {
    QString t = term;
    t.replace(QLatin1Char('\\'), QStringLiteral("\\\\"));
    t.replace(QLatin1Char('%'), QStringLiteral("\\%"));
    t.replace(QLatin1Char('_'), QStringLiteral("\\_"));
    return QLatin1Char('%') + t + QLatin1Char('%');
}

} // namespace

ConversationStore::ConversationStore(Database& db) : db_(db) {}

bool ConversationStore::fail(const QString& detail) {
    error_ = tr("Chat storage: %1").arg(detail.simplified());
    ++failures_;
    return false;
}

bool ConversationStore::beginTransaction() {
    QSqlDatabase db = db_.connection();
    return db.transaction() || fail(db.lastError().text());
}

bool ConversationStore::commitTransaction() {
    QSqlDatabase db = db_.connection();
    if (db.commit())
        return true;
    fail(db.lastError().text());
    db.rollback();
    return false;
}

void ConversationStore::rollbackTransaction() {
    db_.connection().rollback();
}

std::optional<Conversation> ConversationStore::createConversation(const QString& title,
                                                                  const QString& systemPrompt,
                                                                  const QJsonObject& sampling,
                                                                  const QString& model) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("INSERT INTO conversations(title, system_prompt, sampling, model, "
                             "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)"));
    const qint64 now = nowMs();
    q.addBindValue(sqlText(title));
    q.addBindValue(sqlText(systemPrompt));
    q.addBindValue(toJsonText(sampling));
    q.addBindValue(sqlText(model));
    q.addBindValue(now);
    q.addBindValue(now);
    if (!q.exec()) {
        fail(q.lastError().text());
        return std::nullopt;
    }
    Conversation c;
    c.id = q.lastInsertId().toLongLong();
    c.title = title;
    c.systemPrompt = systemPrompt;
    c.sampling = sampling;
    c.model = model;
    c.created = c.updated = QDateTime::fromMSecsSinceEpoch(now);
    return c;
}

QList<Conversation> ConversationStore::conversations() {
    QList<Conversation> out;
    QSqlQuery q(db_.connection());
    if (!q.exec(QStringLiteral("SELECT %1 FROM conversations ORDER BY updated_at DESC, id DESC")
                    .arg(QLatin1String(kConversationColumns)))) {
        fail(q.lastError().text());
        return out;
    }
    while (q.next())
        out.append(readConversation(q));
    return out;
}

std::optional<Conversation> ConversationStore::conversation(qint64 id) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("SELECT %1 FROM conversations WHERE id = ?")
                  .arg(QLatin1String(kConversationColumns)));
    q.addBindValue(id);
    if (!q.exec()) {
        fail(q.lastError().text());
        return std::nullopt;
    }
    if (!q.next())
        return std::nullopt;
    return readConversation(q);
}

bool ConversationStore::updateConversation(const Conversation& c) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("UPDATE conversations SET title = ?, system_prompt = ?, "
                             "sampling = ?, model = ?, updated_at = ? WHERE id = ?"));
    q.addBindValue(sqlText(c.title));
    q.addBindValue(sqlText(c.systemPrompt));
    q.addBindValue(toJsonText(c.sampling));
    q.addBindValue(sqlText(c.model));
    q.addBindValue(nowMs());
    q.addBindValue(c.id);
    if (!q.exec())
        return fail(q.lastError().text());
    return q.numRowsAffected() == 1 || fail(tr("no conversation %1").arg(c.id));
}

bool ConversationStore::touchConversation(qint64 id) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("UPDATE conversations SET updated_at = ? WHERE id = ?"));
    q.addBindValue(nowMs());
    q.addBindValue(id);
    return q.exec() || fail(q.lastError().text());
}

bool ConversationStore::deleteConversation(qint64 id) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("DELETE FROM conversations WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec())
        return fail(q.lastError().text());
    return q.numRowsAffected() == 1 || fail(tr("no conversation %1").arg(id));
}

std::optional<ChatMessage> ConversationStore::addMessage(const ChatMessage& m) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral(
        "INSERT INTO messages(conversation_id, role, content, model, sampling, prompt_tokens, "
        "completion_tokens, ttft_ms, tokens_per_s, created_at, state, finish_reason, error) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    const qint64 now = nowMs();
    q.addBindValue(m.conversationId);
    q.addBindValue(sqlText(m.role));
    q.addBindValue(sqlText(m.content));
    q.addBindValue(sqlText(m.model));
    q.addBindValue(toJsonText(m.sampling));
    q.addBindValue(optionalValue(m.promptTokens));
    q.addBindValue(optionalValue(m.completionTokens));
    q.addBindValue(optionalValue(m.ttftMs));
    q.addBindValue(optionalValue(m.tokensPerSecond));
    q.addBindValue(now);
    q.addBindValue(messageStateName(m.state));
    q.addBindValue(storedFinishReason(m.finishReason));
    q.addBindValue(storedError(m.error));
    if (!q.exec()) {
        fail(q.lastError().text());
        return std::nullopt;
    }
    ChatMessage out = m;
    out.id = q.lastInsertId().toLongLong();
    out.created = QDateTime::fromMSecsSinceEpoch(now);
    touchConversation(m.conversationId);
    return out;
}

QList<ChatMessage> ConversationStore::messageList(const QString& sql, qint64 key) {
    QList<ChatMessage> out;
    QSqlQuery q(db_.connection());
    q.prepare(sql);
    q.addBindValue(key);
    if (!q.exec()) {
        fail(q.lastError().text());
        return out;
    }
    while (q.next())
        out.append(readMessage(q));
    return out;
}

QList<ChatMessage> ConversationStore::messages(qint64 conversationId) {
    return messageList(
        QStringLiteral("SELECT %1 FROM messages WHERE conversation_id = ? ORDER BY id")
            .arg(QLatin1String(kMessageColumns)),
        conversationId);
}

std::optional<ChatMessage> ConversationStore::message(qint64 id) {
    QSqlQuery q(db_.connection());
    q.prepare(
        QStringLiteral("SELECT %1 FROM messages WHERE id = ?").arg(QLatin1String(kMessageColumns)));
    q.addBindValue(id);
    if (!q.exec()) {
        fail(q.lastError().text());
        return std::nullopt;
    }
    if (!q.next())
        return std::nullopt;
    return readMessage(q);
}

bool ConversationStore::setMessageContent(qint64 id, const QString& content) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("UPDATE messages SET content = ? WHERE id = ?"));
    q.addBindValue(sqlText(content));
    q.addBindValue(id);
    if (!q.exec())
        return fail(q.lastError().text());
    return q.numRowsAffected() == 1 || fail(tr("no message %1").arg(id));
}

bool ConversationStore::appendMessageContent(qint64 id, const QString& delta) {
    if (delta.isEmpty())
        return true;
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("UPDATE messages SET content = content || ? WHERE id = ?"));
    q.addBindValue(sqlText(delta));
    q.addBindValue(id);
    if (!q.exec())
        return fail(q.lastError().text());
    return q.numRowsAffected() == 1 || fail(tr("no message %1").arg(id));
}

bool ConversationStore::finishMessage(qint64 id, MessageState state, const GenerationFigures& f) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("UPDATE messages SET state = ?, prompt_tokens = ?, "
                             "completion_tokens = ?, ttft_ms = ?, tokens_per_s = ?, "
                             "finish_reason = ?, error = ? WHERE id = ?"));
    q.addBindValue(messageStateName(state));
    q.addBindValue(optionalValue(f.promptTokens));
    q.addBindValue(optionalValue(f.completionTokens));
    q.addBindValue(optionalValue(f.ttftMs));
    q.addBindValue(optionalValue(f.tokensPerSecond));
    q.addBindValue(storedFinishReason(f.finishReason));
    q.addBindValue(storedError(f.error));
    q.addBindValue(id);
    if (!q.exec())
        return fail(q.lastError().text());
    if (f.completionTokensCounted) { // said in the message's stored sampling object
        QSqlQuery s(db_.connection());
        s.prepare(QStringLiteral("SELECT sampling FROM messages WHERE id = ?"));
        s.addBindValue(id);
        if (!s.exec() || !s.next())
            return fail(s.lastError().text());
        QJsonObject sampling = fromJsonText(s.value(0).toString());
        sampling[QLatin1String(kTokenCountSourceKey)] = QLatin1String(kCountedChunks);
        QSqlQuery u(db_.connection());
        u.prepare(QStringLiteral("UPDATE messages SET sampling = ? WHERE id = ?"));
        u.addBindValue(toJsonText(sampling));
        u.addBindValue(id);
        if (!u.exec())
            return fail(u.lastError().text());
    }
    return q.numRowsAffected() == 1 || fail(tr("no message %1").arg(id));
}

bool ConversationStore::deleteMessage(qint64 id) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("DELETE FROM messages WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec())
        return fail(q.lastError().text());
    return q.numRowsAffected() == 1 || fail(tr("no message %1").arg(id));
}

std::optional<ChatMessage> ConversationStore::restoreMessage(const ChatMessage& m) {
    if (m.id <= 0 || !conversation(m.conversationId)) {
        fail(tr("cannot restore message %1: its conversation is gone").arg(m.id));
        return std::nullopt;
    }
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral(
        "INSERT INTO messages(id, conversation_id, role, content, model, sampling, "
        "prompt_tokens, completion_tokens, ttft_ms, tokens_per_s, created_at, state, "
        "finish_reason, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(m.id);
    q.addBindValue(m.conversationId);
    q.addBindValue(sqlText(m.role));
    q.addBindValue(sqlText(m.content));
    q.addBindValue(sqlText(m.model));
    q.addBindValue(toJsonText(m.sampling));
    q.addBindValue(optionalValue(m.promptTokens));
    q.addBindValue(optionalValue(m.completionTokens));
    q.addBindValue(optionalValue(m.ttftMs));
    q.addBindValue(optionalValue(m.tokensPerSecond));
    q.addBindValue(m.created.isValid() ? m.created.toMSecsSinceEpoch() : nowMs());
    q.addBindValue(messageStateName(m.state));
    q.addBindValue(storedFinishReason(m.finishReason));
    q.addBindValue(storedError(m.error));
    if (!q.exec()) { // e.g. the id was taken meanwhile
        fail(q.lastError().text());
        return std::nullopt;
    }
    touchConversation(m.conversationId);
    return message(m.id);
}

std::optional<qint64> ConversationStore::keepAnswerVersion(const ChatMessage& answer,
                                                           qint64 parentId) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral(
        "INSERT INTO message_versions(conversation_id, parent_id, role, content, model, "
        "sampling, prompt_tokens, completion_tokens, ttft_ms, tokens_per_s, created_at, state, "
        "finish_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(answer.conversationId);
    q.addBindValue(parentId);
    q.addBindValue(sqlText(answer.role));
    q.addBindValue(sqlText(answer.content));
    q.addBindValue(sqlText(answer.model));
    q.addBindValue(toJsonText(answer.sampling));
    q.addBindValue(optionalValue(answer.promptTokens));
    q.addBindValue(optionalValue(answer.completionTokens));
    q.addBindValue(optionalValue(answer.ttftMs));
    q.addBindValue(optionalValue(answer.tokensPerSecond));
    q.addBindValue(answer.created.isValid() ? answer.created.toMSecsSinceEpoch() : nowMs());
    q.addBindValue(messageStateName(answer.state));
    q.addBindValue(storedFinishReason(answer.finishReason));
    if (!q.exec()) {
        fail(q.lastError().text());
        return std::nullopt;
    }
    return q.lastInsertId().toLongLong();
}

QList<ChatMessage> ConversationStore::answerVersions(qint64 parentId) {
    return messageList(
        QStringLiteral("SELECT %1 FROM message_versions WHERE parent_id = ? ORDER BY id")
            .arg(QLatin1String(kVersionColumns)),
        parentId);
}

bool ConversationStore::deleteAnswerVersion(qint64 versionId) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("DELETE FROM message_versions WHERE id = ?"));
    q.addBindValue(versionId);
    return q.exec() || fail(q.lastError().text());
}

bool ConversationStore::deleteMessagesFrom(qint64 messageId) {
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("DELETE FROM messages WHERE conversation_id = "
                             "(SELECT conversation_id FROM messages WHERE id = ?) AND id >= ?"));
    q.addBindValue(messageId);
    q.addBindValue(messageId);
    if (!q.exec())
        return fail(q.lastError().text());
    return q.numRowsAffected() > 0 || fail(tr("no message %1").arg(messageId));
}

int ConversationStore::recoverInterruptedMessages() {
    QSqlQuery q(db_.connection());
    if (!q.exec(QStringLiteral("UPDATE messages SET state = 'interrupted' "
                               "WHERE state = 'streaming'"))) {
        fail(q.lastError().text());
        return -1;
    }
    return q.numRowsAffected();
}

QList<SearchHit> ConversationStore::search(const QString& query, int limit) {
    const QStringList terms = query.simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (terms.isEmpty() || limit <= 0)
        return {};
    // Trigram FTS matches substrings of three or more characters; shorter terms (two-character
    // Chinese words are common) are matched with LIKE over the same rows.
    for (const QString& t : terms) {
        if (t.size() < 3)
            return searchLike(terms, limit);
    }
    return searchFts(terms, limit);
}

QList<SearchHit> ConversationStore::searchFts(const QStringList& terms, int limit) {
    QStringList phrases;
    for (const QString& t : terms)
        phrases << ftsPhrase(t);
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("SELECT m.conversation_id, m.id, c.title, m.role, "
                             "snippet(messages_fts, 0, char(57344), char(57345), '…', 24) "
                             "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
                             "JOIN conversations c ON c.id = m.conversation_id "
                             "WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?"));
    q.addBindValue(phrases.join(QLatin1Char(' ')));
    q.addBindValue(limit);
    QList<SearchHit> out;
    if (!q.exec()) {
        fail(q.lastError().text());
        return out;
    }
    while (q.next()) {
        SearchHit h;
        h.conversationId = q.value(0).toLongLong();
        h.messageId = q.value(1).toLongLong();
        h.conversationTitle = q.value(2).toString();
        h.role = q.value(3).toString();
        h.snippet = q.value(4).toString();
        out.append(h);
    }
    return out;
}

QList<SearchHit> ConversationStore::searchLike(const QStringList& terms, int limit) {
    QStringList where;
    for (int i = 0; i < terms.size(); ++i)
        where << QStringLiteral("m.content LIKE ? ESCAPE '\\'");
    QSqlQuery q(db_.connection());
    q.prepare(QStringLiteral("SELECT m.conversation_id, m.id, c.title, m.role, m.content "
                             "FROM messages m JOIN conversations c ON c.id = m.conversation_id "
                             "WHERE %1 ORDER BY m.id DESC LIMIT ?")
                  .arg(where.join(QStringLiteral(" AND "))));
    for (const QString& t : terms)
        q.addBindValue(likePattern(t));
    q.addBindValue(limit);
    QList<SearchHit> out;
    if (!q.exec()) {
        fail(q.lastError().text());
        return out;
    }
    constexpr int kContext = 20;
    while (q.next()) {
        SearchHit h;
        h.conversationId = q.value(0).toLongLong();
        h.messageId = q.value(1).toLongLong();
        h.conversationTitle = q.value(2).toString();
        h.role = q.value(3).toString();
        const QString content = q.value(4).toString();
        const QString& first = terms.first();
        const qsizetype at = content.indexOf(first, 0, Qt::CaseInsensitive);
        if (at < 0) { // LIKE is ASCII-case-insensitive only; fall back to the head
            h.snippet = content.left(2 * kContext);
        } else {
            const qsizetype begin = std::max<qsizetype>(0, at - kContext);
            const qsizetype end = std::min<qsizetype>(content.size(), at + first.size() + kContext);
            h.snippet = (begin > 0 ? QStringLiteral("…") : QString()) +
                        content.mid(begin, at - begin) + QChar(SearchHit::kMatchBegin) +
                        content.mid(at, first.size()) + QChar(SearchHit::kMatchEnd) +
                        content.mid(at + first.size(), end - at - first.size()) +
                        (end < content.size() ? QStringLiteral("…") : QString());
        }
        out.append(h);
    }
    return out;
}

QString ConversationStore::exportMarkdown(qint64 conversationId) {
    const auto c = conversation(conversationId);
    if (!c)
        return {};
    QString md;
    md += QStringLiteral("# %1\n\n")
              .arg(c->title.isEmpty() ? QStringLiteral("Conversation") : c->title);
    if (!c->model.isEmpty())
        md += QStringLiteral("Model: %1\n\n").arg(c->model);
    if (!c->systemPrompt.isEmpty()) {
        md += QStringLiteral("**System prompt**\n\n");
        for (const QString& line : c->systemPrompt.split(QLatin1Char('\n')))
            md += QStringLiteral("> %1\n").arg(line);
        md += QLatin1Char('\n');
    }
    for (const ChatMessage& m : messages(conversationId)) {
        md += QStringLiteral("## %1\n\n").arg(roleHeading(m.role));
        md += m.content;
        if (!m.content.endsWith(QLatin1Char('\n')))
            md += QLatin1Char('\n');
        QStringList figures;
        if (m.promptTokens)
            figures << QStringLiteral("%1 prompt tokens").arg(*m.promptTokens);
        if (m.completionTokens)
            figures << (m.completionTokensCounted
                            ? QStringLiteral("%1 completion tokens (counted streamed chunks: the "
                                             "endpoint sent no usage)")
                            : QStringLiteral("%1 completion tokens"))
                           .arg(*m.completionTokens);
        if (m.ttftMs)
            figures << QStringLiteral("TTFT %1 ms").arg(*m.ttftMs, 0, 'f', 0);
        if (m.tokensPerSecond)
            figures << QStringLiteral("%1 tokens/s").arg(*m.tokensPerSecond, 0, 'f', 1);
        if (m.state != MessageState::Complete)
            figures << messageStateName(m.state);
        // Every end but a normal one (and a stop, which "stopped" says) is named.
        if (m.finishReason != FinishReason::None && m.finishReason != FinishReason::Stop &&
            !(m.state == MessageState::Stopped && m.finishReason == FinishReason::Aborted))
            figures << QStringLiteral("finish: %1").arg(finishReasonName(m.finishReason));
        if (!figures.isEmpty())
            md += QStringLiteral("\n*%1*\n").arg(figures.join(QStringLiteral(" · ")));
        if (!m.error.isEmpty())
            md += QStringLiteral("\n**Error:** %1\n").arg(m.error.simplified());
        md += QLatin1Char('\n');
    }
    return md;
}

QByteArray ConversationStore::exportJson(qint64 conversationId) {
    const auto c = conversation(conversationId);
    if (!c)
        return {};
    QJsonObject conv;
    conv[QStringLiteral("id")] = c->id;
    conv[QStringLiteral("title")] = c->title;
    conv[QStringLiteral("system_prompt")] = c->systemPrompt;
    conv[QStringLiteral("sampling")] = c->sampling;
    conv[QStringLiteral("model")] = c->model;
    conv[QStringLiteral("created")] = c->created.toUTC().toString(Qt::ISODateWithMs);
    conv[QStringLiteral("updated")] = c->updated.toUTC().toString(Qt::ISODateWithMs);
    QJsonArray msgs;
    for (const ChatMessage& m : messages(conversationId)) {
        QJsonObject o;
        o[QStringLiteral("id")] = m.id;
        o[QStringLiteral("role")] = m.role;
        o[QStringLiteral("content")] = m.content;
        o[QStringLiteral("model")] = m.model;
        o[QStringLiteral("sampling")] = m.sampling;
        o[QStringLiteral("state")] = messageStateName(m.state);
        o[QStringLiteral("created")] = m.created.toUTC().toString(Qt::ISODateWithMs);
        if (m.promptTokens)
            o[QStringLiteral("prompt_tokens")] = *m.promptTokens;
        if (m.completionTokens)
            o[QStringLiteral("completion_tokens")] = *m.completionTokens;
        if (m.completionTokens && m.completionTokensCounted)
            o[QLatin1String(kTokenCountSourceKey)] = QLatin1String(kCountedChunks);
        if (m.ttftMs)
            o[QStringLiteral("ttft_ms")] = *m.ttftMs;
        if (m.tokensPerSecond)
            o[QStringLiteral("tokens_per_s")] = *m.tokensPerSecond;
        if (m.finishReason != FinishReason::None)
            o[QStringLiteral("finish_reason")] = finishReasonName(m.finishReason);
        if (!m.error.isEmpty())
            o[QStringLiteral("error")] = m.error;
        msgs.append(o);
    }
    QJsonObject root;
    root[QStringLiteral("format")] = QStringLiteral("llmwb-conversation");
    root[QStringLiteral("version")] = 1;
    root[QStringLiteral("conversation")] = conv;
    root[QStringLiteral("messages")] = msgs;
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

} // namespace llmwb
