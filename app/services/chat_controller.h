// The chat use cases on the GUI thread: send, stream, stop, regenerate, edit-and-resend,
// delete. It writes through the ConversationStore (streamed text via StreamingMessageWriter)
// and talks to the engine only through signals and slots, so main() can connect it to the
// EngineWorker with queued connections and tests can drive it without an engine.
#pragma once

#include <QHash>
#include <QObject>
#include <memory>

#include "app/services/chat_types.h"
#include "app/services/generation_types.h"

namespace llmwb {

class ConversationStore;
class StreamingMessageWriter;

class ChatController : public QObject {
    Q_OBJECT

  public:
    explicit ChatController(ConversationStore& store, QObject* parent = nullptr);
    ~ChatController() override;

    ConversationStore& store() { return store_; }

    // Label stored on new assistant messages (the loaded model's name).
    void setModelName(const QString& name) { modelName_ = name; }
    QString modelName() const { return modelName_; }
    void setDefaultSampling(const SamplingSettings& s) { defaultSampling_ = s; }

    std::optional<Conversation> newConversation(const QString& title = {});
    // Adds the user message and starts an answer. False (and errorOccurred) when the
    // conversation is already generating or the store fails.
    bool send(qint64 conversationId, const QString& text);
    // Deletes the assistant message (and anything after it) and generates it again.
    bool regenerate(qint64 assistantMessageId);
    // Replaces a user message's text, drops everything after it and generates again.
    bool editAndResend(qint64 userMessageId, const QString& text);
    // Title, system prompt, sampling of a conversation.
    bool updateConversation(const Conversation& c);
    bool deleteMessage(qint64 messageId);
    bool deleteConversation(qint64 conversationId);
    void stop(qint64 conversationId);

    bool isGenerating(qint64 conversationId) const;
    bool anyGenerating() const { return !active_.isEmpty(); }
    // The text streamed so far for a generating conversation's assistant message.
    QString streamingText(qint64 conversationId) const;

    // Answers whose text or final state could not be stored (disk full, a read-only file) stay
    // in memory and are retried (StreamingMessageWriter); saveError() is the last failure, ""
    // once everything is stored.
    int unsavedCount() const;
    QString saveError() const { return saveError_; }
    bool retrySaving(); // tries every unsaved answer now; true when all is stored
    // A finished answer not stored yet, as it is in memory; the write error of a message ("":
    // none).
    std::optional<ChatMessage> unsavedMessage(qint64 messageId) const;
    QString messageSaveError(qint64 messageId) const { return failing_.value(messageId); }

    // A database opened read-only on purpose: everything that would write is refused with this
    // reason (empty: writable).
    void setReadOnlyReason(const QString& reason) { readOnlyReason_ = reason; }
    QString readOnlyReason() const { return readOnlyReason_; }

    // Quitting (after the engine thread has stopped): delivers what the engine had queued
    // for this controller, then saves each streamed answer as 'stopped'.
    void shutdown();

  signals:
    // To the engine worker (queued).
    void generateRequested(const llmwb::GenerationRequest& request);
    // To the engine worker (direct connection: EngineWorker::stop is thread-safe).
    void stopRequested(quint64 requestId);

    void conversationCreated(const llmwb::Conversation& c);
    void conversationDeleted(qint64 conversationId);
    void conversationChanged(qint64 conversationId); // title, updated time
    void messageAdded(const llmwb::ChatMessage& m);
    void messageRemoved(qint64 conversationId, qint64 messageId);
    void messageTextChanged(qint64 conversationId, qint64 messageId, const QString& text);
    void messageFinished(const llmwb::ChatMessage& m); // state + figures final
    void generatingChanged(qint64 conversationId, bool generating);
    void errorOccurred(const QString& message);
    // A message's text could not be stored (error) or is stored again (error empty).
    void messageSaveChanged(qint64 conversationId, qint64 messageId, const QString& error);
    // unsavedCount() or saveError() changed.
    void saveStatusChanged(int unsavedMessages, const QString& error);

  public slots:
    // From the engine worker.
    void onToken(quint64 requestId, qint64 conversationId, const QString& delta);
    void onFinished(const llmwb::GenerationStats& stats);
    void onFailed(quint64 requestId, qint64 conversationId, const QString& message);

  private:
    struct Active;
    struct Unsaved;
    void watchWriter(StreamingMessageWriter* writer, qint64 conversationId);
    void onWriteFailed(qint64 conversationId, qint64 messageId, const QString& error);
    void onWriteSaved(qint64 conversationId, qint64 messageId);
    void dropUnsaved(qint64 conversationId, qint64 fromMessageId); // the messages were deleted
    void updateSaveStatus();
    bool refuseReadOnly();
    // Adds the answer's row (and first the user's message, when given: both or neither are
    // stored, so a refused write leaves nothing half-sent) and starts generating.
    bool startGeneration(qint64 conversationId, const ChatMessage* userMessage = nullptr);
    void finishActive(qint64 conversationId, MessageState state, const GenerationFigures& f);
    bool report(const QString& message);

    ConversationStore& store_;
    QString modelName_;
    SamplingSettings defaultSampling_;
    quint64 nextRequestId_ = 1;
    QHash<qint64, std::shared_ptr<Active>> active_;   // by conversation id
    QHash<qint64, std::shared_ptr<Unsaved>> unsaved_; // finished but not stored, by message id
    QHash<qint64, QString> failing_; // message id -> the write error, while one is failing
    QString saveError_;
    QString readOnlyReason_;
};

} // namespace llmwb
