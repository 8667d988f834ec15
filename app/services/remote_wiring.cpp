#include "app/services/remote_wiring.h"

#include "app/services/chat_controller.h"
#include "app/services/engine_worker.h"
#include "app/services/remote_chat_worker.h"

namespace llmwb {

ChatBackendRouter::ChatBackendRouter(ChatController& controller, EngineWorker* worker,
                                     RemoteChatWorker& remote, QObject* parent)
    : QObject(parent), controller_(controller), worker_(worker), remote_(remote) {
    connect(&controller, &ChatController::generateRequested, this, &ChatBackendRouter::route);
    connect(&controller, &ChatController::stopRequested, this, &ChatBackendRouter::stop);
    if (worker) {
        connect(worker, &EngineWorker::token, &controller, &ChatController::onToken);
        connect(worker, &EngineWorker::finished, &controller, &ChatController::onFinished);
        connect(worker, &EngineWorker::failed, &controller, &ChatController::onFailed);
    }
    connect(&remote, &RemoteChatWorker::token, &controller, &ChatController::onToken);
    connect(&remote, &RemoteChatWorker::finished, &controller, [this](const GenerationStats& s) {
        remoteIds_.remove(s.requestId);
        controller_.onFinished(s);
    });
    connect(&remote, &RemoteChatWorker::failed, &controller,
            [this](quint64 id, qint64 conversationId, const QString& message) {
                remoteIds_.remove(id);
                controller_.onFailed(id, conversationId, message);
            });
}

void ChatBackendRouter::route(const GenerationRequest& request) {
    if (useRemote_ || !worker_) {
        remoteIds_.insert(request.requestId);
        remote_.generate(request);
        return;
    }
    QMetaObject::invokeMethod(
        worker_, [w = worker_, request] { w->generate(request); }, Qt::QueuedConnection);
}

void ChatBackendRouter::stop(quint64 requestId) {
    if (remoteIds_.contains(requestId))
        remote_.stop(requestId);
    else if (worker_)
        worker_->stop(requestId); // thread-safe (an atomic flag)
}

} // namespace llmwb
