#include "app/services/chat_controller.h"

#include <QCoreApplication>
#include <QEvent>

#include "app/services/conversation_store.h"
#include "app/services/streaming_message_writer.h"

namespace llmwb {

struct ChatController::Active {
    quint64 requestId = 0;
    qint64 messageId = 0;
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

std::optional<Conversation> ChatController::newConversation(const QString& title) {
    // An empty title is shown as "New chat" and replaced by the first message.
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
    if (trimmed.isEmpty())
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
    auto added = store_.addMessage(m);
    if (!added)
        return report(store_.errorString());
    emit messageAdded(*added);
    // The first message names a conversation that has no title yet.
    if (conv->title.isEmpty()) {
        conv->title = trimmed.simplified().left(60);
        if (store_.updateConversation(*conv))
            emit conversationChanged(conversationId);
    }
    return startGeneration(conversationId);
}

bool ChatController::regenerate(qint64 assistantMessageId) {
    const auto m = store_.message(assistantMessageId);
    if (!m || m->role != QLatin1String("assistant"))
        return report(tr("Only an answer can be regenerated."));
    if (isGenerating(m->conversationId))
        return report(tr("This conversation is still generating; stop it first."));
    const auto before = store_.messages(m->conversationId);
    if (!store_.deleteMessagesFrom(assistantMessageId))
        return report(store_.errorString());
    for (const ChatMessage& x : before) {
        if (x.id >= assistantMessageId)
            emit messageRemoved(x.conversationId, x.id);
    }
    return startGeneration(m->conversationId);
}

bool ChatController::editAndResend(qint64 userMessageId, const QString& text) {
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
    for (const ChatMessage& x : before) {
        if (x.id >= userMessageId)
            emit messageRemoved(x.conversationId, x.id);
    }
    return send(m->conversationId, text);
}

bool ChatController::updateConversation(const Conversation& c) {
    if (!store_.updateConversation(c))
        return report(store_.errorString());
    emit conversationChanged(c.id);
    return true;
}

bool ChatController::deleteMessage(qint64 messageId) {
    const auto m = store_.message(messageId);
    if (!m)
        return false;
    auto it = active_.find(m->conversationId);
    if (it != active_.end() && (*it)->messageId == messageId)
        return report(tr("Stop the generation before deleting its message."));
    if (!store_.deleteMessage(messageId))
        return report(store_.errorString());
    emit messageRemoved(m->conversationId, messageId);
    return true;
}

bool ChatController::deleteConversation(qint64 conversationId) {
    if (isGenerating(conversationId)) {
        stop(conversationId);
        finishActive(conversationId, MessageState::Stopped, {});
    }
    if (!store_.deleteConversation(conversationId))
        return report(store_.errorString());
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

bool ChatController::startGeneration(qint64 conversationId) {
    const auto conv = store_.conversation(conversationId);
    if (!conv)
        return report(tr("The conversation no longer exists."));
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
    if (!added)
        return report(store_.errorString());

    auto active = std::make_shared<Active>();
    active->requestId = req.requestId;
    active->messageId = added->id;
    active->writer = std::make_unique<StreamingMessageWriter>(store_, added->id);
    connect(active->writer.get(), &StreamingMessageWriter::writeFailed, this,
            &ChatController::errorOccurred);
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
    f.promptTokens = stats.promptTokens;
    f.completionTokens = stats.completionTokens;
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
    active->writer->finish(state, f);
    if (const auto m = store_.message(active->messageId))
        emit messageFinished(*m);
    emit generatingChanged(conversationId, false);
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
}

} // namespace llmwb
