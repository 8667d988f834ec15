#include "app/services/chat_wiring.h"

#include "app/services/chat_controller.h"
#include "app/services/engine_worker.h"

namespace llmwb {

void connectChatToWorker(ChatController& controller, EngineWorker* worker) {
    QObject::connect(&controller, &ChatController::generateRequested, worker,
                     &EngineWorker::generate, Qt::QueuedConnection);
    QObject::connect(
        &controller, &ChatController::stopRequested, worker,
        [worker](quint64 id) { worker->stop(id); }, Qt::DirectConnection);
    QObject::connect(worker, &EngineWorker::token, &controller, &ChatController::onToken);
    QObject::connect(worker, &EngineWorker::finished, &controller, &ChatController::onFinished);
    QObject::connect(worker, &EngineWorker::failed, &controller, &ChatController::onFailed);
}

} // namespace llmwb
