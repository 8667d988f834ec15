// The chat's routing between its two kinds of backend: the local EngineWorker and a remote
// endpoint's RemoteChatWorker. A request goes to the backend chosen when it was sent (the
// router remembers which, so Stop reaches the right one); tokens, finished and failed of both
// go back to the ChatController. main() and the tests wire a chat with remote endpoints through
// this one object (chat_wiring.h stays the local-only path).
#pragma once

#include <QObject>
#include <QSet>

namespace llmwb {

class ChatController;
class EngineWorker;
class RemoteChatWorker;
struct GenerationRequest;

class ChatBackendRouter : public QObject {
    Q_OBJECT

  public:
    // worker may be null (tests without an engine): requests then go to `remote` only.
    ChatBackendRouter(ChatController& controller, EngineWorker* worker, RemoteChatWorker& remote,
                      QObject* parent = nullptr);
    // true: new messages go to the remote worker's endpoint; false: to the local engine.
    void setRemote(bool remote) { useRemote_ = remote; }
    bool isRemote() const { return useRemote_; }

  private:
    void route(const GenerationRequest& request);
    void stop(quint64 requestId);

    ChatController& controller_;
    EngineWorker* worker_;
    RemoteChatWorker& remote_;
    bool useRemote_ = false;
    QSet<quint64> remoteIds_; // requests sent to the remote worker (removed when they end)
};

} // namespace llmwb
