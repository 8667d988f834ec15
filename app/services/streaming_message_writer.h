// Persists a message's text while it streams: deltas are buffered and appended to the row at
// most every flushIntervalMs (and when a timer fires after a pause), so a crash or kill -9
// loses at most about one interval of text while the database is not written per token.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include "app/services/chat_types.h"

namespace llmwb {

class ConversationStore;

class StreamingMessageWriter : public QObject {
    Q_OBJECT

  public:
    static constexpr int kDefaultFlushIntervalMs = 500;

    // The message row must exist (state 'streaming'); its current content is kept.
    StreamingMessageWriter(ConversationStore& store, qint64 messageId,
                           int flushIntervalMs = kDefaultFlushIntervalMs,
                           QObject* parent = nullptr);
    ~StreamingMessageWriter() override; // flushes what is pending

    qint64 messageId() const { return messageId_; }
    const QString& text() const { return text_; } // everything appended so far
    int flushCount() const { return flushes_; }

    void append(const QString& delta);
    bool flush(); // writes the pending text now
    // Flushes and stores the final state and figures; later appends are ignored.
    bool finish(MessageState state, const GenerationFigures& figures);

  signals:
    void writeFailed(const QString& message);

  private:
    ConversationStore& store_;
    qint64 messageId_;
    int intervalMs_;
    QString text_;
    QString pending_;
    QElapsedTimer sinceFlush_;
    QTimer timer_;
    int flushes_ = 0;
    bool finished_ = false;
};

} // namespace llmwb
