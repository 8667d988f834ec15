#include "app/services/chat_controller.h"

#include <QCoreApplication>
#include <QEvent>
#include <QTimer>

#include "app/services/conversation_store.h"
#include "app/services/streaming_message_writer.h"

namespace llmwb {

struct ChatController::Active {
    quint64 requestId = 0;
    qint64 messageId = 0;
    ChatMessage answer; // as added (id, conversation, model, sampling)
    std::unique_ptr<StreamingMessageWriter> writer;
};

// A finished answer whose text or final state is not stored yet: its writer keeps retrying.
struct ChatController::Unsaved {
    ChatMessage message; // as shown: the whole text, the final state and figures
    std::unique_ptr<StreamingMessageWriter> writer;
};

ChatController::ChatController(ConversationStore& store, QObject* parent)
    : QObject(parent), store_(store) {}

ChatController::~ChatController() {
    shutdown();
}

bool ChatController::report(const QString& message) {
    emit errorOccurred(message);
    return false;
}

bool ChatController::refuseReadOnly() {
    return !readOnlyReason_.isEmpty() && !report(readOnlyReason_);
}

std::optional<Conversation> ChatController::newConversation(const QString& title) {
    // An empty title is shown as "New chat" and replaced by the first message.
    if (refuseReadOnly())
        return std::nullopt;
    auto c = store_.createConversation(title, {}, defaultSampling_.toJson(), modelName_);
    if (!c) {
        report(store_.errorString());
        return std::nullopt;
    }
    emit conversationCreated(*c);
    return c;
}

bool ChatController::send(qint64 conversationId, const QString& text) {
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty() || refuseReadOnly())
        return false;
    if (isGenerating(conversationId))
        return report(tr("This conversation is still generating; stop it first."));
    auto conv = store_.conversation(conversationId);
    if (!conv)
        return report(tr("The conversation no longer exists."));
    ChatMessage m;
    m.conversationId = conversationId;
    m.role = QStringLiteral("user");
    m.content = trimmed;
    if (!startGeneration(conversationId, &m))
        return false;
    // The first message names a conversation that has no title yet.
    if (conv->title.isEmpty()) {
        conv->title = trimmed.simplified().left(60);
        if (store_.updateConversation(*conv))
            emit conversationChanged(conversationId);
    }
    return true;
}

bool ChatController::regenerate(qint64 assistantMessageId) {
    if (refuseReadOnly())
        return false;
    const auto m = store_.message(assistantMessageId);
    if (!m || m->role != QLatin1String("assistant"))
        return report(tr("Only an answer can be regenerated."));
    if (isGenerating(m->conversationId))
        return report(tr("This conversation is still generating; stop it first."));
    const auto before = store_.messages(m->conversationId);
    if (!store_.deleteMessagesFrom(assistantMessageId))
        return report(store_.errorString());
    dropUnsaved(m->conversationId, assistantMessageId);
    for (const ChatMessage& x : before) {
        if (x.id >= assistantMessageId)
            emit messageRemoved(x.conversationId, x.id);
    }
    return startGeneration(m->conversationId);
}

bool ChatController::editAndResend(qint64 userMessageId, const QString& text) {
    if (refuseReadOnly())
        return false;
    const auto m = store_.message(userMessageId);
    if (!m || m->role != QLatin1String("user"))
        return report(tr("Only your own messages can be edited."));
    if (text.trimmed().isEmpty())
        return false;
    if (isGenerating(m->conversationId))
        return report(tr("This conversation is still generating; stop it first."));
    const auto before = store_.messages(m->conversationId);
    if (!store_.deleteMessagesFrom(userMessageId))
        return report(store_.errorString());
    dropUnsaved(m->conversationId, userMessageId);
    for (const ChatMessage& x : before) {
        if (x.id >= userMessageId)
            emit messageRemoved(x.conversationId, x.id);
    }
    return send(m->conversationId, text);
}

bool ChatController::updateConversation(const Conversation& c) {
    if (refuseReadOnly())
        return false;
    if (!store_.updateConversation(c))
        return report(store_.errorString());
    emit conversationChanged(c.id);
    return true;
}

bool ChatController::deleteMessage(qint64 messageId) {
    if (refuseReadOnly())
        return false;
    const auto m = store_.message(messageId);
    if (!m)
        return false;
    auto it = active_.find(m->conversationId);
    if (it != active_.end() && (*it)->messageId == messageId)
        return report(tr("Stop the generation before deleting its message."));
    if (!store_.deleteMessage(messageId))
        return report(store_.errorString());
    const bool wasUnsaved = unsaved_.remove(messageId);
    if (failing_.remove(messageId) || wasUnsaved)
        updateSaveStatus();
    emit messageRemoved(m->conversationId, messageId);
    return true;
}

