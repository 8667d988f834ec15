#include "app/services/streaming_message_writer.h"

#include <algorithm>

#include "app/services/conversation_store.h"

namespace llmwb {

StreamingMessageWriter::StreamingMessageWriter(ConversationStore& store, qint64 messageId,
                                               int flushIntervalMs, QObject* parent)
    : QObject(parent), store_(store), messageId_(messageId), intervalMs_(flushIntervalMs) {
    timer_.setSingleShot(true);
    connect(&timer_, &QTimer::timeout, this, [this] { flush(); });
    retryTimer_.setSingleShot(true);
    connect(&retryTimer_, &QTimer::timeout, this, [this] { retry(); });
    sinceFlush_.start();
}

StreamingMessageWriter::~StreamingMessageWriter() {
    if (hasUnsaved())
        retry();
}

void StreamingMessageWriter::append(const QString& delta) {
    if (finished_ || delta.isEmpty())
        return;
    text_ += delta;
    pending_ += delta;
    const qint64 elapsed = sinceFlush_.elapsed();
    if (elapsed >= intervalMs_) {
        flush();
    } else if (!timer_.isActive()) {
        timer_.start(static_cast<int>(intervalMs_ - elapsed));
    }
}

void StreamingMessageWriter::failed(const QString& message) {
    lastError_ = message;
    failing_ = true;
    // Retry by itself, each time later (a full disk rarely frees up within a second).
    if (!retryTimer_.isActive()) {
        retryTimer_.start(retryDelayMs_);
        retryDelayMs_ = std::min(retryDelayMs_ * 2, kMaxRetryDelayMs);
    }
    emit writeFailed(message);
}

void StreamingMessageWriter::succeeded() {
    if (hasUnsaved() || !failing_)
        return;
    failing_ = false;
    lastError_.clear();
    retryTimer_.stop();
    retryDelayMs_ = firstRetryDelayMs_;
    emit saved();
}

bool StreamingMessageWriter::flush() {
    timer_.stop();
    sinceFlush_.restart();
    if (pending_.isEmpty())
        return true;
    if (!store_.appendMessageContent(messageId_, pending_)) {
        failed(store_.errorString());
        return false; // keep the text pending; the next flush retries
    }
    pending_.clear();
    ++flushes_;
    if (!finished_)
        succeeded();
    return true;
}

bool StreamingMessageWriter::storeFinal() {
    if (finalStored_)
        return true;
    if (!store_.finishMessage(messageId_, finalState_, finalFigures_)) {
        failed(store_.errorString());
        return false;
    }
    finalStored_ = true;
    return true;
}

bool StreamingMessageWriter::finish(MessageState state, const GenerationFigures& figures) {
    if (finished_)
        return !hasUnsaved();
    finished_ = true;
    finalState_ = state;
    finalFigures_ = figures;
    return retry();
}

bool StreamingMessageWriter::retry() {
    // The final state goes in only after the whole text: never "complete" with text missing.
    const bool ok = flush() && (!finished_ || storeFinal());
    if (ok)
        succeeded();
    return ok;
}

} // namespace llmwb
