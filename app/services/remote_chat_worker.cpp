#include "app/services/remote_chat_worker.h"

#include <QMutexLocker>
#include <atomic>

namespace llmwb {

namespace {

// OpenAI's finish_reason as the chat stores it. A reason the app has no name for ("tool_calls",
// "content_filter") ends the answer normally.
FinishReason finishReasonOf(const std::string& reason) {
    if (reason == "length")
        return FinishReason::Length;
    if (reason == "abort")
        return FinishReason::Aborted;
    if (reason.empty())
        return FinishReason::None;
    return FinishReason::Stop;
}

} // namespace

struct RemoteChatWorker::Job {
    GenerationRequest request;
    RemoteEndpoint endpoint;
    std::unique_ptr<remote::OpenAiClient> client;
    std::atomic<bool> stopped{false};
    std::atomic<bool> done{false};
    std::thread thread;
};

RemoteChatWorker::RemoteChatWorker(QObject* parent) : QObject(parent) {
    registerGenerationTypes();
}

RemoteChatWorker::~RemoteChatWorker() {
    stopAll();
    QHash<quint64, std::shared_ptr<Job>> jobs;
    {
        QMutexLocker lock(&mutex_);
        jobs.swap(jobs_);
    }
    for (const auto& j : std::as_const(jobs))
        if (j->thread.joinable())
            j->thread.join();
}

void RemoteChatWorker::setEndpoint(const RemoteEndpoint& endpoint) {
    QMutexLocker lock(&mutex_);
    endpoint_ = endpoint;
}

RemoteEndpoint RemoteChatWorker::endpoint() const {
    QMutexLocker lock(&mutex_);
    return endpoint_;
}

int RemoteChatWorker::activeCount() const {
    QMutexLocker lock(&mutex_);
    int n = 0;
    for (const auto& j : jobs_)
        n += j->done ? 0 : 1;
    return n;
}

void RemoteChatWorker::reapFinished() {
    std::vector<std::shared_ptr<Job>> ended;
    {
        QMutexLocker lock(&mutex_);
        for (auto it = jobs_.begin(); it != jobs_.end();) {
            if ((*it)->done) {
                ended.push_back(*it);
                it = jobs_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (const auto& j : ended)
        if (j->thread.joinable())
            j->thread.join();
}

void RemoteChatWorker::generate(const GenerationRequest& request) {
    reapFinished();
    auto job = std::make_shared<Job>();
    job->request = request;
    {
        QMutexLocker lock(&mutex_);
        job->endpoint = endpoint_;
    }
    // Failures before the request starts are delivered queued, as the ones after it.
    const auto fail = [this, request](const QString& message) {
        QMetaObject::invokeMethod(
            this,
            [this, request, message] {
                emit failed(request.requestId, request.conversationId, message);
            },
            Qt::QueuedConnection);
    };
    const QString invalid = job->endpoint.validate();
    if (!invalid.isEmpty()) {
        fail(tr("No usable remote endpoint: %1").arg(invalid));
        return;
    }
    remote::EndpointConfig config = job->endpoint.config();
    config.connect_timeout_s = 10;
    config.read_timeout_s = readTimeoutS_;
    auto client = remote::OpenAiClient::create(config);
    if (!client) {
        fail(describeRemoteError(client.message()));
        return;
    }
    job->client = std::move(*client);
    {
        QMutexLocker lock(&mutex_);
        jobs_.insert(request.requestId, job);
    }
    job->thread = std::thread([this, job] { run(job); });
}

void RemoteChatWorker::stop(quint64 requestId) {
    QMutexLocker lock(&mutex_);
    const auto it = jobs_.constFind(requestId);
    if (it == jobs_.constEnd())
        return;
    (*it)->stopped = true;
    (*it)->client->cancel();
}

void RemoteChatWorker::stopAll() {
    QMutexLocker lock(&mutex_);
    for (const auto& j : std::as_const(jobs_)) {
        j->stopped = true;
        j->client->cancel();
    }
}

// On the job's thread: signals go to receivers in other threads as queued calls.
void RemoteChatWorker::run(std::shared_ptr<Job> job) {
    const GenerationRequest& r = job->request;
    remote::CompletionRequest req;
    req.type = remote::EndpointType::Chat;
    for (const PromptMessage& m : r.messages)
        req.messages.push_back({m.role.toStdString(), m.content.toStdString()});
    const SamplingSettings& s = r.sampling;
    req.max_tokens = s.maxTokens;
    req.temperature = s.temperature;
    req.stream = true;
    req.include_usage = true;
    req.extra["top_p"] = s.topP;
    if (s.topK > 0)
        req.extra["top_k"] = s.topK;
    if (s.minP > 0)
        req.extra["min_p"] = s.minP;
    if (s.repetitionPenalty != 1.0)
        req.extra["repetition_penalty"] = s.repetitionPenalty;
    if (s.presencePenalty != 0)
        req.extra["presence_penalty"] = s.presencePenalty;
    if (s.frequencyPenalty != 0)
        req.extra["frequency_penalty"] = s.frequencyPenalty;
    if (s.seed >= 0)
        req.extra["seed"] = s.seed;

    int64_t textChunks = 0; // streamed pieces with text (a chat's role-only chunk has none)
    // A stop() that came before complete() began is not kept by the client: checked here and
    // at every piece.
    auto result = job->stopped
                      ? Result<remote::CompletionResult>(remote::CompletionResult{})
                      : job->client->complete(req, [&](std::string_view piece) {
                            if (job->stopped) {
                                job->client->cancel();
                                return;
                            }
                            if (piece.empty())
                                return;
                            ++textChunks;
                            emit token(r.requestId, r.conversationId,
                                       QString::fromUtf8(piece.data(), qsizetype(piece.size())));
                        });
    if (!result) {
        // A Stop that lands while the connection is being set up reads as a failed request.
        if (job->stopped) {
            GenerationStats st;
            st.requestId = r.requestId;
            st.conversationId = r.conversationId;
            st.finishReason = FinishReason::Aborted;
            emit finished(st);
        } else {
            emit failed(r.requestId, r.conversationId, describeRemoteError(result.message()));
        }
        job->done = true;
        return;
    }
    const remote::CompletionResult& c = *result;
    GenerationStats st;
    st.requestId = r.requestId;
    st.conversationId = r.conversationId;
    // Without usage, each streamed piece of text counts as one token (as vLLM's bench counts
    // chunks; a chat stream's role-only first chunk is not counted).
    st.completionTokens = c.usage ? c.usage->completion_tokens : textChunks;
    st.completionTokensCounted = !c.usage; // stored and shown as counted, not the server's
    st.promptTokens = c.usage ? c.usage->prompt_tokens : 0;
    st.ttftMs = c.ttft_s * 1000.0;
    st.totalMs = c.latency_s * 1000.0;
    const double decodeS = c.latency_s - c.ttft_s;
    if (st.completionTokens > 1 && decodeS > 0)
        st.tokensPerSecond = double(st.completionTokens - 1) / decodeS;
    else if (st.completionTokens > 0 && c.latency_s > 0)
        st.tokensPerSecond = double(st.completionTokens) / c.latency_s;
    st.finishReason =
        c.cancelled || job->stopped ? FinishReason::Aborted : finishReasonOf(c.finish_reason);
    emit finished(st);
    job->done = true;
}

} // namespace llmwb
