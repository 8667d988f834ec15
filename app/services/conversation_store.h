// Conversations and messages in the chat database: CRUD, full-text search, export, and the
// crash-recovery step that marks messages left 'streaming' by a killed process 'interrupted'.
// Used on the thread that opened the Database.
#pragma once

#include <QCoreApplication>
#include <QList>
#include <QString>
#include <optional>

#include "app/services/chat_types.h"

namespace llmwb {

class Database;

class ConversationStore {
    Q_DECLARE_TR_FUNCTIONS(llmwb::ConversationStore)

  public:
    explicit ConversationStore(Database& db);

    // Conversations, newest update first.
    std::optional<Conversation> createConversation(const QString& title,
                                                   const QString& systemPrompt = {},
                                                   const QJsonObject& sampling = {},
                                                   const QString& model = {});
    QList<Conversation> conversations();
    std::optional<Conversation> conversation(qint64 id);
    bool updateConversation(const Conversation& c); // title, system prompt, sampling, model
    bool touchConversation(qint64 id);
    bool deleteConversation(qint64 id); // messages go with it (ON DELETE CASCADE)

    // Messages of a conversation, oldest first.
    std::optional<ChatMessage> addMessage(const ChatMessage& m); // id/created are assigned
    QList<ChatMessage> messages(qint64 conversationId);
    std::optional<ChatMessage> message(qint64 id);
    bool setMessageContent(qint64 id, const QString& content);
    bool appendMessageContent(qint64 id, const QString& delta);
    bool finishMessage(qint64 id, MessageState state, const GenerationFigures& figures);
    bool deleteMessage(qint64 id);
    // Undo of a deletion: inserts the message again as it was (same id, so the same place in
    // its conversation; same time, state and figures). Fails if its conversation is gone.
    std::optional<ChatMessage> restoreMessage(const ChatMessage& m);
    // Versions of an answer: before an answer is regenerated it is kept here, under the
    // message it replies to (parentId); answerVersions lists them oldest first (each with its
    // version id as id). Returns the version id.
    std::optional<qint64> keepAnswerVersion(const ChatMessage& answer, qint64 parentId);
    QList<ChatMessage> answerVersions(qint64 parentId);
    bool deleteAnswerVersion(qint64 versionId);
    // Deletes the message and every later message of its conversation (edit-and-resend,
    // regenerate).
    bool deleteMessagesFrom(qint64 messageId);

    // Messages left 'streaming' (a crash or kill -9 during generation) become 'interrupted';
    // their text is kept. Returns how many were changed, -1 on error.
    int recoverInterruptedMessages();

    // Full-text search over message contents (whitespace-separated terms, all must occur,
    // case-insensitive substring match in any script). Best matches first.
    QList<SearchHit> search(const QString& query, int limit = 50);

    QString exportMarkdown(qint64 conversationId);
    QByteArray exportJson(qint64 conversationId);

    // Several writes that stand or fall together (a user's message and its answer's row).
    bool beginTransaction();
    bool commitTransaction(); // on failure the transaction is rolled back
    void rollbackTransaction();

    QString errorString() const { return error_; }
    // Grows by one with every failed operation: a caller compares it before and after a read to
    // tell "no rows" from "the read failed" (a damaged file).
    quint64 failureCount() const { return failures_; }

  private:
    bool fail(const QString& detail);
    // The messages a one-parameter SELECT of message columns returns, in its order.
    QList<ChatMessage> messageList(const QString& sql, qint64 key);
    QList<SearchHit> searchFts(const QStringList& terms, int limit);
    QList<SearchHit> searchLike(const QStringList& terms, int limit);

    Database& db_;
    QString error_;
    quint64 failures_ = 0;
};

} // namespace llmwb