bool ChatController::deleteConversation(qint64 conversationId) {
    if (refuseReadOnly())
        return false;
    if (isGenerating(conversationId)) {
        stop(conversationId);
        finishActive(conversationId, MessageState::Stopped, {});
    }
    if (!store_.deleteConversation(conversationId))
        return report(store_.errorString());
    dropUnsaved(conversationId, 0);
    emit conversationDeleted(conversationId);
    return true;
}

void ChatController::stop(qint64 conversationId) {
    auto it = active_.find(conversationId);
    if (it != active_.end())
        emit stopRequested((*it)->requestId);
}

bool ChatController::isGenerating(qint64 conversationId) const {
    return active_.contains(conversationId);
}

QString ChatController::streamingText(qint64 conversationId) const {
    auto it = active_.find(conversationId);
    return it == active_.end() ? QString() : (*it)->writer->text();
}

bool ChatController::startGeneration(qint64 conversationId, const ChatMessage* userMessage) {
    const auto conv = store_.conversation(conversationId);
    if (!conv)
        return report(tr("The conversation no longer exists."));
    std::optional<ChatMessage> user;
    if (userMessage) {
        if (!store_.beginTransaction())
            return report(store_.errorString());
        user = store_.addMessage(*userMessage);
        if (!user) {
            const QString error = store_.errorString();
            store_.rollbackTransaction();
            return report(error);
        }
    }
    GenerationRequest req;
    req.requestId = nextRequestId_++;
    req.conversationId = conversationId;
    req.sampling = SamplingSettings::fromJson(conv->sampling);
    if (!conv->systemPrompt.trimmed().isEmpty())
        req.messages.append({QStringLiteral("system"), conv->systemPrompt});
    for (const ChatMessage& m : store_.messages(conversationId)) {
        if (m.role == QLatin1String("system"))
            continue;
        req.messages.append({m.role, m.content});
    }

    ChatMessage answer;
    answer.conversationId = conversationId;
    answer.role = QStringLiteral("assistant");
    answer.model = modelName_;
    answer.sampling = req.sampling.toJson();
    answer.state = MessageState::Streaming;
    auto added = store_.addMessage(answer);
    if (!added || (user && !store_.commitTransaction())) {
        const QString error = store_.errorString();
        if (user)
            store_.rollbackTransaction();
        return report(error);
    }
    if (user)
        emit messageAdded(*user);

    auto active = std::make_shared<Active>();
    active->requestId = req.requestId;
    active->messageId = added->id;
    active->answer = *added;
    active->writer = std::make_unique<StreamingMessageWriter>(store_, added->id);
    watchWriter(active->writer.get(), conversationId);
    active_.insert(conversationId, active);
    emit messageAdded(*added);
    emit generatingChanged(conversationId, true);
    emit generateRequested(req);
    return true;
}

void ChatController::onToken(quint64 requestId, qint64 conversationId, const QString& delta) {
    auto it = active_.find(conversationId);
    if (it == active_.end() || (*it)->requestId != requestId)
        return; // a request that was already finished here (e.g. deleted conversation)
    (*it)->writer->append(delta);
    emit messageTextChanged(conversationId, (*it)->messageId, (*it)->writer->text());
}

void ChatController::onFinished(const GenerationStats& stats) {
    auto it = active_.find(stats.conversationId);
    if (it == active_.end() || (*it)->requestId != stats.requestId)
        return;
    GenerationFigures f;
    if (!stats.completionTokensCounted) // counted chunks: the endpoint did not say its prompt's
        f.promptTokens = stats.promptTokens;
    f.completionTokens = stats.completionTokens;
    f.completionTokensCounted = stats.completionTokensCounted;
    f.finishReason = stats.finishReason;
    if (stats.completionTokens > 0) {
        f.ttftMs = stats.ttftMs;
        f.tokensPerSecond = stats.tokensPerSecond;
    }
    // Cut off by the context or the KV pool: not complete, and stored saying which.
    const bool truncated =
        stats.finishReason == FinishReason::Context || stats.finishReason == FinishReason::KvPool;
    finishActive(stats.conversationId,
                 stats.cancelled() ? MessageState::Stopped
                 : truncated       ? MessageState::Truncated
                                   : MessageState::Complete,
                 f);
}

