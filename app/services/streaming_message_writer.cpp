#include "app/services/streaming_message_writer.h"

#include "app/services/conversation_store.h"

namespace llmwb {

StreamingMessageWriter::StreamingMessageWriter(ConversationStore& store, qint64 messageId,
                                               int flushIntervalMs, QObject* parent)
    : QObject(parent), store_(store), messageId_(messageId), intervalMs_(flushIntervalMs) {
    timer_.setSingleShot(true);
    connect(&timer_, &QTimer::timeout, this, [this] { flush(); });
    sinceFlush_.start();
}

StreamingMessageWriter::~StreamingMessageWriter() {
    if (!finished_)
        flush();
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

bool StreamingMessageWriter::flush() {
    timer_.stop();
    sinceFlush_.restart();
    if (pending_.isEmpty())
        return true;
    if (!store_.appendMessageContent(messageId_, pending_)) {
        emit writeFailed(store_.errorString());
        return false; // keep the text pending; the next flush retries
    }
    pending_.clear();
    ++flushes_;
    return true;
}

bool StreamingMessageWriter::finish(MessageState state, const GenerationFigures& figures) {
    if (finished_)
        return true;
    const bool flushed = flush();
    finished_ = true;
    if (!store_.finishMessage(messageId_, state, figures)) {
        emit writeFailed(store_.errorString());
        return false;
    }
    return flushed;
}

} // namespace llmwb
