#include "app/services/remote_backend.h"

#include "app/services/chat_controller.h"

namespace llmwb {

RemoteBackend::RemoteBackend(ChatController& controller, EngineWorker* worker, QSettings& settings,
                             QObject* parent)
    : QObject(parent), controller_(controller), settings_(settings),
      router_(controller, worker, worker_) {
    localModelName_ = controller.modelName();
    endpoints_ = loadRemoteEndpoints(settings_);
    connect(&poller_, &RemoteMetricsPoller::metrics, this, [this](const RemoteMetricsView& v) {
        // A scrape of an endpoint no longer chosen (queued before the switch) is dropped.
        if (applied_ && v.endpoint == applied_->name)
            emit metrics(v);
    });
    const QString saved = loadChatBackend(settings_);
    if (!saved.isEmpty())
        selectBackend(saved);
}

RemoteBackend::~RemoteBackend() {
    poller_.stop();
    worker_.stopAll();
}

std::optional<RemoteEndpoint> RemoteBackend::currentEndpoint() const {
    for (const RemoteEndpoint& e : endpoints_)
        if (!backend_.isEmpty() && e.name == backend_)
            return e;
    return std::nullopt;
}

void RemoteBackend::setEndpoints(const QList<RemoteEndpoint>& endpoints) {
    endpoints_ = endpoints.mid(0, RemoteEndpoint::kMaxEndpoints);
    saveRemoteEndpoints(settings_, endpoints_);
    emit endpointsChanged();
    if (!currentEndpoint())
        selectBackend(QString());
    else
        apply();
}

bool RemoteBackend::selectBackend(const QString& endpointName) {
    if (!endpointName.isEmpty()) {
        const bool known =
            std::any_of(endpoints_.begin(), endpoints_.end(),
                        [&](const RemoteEndpoint& e) { return e.name == endpointName; });
        if (!known)
            return false;
    }
    const bool changed = backend_ != endpointName;
    backend_ = endpointName;
    saveChatBackend(settings_, backend_);
    apply();
    if (changed)
        emit backendChanged(backend_);
    return true;
}

void RemoteBackend::setLocalModelName(const QString& name) {
    localModelName_ = name;
    if (backend_.isEmpty())
        controller_.setModelName(name);
}

void RemoteBackend::apply() {
    const std::optional<RemoteEndpoint> e = currentEndpoint();
    router_.setRemote(e.has_value());
    if (e == applied_)
        return;
    applied_ = e;
    if (e) {
        worker_.setEndpoint(*e);
        controller_.setModelName(e->answerLabel());
        poller_.start(*e);
    } else {
        poller_.stop();
        controller_.setModelName(localModelName_);
    }
}

} // namespace llmwb