void ChatController::onFailed(quint64 requestId, qint64 conversationId, const QString& message) {
    auto it = active_.find(conversationId);
    if (it == active_.end() || (*it)->requestId != requestId)
        return;
    GenerationFigures f;
    f.finishReason = FinishReason::Error;
    f.error = message; // stored with the answer, shown on it and exported
    finishActive(conversationId, MessageState::Error, f);
    report(message);
}

void ChatController::finishActive(qint64 conversationId, MessageState state,
                                  const GenerationFigures& f) {
    auto it = active_.find(conversationId);
    if (it == active_.end())
        return;
    std::shared_ptr<Active> active = *it;
    active_.erase(it);
    if (active->writer->finish(state, f)) {
        if (const auto m = store_.message(active->messageId))
            emit messageFinished(*m);
    } else {
        // Not stored (yet): the answer as it is in memory, kept and retried by its writer.
        auto u = std::make_shared<Unsaved>();
        u->message = active->answer;
        u->message.content = active->writer->text();
        u->message.state = state;
        u->message.promptTokens = f.promptTokens;
        u->message.completionTokens = f.completionTokens;
        u->message.completionTokensCounted = f.completionTokensCounted;
        u->message.ttftMs = f.ttftMs;
        u->message.tokensPerSecond = f.tokensPerSecond;
        u->message.finishReason = f.finishReason;
        u->message.error = f.error;
        u->writer = std::move(active->writer);
        unsaved_.insert(active->messageId, u);
        emit messageFinished(u->message);
        updateSaveStatus();
    }
    emit generatingChanged(conversationId, false);
}

void ChatController::watchWriter(StreamingMessageWriter* writer, qint64 conversationId) {
    const qint64 messageId = writer->messageId();
    connect(writer, &StreamingMessageWriter::writeFailed, this,
            [this, conversationId, messageId](const QString& error) {
                onWriteFailed(conversationId, messageId, error);
            });
    connect(writer, &StreamingMessageWriter::saved, this,
            [this, conversationId, messageId] { onWriteSaved(conversationId, messageId); });
}

void ChatController::onWriteFailed(qint64 conversationId, qint64 messageId, const QString& error) {
    const bool changed = failing_.value(messageId) != error || saveError_ != error;
    failing_.insert(messageId, error);
    saveError_ = error; // the newest failure
    if (changed) {
        emit messageSaveChanged(conversationId, messageId, error);
        updateSaveStatus();
    }
}

void ChatController::onWriteSaved(qint64 conversationId, qint64 messageId) {
    failing_.remove(messageId);
    emit messageSaveChanged(conversationId, messageId, QString());
    if (auto u = unsaved_.take(messageId)) {
        // Called from the writer's own signal: it is deleted once that has returned.
        QTimer::singleShot(0, this, [u] {});
        if (const auto m = store_.message(messageId))
            emit messageFinished(*m);
    }
    updateSaveStatus();
}

void ChatController::dropUnsaved(qint64 conversationId, qint64 fromMessageId) {
    bool changed = false;
    for (auto it = unsaved_.begin(); it != unsaved_.end();) {
        if (it.value()->message.conversationId == conversationId && it.key() >= fromMessageId) {
            failing_.remove(it.key());
            it = unsaved_.erase(it);
            changed = true;
        } else {
            ++it;
        }
    }
    if (changed)
        updateSaveStatus();
}

std::optional<ChatMessage> ChatController::unsavedMessage(qint64 messageId) const {
    const auto u = unsaved_.value(messageId);
    if (!u)
        return std::nullopt;
    return u->message;
}

int ChatController::unsavedCount() const {
    return int(failing_.size());
}

void ChatController::updateSaveStatus() {
    if (failing_.isEmpty())
        saveError_.clear();
    emit saveStatusChanged(unsavedCount(), saveError_);
}

bool ChatController::retrySaving() {
    bool ok = true;
    for (const auto& a : std::as_const(active_))
        ok = a->writer->retry() && ok;
    const auto pending = unsaved_.values(); // retry() may remove entries
    for (const auto& u : pending)
        ok = u->writer->retry() && ok;
    return ok;
}

void ChatController::shutdown() {
    // Tokens and results the engine thread queued for us before it stopped are still in the
    // event queue: take them first, so nothing that was generated is lost.
    QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
    const QList<qint64> ids = active_.keys();
    GenerationFigures stopped;
    stopped.finishReason = FinishReason::Aborted;
    for (qint64 id : ids) {
        stop(id);
        finishActive(id, MessageState::Stopped, stopped);
    }
    retrySaving(); // a last try for answers that could not be stored yet
}

} // namespace llmwb
