#include "app/services/engine_worker_server.h"

namespace llmwb {

namespace {

// A stream that keeps the model it was made for alive (the handler reads its tokenizer until
// the response is written).
struct StreamHolder {
    StreamHolder(int32_t n, std::shared_ptr<const ServedGeneration> g)
        : stream(n), generation(std::move(g)) {}
    RequestStream stream;
    std::shared_ptr<const ServedGeneration> generation;
};

void pushAbort(RequestStream& stream) {
    for (int32_t i = 0; i < stream.n(); ++i) {
        RequestOutput o;
        o.finished = true;
        o.finish = FinishReason::Aborted;
        stream.push(i, std::move(o));
    }
}

} // namespace

WorkerServingBackend::WorkerServingBackend(std::function<void()> wake) : wake_(std::move(wake)) {}

WorkerServingBackend::~WorkerServingBackend() {
    abortAll("the app is closing");
}

const ServedModel& WorkerServingBackend::model() const {
    static const ServedModel none;
    std::lock_guard lk(mu_);
    return current_ ? current_->model : none; // the current one stays alive past a switch
}

std::optional<std::string> WorkerServingBackend::unavailable() const {
    std::lock_guard lk(mu_);
    if (unavailable_.empty() && current_)
        return std::nullopt;
    return unavailable_.empty() ? std::string("no model is loaded in the app") : unavailable_;
}

std::shared_ptr<RequestStream> WorkerServingBackend::submit(Submission submission,
                                                            SubmitRefusal& refusal) {
    const auto n = static_cast<int32_t>(submission.choices.size());
    refusal = SubmitRefusal::None;
    std::shared_ptr<RequestStream> stream;
    std::function<void()> wake;
    {
        std::lock_guard lk(mu_);
        if (!unavailable_.empty() || !current_ || !wake_) {
            refusal = wake_ ? SubmitRefusal::NotReady : SubmitRefusal::ShuttingDown;
            return nullptr;
        }
        const int32_t waiting = pendingSequences_ + engineWaiting_.load();
        if (maxWaiting_ > 0 && waiting > 0 && waiting + n > maxWaiting_) {
            refusal = SubmitRefusal::Overloaded;
            return nullptr;
        }
        auto holder = std::make_shared<StreamHolder>(n, current_);
        stream = std::shared_ptr<RequestStream>(holder, &holder->stream);
        pendingSequences_ += n;
        pending_.push_back(Pending{stream, std::move(submission), current_->id});
        live_[stream.get()] = stream;
        wake = wake_;
    }
    wake();
    return stream;
}

void WorkerServingBackend::cancel(const std::shared_ptr<RequestStream>& stream) {
    if (!stream)
        return;
    std::function<void()> wake;
    {
        std::lock_guard lk(mu_);
        cancels_.push_back(stream);
        wake = wake_;
    }
    if (wake)
        wake();
}

void WorkerServingBackend::setMaxWaiting(int32_t sequences) {
    std::lock_guard lk(mu_);
    maxWaiting_ = std::max(0, sequences);
}

void WorkerServingBackend::setMetricsListener(std::function<void(ServingMetrics*)> listener) {
    std::lock_guard lk(mu_);
    metricsListener_ = std::move(listener);
}

ServingMetrics* WorkerServingBackend::metrics() const {
    std::lock_guard lk(mu_);
    return current_ ? current_->metrics.get() : nullptr;
}

void WorkerServingBackend::abortAll(const std::string& why) {
    std::vector<Pending> pending;
    std::vector<std::shared_ptr<RequestStream>> live;
    std::function<void()> wake;
    {
        std::lock_guard lk(mu_);
        pending.swap(pending_);
        pendingSequences_ = 0;
        for (auto& [ptr, s] : live_) {
            live.push_back(s);
            cancels_.push_back(s); // the worker aborts them in its engine
        }
        live_.clear();
        wake = wake_;
    }
    for (Pending& p : pending)
        p.stream->refuse(why);
    for (const auto& s : live)
        pushAbort(*s);
    if (wake && !live.empty())
        wake();
}

int32_t WorkerServingBackend::numLive() const {
    std::lock_guard lk(mu_);
    return static_cast<int32_t>(live_.size());
}

void WorkerServingBackend::serve(ServedModel model, std::shared_ptr<const Tokenizer> tokenizer) {
    auto g = std::make_shared<ServedGeneration>();
    g->model = std::move(model);
    g->tokenizer = std::move(tokenizer);
    g->model.tokenizer = g->tokenizer.get();
    g->metrics = std::make_unique<ServingMetrics>(g->model.name);
    std::lock_guard lk(mu_);
    g->id = nextGeneration_++;
    if (current_)
        retired_.push_back(Retired{std::move(current_), std::chrono::steady_clock::now()});
    current_ = g;
    unavailable_.clear();
    pruneRetired();
    // Under the lock: the listener's server cannot go away meanwhile (LocalServer::stop clears
    // the listener first).
    if (metricsListener_)
        metricsListener_(g->metrics.get());
}

void WorkerServingBackend::setUnavailable(const std::string& why) {
    std::lock_guard lk(mu_);
    unavailable_ = why;
}

void WorkerServingBackend::take(std::vector<Pending>& pending,
                                std::vector<std::shared_ptr<RequestStream>>& cancels) {
    std::lock_guard lk(mu_);
    pending.swap(pending_);
    pendingSequences_ = 0;
    cancels.swap(cancels_);
    pruneRetired();
}

bool WorkerServingBackend::isCurrent(uint64_t generation) const {
    std::lock_guard lk(mu_);
    return current_ && current_->id == generation;
}

void WorkerServingBackend::release(const RequestStream* stream) {
    std::lock_guard lk(mu_);
    live_.erase(stream);
}

void WorkerServingBackend::detach() {
    {
        std::lock_guard lk(mu_);
        wake_ = nullptr;
        unavailable_ = "the app is closing";
    }
    abortAll("the app is closing");
    std::lock_guard lk(mu_);
    cancels_.clear(); // nobody will take them
}

void WorkerServingBackend::pruneRetired() {
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(retired_, [&](const Retired& r) {
        return r.generation.use_count() == 1 && now - r.since >= kRetiredGrace;
    });
}

} // namespace llmwb
