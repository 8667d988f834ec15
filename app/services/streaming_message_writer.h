// Persists a message's text while it streams: deltas are buffered and appended to the row at
// most every flushIntervalMs (and when a timer fires after a pause), so a crash or kill -9
// loses at most about one interval of text while the database is not written per token.
//
// A write that fails (disk full, a read-only or vanished file) loses nothing: the text stays in
// memory (text()), hasUnsaved() is true, writeFailed says why, and the writer retries on the
// next flush and by itself with a growing delay (retryDelayMs, doubling up to kMaxRetryDelayMs).
// finish() stores the final state only after all the text is stored, so a row never reads
// "complete" while text is missing; until then it stays 'streaming' (a crash marks it
// 'interrupted' with the text stored so far). saved() follows a failure once everything is in.
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
    static constexpr int kFirstRetryDelayMs = 1000;
    static constexpr int kMaxRetryDelayMs = 30000;

    // The message row must exist (state 'streaming'); its current content is kept.
    StreamingMessageWriter(ConversationStore& store, qint64 messageId,
                           int flushIntervalMs = kDefaultFlushIntervalMs,
                           QObject* parent = nullptr);
    ~StreamingMessageWriter() override; // flushes what is pending

    qint64 messageId() const { return messageId_; }
    const QString& text() const { return text_; } // everything appended so far
    int flushCount() const { return flushes_; }
    bool isFinished() const { return finished_; }
    // Text or the final state not written yet (a write failed); lastError() says why.
    bool hasUnsaved() const { return !pending_.isEmpty() || (finished_ && !finalStored_); }
    QString lastError() const { return lastError_; }
    // What finish() was given (the state and figures stored once the text is in).
    MessageState finalState() const { return finalState_; }
    const GenerationFigures& finalFigures() const { return finalFigures_; }
    // The delay before the next automatic retry after a failure (tests shorten it).
    void setRetryDelayMs(int ms) { retryDelayMs_ = firstRetryDelayMs_ = std::max(1, ms); }
    int retryDelayMs() const { return retryDelayMs_; }

    void append(const QString& delta);
    bool flush(); // writes the pending text now
    // Flushes and stores the final state and figures; later appends are ignored. False when
    // something could not be written: it is kept and retried (retry(), or by the timer).
    bool finish(MessageState state, const GenerationFigures& figures);
    // Writes whatever is unsaved now (the pending text, then the final state). True when all
    // is stored.
    bool retry();

  signals:
    void writeFailed(const QString& message);
    void saved(); // everything is stored again after a failed write

  private:
    bool storeFinal();
    void failed(const QString& message);
    void succeeded();

    ConversationStore& store_;
    qint64 messageId_;
    int intervalMs_;
    QString text_;
    QString pending_;
    QElapsedTimer sinceFlush_;
    QTimer timer_;
    QTimer retryTimer_;
    int flushes_ = 0;
    bool finished_ = false;
    bool finalStored_ = false;
    bool failing_ = false;
    int firstRetryDelayMs_ = kFirstRetryDelayMs;
    int retryDelayMs_ = kFirstRetryDelayMs;
    QString lastError_;
    MessageState finalState_ = MessageState::Streaming;
    GenerationFigures finalFigures_;
};

} // namespace llmwb
