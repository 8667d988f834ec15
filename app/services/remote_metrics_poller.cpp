#include "app/services/remote_metrics_poller.h"

#include <QCoreApplication>
#include <algorithm>
#include <chrono>

#include "app/remote/prometheus_text.h"
#include "app/remote/remote_engine_metrics.h"

namespace llmwb {

void registerRemoteTypes() {
    qRegisterMetaType<RemoteMetricsView>();
    qRegisterMetaType<RemoteEndpoint>();
}

RemoteMetricsPoller::RemoteMetricsPoller(QObject* parent) : QObject(parent) {
    registerRemoteTypes();
}

RemoteMetricsPoller::~RemoteMetricsPoller() {
    stop();
}

void RemoteMetricsPoller::start(const RemoteEndpoint& endpoint) {
    stop();
    {
        std::lock_guard lock(mutex_);
        stopping_ = false;
    }
    thread_ = std::thread([this, endpoint] { loop(endpoint); });
}

void RemoteMetricsPoller::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        if (client_)
            client_->cancel();
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
}

void RemoteMetricsPoller::loop(RemoteEndpoint endpoint) {
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    remote::EndpointConfig config = endpoint.config();
    const double timeout = std::max(1.0, intervalS_ * 2);
    config.connect_timeout_s = timeout;
    config.read_timeout_s = timeout;
    config.total_timeout_s = timeout * 2;
    config.max_body_bytes = 16u << 20;
    auto created = remote::OpenAiClient::create(config);
    std::unique_ptr<remote::OpenAiClient> client;
    if (created)
        client = std::move(*created);
    // model_name filter: a vLLM serving several models labels each; "" counts them all.
    remote::RemoteEngineMetrics figures(config.model);
    {
        std::lock_guard lock(mutex_);
        client_ = client.get();
    }
    for (;;) {
        {
            std::lock_guard lock(mutex_);
            if (stopping_)
                break;
        }
        const double t = std::chrono::duration<double>(Clock::now() - t0).count();
        RemoteMetricsView v;
        v.timeMs = qint64(t * 1000.0);
        v.endpoint = endpoint.name;
        if (!client) {
            v.error = describeRemoteError(created.message());
        } else {
            // Fetched and parsed here rather than by remote::scrape_metrics: whether the TTFT
            // histogram exists at all is read from the samples.
            auto text = client->fetch_metrics();
            auto scrape = text ? remote::parse_prometheus_text(*text)
                               : Result<remote::PromScrape>(text.error());
            if (!scrape) {
                v.error = describeRemoteError(text ? client->url().text() +
                                                         "/metrics: " + scrape.message()
                                                   : scrape.message());
            } else {
                const remote::RemoteMetricsSample sample = figures.update(*scrape, t);
                v.serverKind = QString::fromStdString(sample.server_kind);
                v.running = sample.running;
                v.waiting = sample.waiting;
                v.kvUsage = sample.kv_usage;
                v.promptTokensPerSecond = sample.prompt_throughput;
                v.generationTokensPerSecond = sample.generation_throughput;
                if (sample.ttft_mean_s)
                    v.ttftMeanMs = *sample.ttft_mean_s * 1000.0;
                v.promptExposed = sample.prompt_tokens_total.has_value();
                v.generationExposed = sample.generation_tokens_total.has_value();
                // vLLM's TTFT histogram (llama.cpp's server has none).
                v.ttftExposed =
                    std::any_of(scrape->samples.begin(), scrape->samples.end(),
                                [](const remote::PromSample& ps) {
                                    return ps.name == "vllm:time_to_first_token_seconds_count";
                                });
            }
        }
        {
            std::lock_guard lock(mutex_);
            if (stopping_)
                break;
        }
        emit metrics(v);
        std::unique_lock lock(mutex_);
        wake_.wait_for(lock, std::chrono::duration<double>(intervalS_),
                       [this] { return stopping_; });
        if (stopping_)
            break;
    }
    std::lock_guard lock(mutex_);
    client_ = nullptr;
}

} // namespace llmwb
