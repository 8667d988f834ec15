// Value types of the chat storage: a conversation, a message and a search hit. Plain copyable
// values, safe to pass between threads and to the UI.
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>
#include <optional>

#include "engine/serving/request.h"

namespace llmwb {

// Truncated: the engine cut the answer off before it ended (the model's context or the KV pool
// was full; finishReason says which). An answer that reached the user's max tokens is Complete
// with finishReason Length.
enum class MessageState { Complete, Streaming, Stopped, Error, Interrupted, Truncated };

// The spellings stored in the database (and written by the exports); the names of existing
// databases, so they never change.
QString messageStateName(MessageState s); // "complete", ...
std::optional<MessageState> messageStateFromName(const QString& name);
// "stop", "length", "abort" (OpenAI's finish_reason), "context", "kv_pool", "error"; "" for None
// (stored as NULL).
QString finishReasonName(FinishReason r);
// nullopt for anything else (the database file is external input).
std::optional<FinishReason> finishReasonFromName(const QString& name);

struct Conversation {
    qint64 id = 0;
    QString title;
    QString systemPrompt;
    QJsonObject sampling; // temperature, top_p, top_k, min_p, max_tokens, seed, ...
    QString model;
    QDateTime created;
    QDateTime updated;
};

struct ChatMessage {
    qint64 id = 0;
    qint64 conversationId = 0;
    QString role; // "system", "user" or "assistant"
    QString content;
    QString model;
    QJsonObject sampling;
    std::optional<qint64> promptTokens;
    std::optional<qint64> completionTokens;
    std::optional<double> ttftMs;
    std::optional<double> tokensPerSecond;
    // completionTokens counts the streamed chunks of an endpoint that sent no usage (stored in
    // `sampling` as "completion_tokens_source": "streamed_chunks"), not the server's count.
    bool completionTokensCounted = false;
    QDateTime created;
    MessageState state = MessageState::Complete;
    // Why the answer ended (None: unknown — a message of an older database, or not an answer).
    FinishReason finishReason = FinishReason::None;
    QString error; // state Error: what failed, in the words shown to the user
};

// Figures of one finished (or stopped) generation, stored on the assistant message.
struct GenerationFigures {
    std::optional<qint64> promptTokens;
    std::optional<qint64> completionTokens;
    std::optional<double> ttftMs;
    std::optional<double> tokensPerSecond;
    bool completionTokensCounted = false; // ChatMessage::completionTokensCounted
    FinishReason finishReason = FinishReason::None;
    QString error; // a failed generation: the message shown to the user (stored with it)
};

struct SearchHit {
    qint64 conversationId = 0;
    qint64 messageId = 0;
    QString conversationTitle;
    QString role;
    // Plain text around the match; matched text is enclosed in kMatchBegin ... kMatchEnd
    // (private-use characters, so any text in the message is safe to escape for display).
    QString snippet;
    static constexpr char16_t kMatchBegin = 0xE000;
    static constexpr char16_t kMatchEnd = 0xE001;
};

} // namespace llmwb

Q_DECLARE_METATYPE(llmwb::Conversation)
Q_DECLARE_METATYPE(llmwb::ChatMessage)
