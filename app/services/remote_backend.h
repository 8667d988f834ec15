// RemoteBackend: the app's remote OpenAI-compatible endpoints and the chat backend choice, the
// one object main() builds for them. It keeps the endpoint list (stored in the settings), routes
// new chat messages to the local engine or to the chosen endpoint (ChatBackendRouter), labels
// the answers with the endpoint and model that gave them, and polls the chosen endpoint's
// /metrics for the Engine dock's charts while it is selected.
#pragma once

#include <QObject>
#include <QSettings>

#include "app/services/remote_chat_worker.h"
#include "app/services/remote_endpoint.h"
#include "app/services/remote_metrics_poller.h"
#include "app/services/remote_wiring.h"

namespace llmwb {

class ChatController;
class EngineWorker;

class RemoteBackend : public QObject {
    Q_OBJECT

  public:
    // worker may be null (tests without a local engine). The endpoints and the last choice are
    // read from `settings` (which must outlive this object).
    RemoteBackend(ChatController& controller, EngineWorker* worker, QSettings& settings,
                  QObject* parent = nullptr);
    ~RemoteBackend() override;

    QList<RemoteEndpoint> endpoints() const { return endpoints_; }
    // Replaces the list (stored); a chosen endpoint that is gone falls back to the local model,
    // one that was edited is used as edited.
    void setEndpoints(const QList<RemoteEndpoint>& endpoints);
    // "" = the local engine.
    QString backend() const { return backend_; }
    std::optional<RemoteEndpoint> currentEndpoint() const;
    RemoteChatWorker& chatWorker() { return worker_; }
    RemoteMetricsPoller& poller() { return poller_; }

  public slots:
    // "" = the local engine; an unknown name is refused (false).
    bool selectBackend(const QString& endpointName);
    // The local model's name (labels answers while the local engine is chosen).
    void setLocalModelName(const QString& name);

  signals:
    void endpointsChanged();
    // endpointName "" = the local engine.
    void backendChanged(const QString& endpointName);
    void metrics(const llmwb::RemoteMetricsView& view);

  private:
    void apply();

    ChatController& controller_;
    QSettings& settings_;
    RemoteChatWorker worker_;
    RemoteMetricsPoller poller_;
    ChatBackendRouter router_;
    QList<RemoteEndpoint> endpoints_;
    QString backend_;
    QString localModelName_;
    std::optional<RemoteEndpoint> applied_; // what the worker and the poller were given
};

} // namespace llmwb
