// RemoteMetricsPoller: scrapes a remote endpoint's /metrics every interval (1.5 s by default) on
// a thread of its own and delivers each scrape's figures as a RemoteMetricsView (a copyable
// value, queued to the GUI thread): running / waiting requests, KV usage, prompt and generation
// throughput, TTFT. A figure the server does not expose stays unavailable (nullopt, never 0);
// a failed scrape (no /metrics: 404; unreachable) is a view whose error says why.
#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "app/remote/openai_client.h"
#include "app/services/remote_endpoint.h"
#include "app/services/remote_metrics_view.h"

namespace llmwb {

class RemoteMetricsPoller : public QObject {
    Q_OBJECT

  public:
    explicit RemoteMetricsPoller(QObject* parent = nullptr);
    ~RemoteMetricsPoller() override; // stops and joins

    void setInterval(double seconds) { intervalS_ = seconds; }
    // Starts polling `endpoint` (stopping any previous one); the first scrape is immediate.
    void start(const RemoteEndpoint& endpoint);
    void stop();
    bool isRunning() const { return thread_.joinable(); }

  signals:
    void metrics(const llmwb::RemoteMetricsView& view);

  private:
    void loop(RemoteEndpoint endpoint);

    double intervalS_ = 1.5;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    remote::OpenAiClient* client_ = nullptr; // the loop's, for stop() to cancel (under mutex_)
};

void registerRemoteTypes();

} // namespace llmwb
