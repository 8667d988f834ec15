// RemoteChatWorker: the chat backend for a remote OpenAI-compatible endpoint. It takes the same
// GenerationRequest as EngineWorker and emits the same token / finished / failed signals, so the
// ChatController cannot tell the two apart. Each request streams POST /v1/chat/completions
// through its own OpenAiClient on a thread of its own (the GUI thread never waits on the
// network); stop() closes that request's connection at once (from any thread). The figures are
// the client's (vLLM's bench rules, openai_client.h): TTFT from the first token chunk, tokens/s
// over the chunks after it, completion tokens from the server's usage when it sends one
// (stream_options.include_usage), else the number of token chunks.
#pragma once

#include <QHash>
#include <QMutex>
#include <QObject>
#include <memory>
#include <thread>

#include "app/remote/openai_client.h"
#include "app/services/generation_types.h"
#include "app/services/remote_endpoint.h"

namespace llmwb {

class RemoteChatWorker : public QObject {
    Q_OBJECT

  public:
    explicit RemoteChatWorker(QObject* parent = nullptr);
    // Stops every request in flight and joins their threads.
    ~RemoteChatWorker() override;

    // The endpoint new requests go to (requests in flight keep theirs).
    void setEndpoint(const RemoteEndpoint& endpoint);
    RemoteEndpoint endpoint() const;
    int activeCount() const;
    // Seconds the server may stay silent before a request fails (tests shorten it).
    void setReadTimeout(double seconds) { readTimeoutS_ = seconds; }

  public slots:
    void generate(const llmwb::GenerationRequest& request);
    // Thread-safe: closes the request's connection; it finishes as Aborted with what streamed.
    void stop(quint64 requestId);
    void stopAll();

  signals:
    void token(quint64 requestId, qint64 conversationId, const QString& textDelta);
    void finished(const llmwb::GenerationStats& stats);
    void failed(quint64 requestId, qint64 conversationId, const QString& message);

  private:
    struct Job;
    void run(std::shared_ptr<Job> job);
    void reapFinished(); // joins the threads of requests that ended

    mutable QMutex mutex_;
    RemoteEndpoint endpoint_;
    double readTimeoutS_ = 120;
    QHash<quint64, std::shared_ptr<Job>> jobs_;
};

} // namespace llmwb
