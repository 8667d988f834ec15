// WorkerServingBackend: the OpenAI server's ServingBackend over the desktop app's engine worker,
// so that server requests join the same continuous batch as the chats.
//
//   HTTP handler threads                      the engine worker's thread (EngineWorker)
//   submit(prompt, params x n) --queue-->     serveQueued() between steps: add_request per
//   cancel(stream)             --queue-->       sequence (admit or refuse on the stream), abort
//             wake(): a queued call of          the cancelled ones; runStep() pushes outputs to
//             EngineWorker::serveQueued         the streams and feeds the metrics
//   RequestStream::wait_events <--push---
//
// Mirrors ServingLoop (app/server/serving_loop.h): n > 1 is n requests over the same prompt,
// max_waiting counts queued plus engine-waiting sequences (429 past it), a cancelled request is
// aborted at the next step and its stream gets no more events. Unlike the CLI the model
// changes: each loaded model is a ServedGeneration (its ServedModel, tokenizer and metrics);
// streams keep theirs alive, and a replaced one is freed once no stream holds it and a grace
// period has passed (a handler may hold model() briefly without a stream). While no model is
// loaded, one loads or a benchmark runs, unavailable() says so (503).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/server/serving_backend.h"
#include "engine/serving/serving_metrics.h"

namespace llmwb {

// One loaded model as the server sees it.
struct ServedGeneration {
    uint64_t id = 0;
    ServedModel model;
    std::shared_ptr<const Tokenizer> tokenizer; // what model.tokenizer points to
    std::unique_ptr<ServingMetrics> metrics;
};

class WorkerServingBackend final : public ServingBackend {
  public:
    struct Pending {
        std::shared_ptr<RequestStream> stream;
        Submission submission;
        uint64_t generation = 0; // the model it was tokenized for
    };
    static constexpr std::chrono::seconds kRetiredGrace{60};

    // wake: asks the worker's thread to call take() soon (any thread; must not block).
    explicit WorkerServingBackend(std::function<void()> wake);
    ~WorkerServingBackend() override;
    WorkerServingBackend(const WorkerServingBackend&) = delete;
    WorkerServingBackend& operator=(const WorkerServingBackend&) = delete;

    // ServingBackend, any thread.
    const ServedModel& model() const override;
    std::shared_ptr<RequestStream> submit(Submission submission, SubmitRefusal& refusal) override;
    void cancel(const std::shared_ptr<RequestStream>& stream) override;
    std::optional<std::string> unavailable() const override;

    // Any thread. 0: no limit.
    void setMaxWaiting(int32_t sequences);
    // Called with the metrics of each newly served model (the server renders them), on the
    // worker's thread with the backend's lock held: it must only store the pointer.
    void setMetricsListener(std::function<void(ServingMetrics*)> listener);
    ServingMetrics* metrics() const;
    // Ends every request of the server now: queued ones are refused, live ones get an abort
    // event (the handlers finish) and are aborted in the engine at its next step. For stopping
    // the HTTP server and for a worker that goes away.
    void abortAll(const std::string& why);
    // Requests admitted and not ended yet (streams).
    int32_t numLive() const;

    // Worker thread.
    // A newly loaded model; clears unavailable().
    void serve(ServedModel model, std::shared_ptr<const Tokenizer> tokenizer);
    // Why nothing is served ("" = serving the current model).
    void setUnavailable(const std::string& why);
    void take(std::vector<Pending>& pending, std::vector<std::shared_ptr<RequestStream>>& cancels);
    bool isCurrent(uint64_t generation) const;
    void setEngineWaiting(int32_t sequences) { engineWaiting_ = sequences; }
    // The stream is done (finished, refused, cancelled or aborted): forget it.
    void release(const RequestStream* stream);
    // The worker goes away: nothing wakes it any more; every request ends (abortAll).
    void detach();

  private:
    void pruneRetired(); // mu_ held

    mutable std::mutex mu_;
    std::function<void()> wake_;
    std::function<void(ServingMetrics*)> metricsListener_;
    std::shared_ptr<ServedGeneration> current_;
    struct Retired {
        std::shared_ptr<ServedGeneration> generation;
        std::chrono::steady_clock::time_point since;
    };
    std::vector<Retired> retired_;
    uint64_t nextGeneration_ = 1;
    std::string unavailable_ = "no model is loaded in the app";
    std::vector<Pending> pending_;
    int32_t pendingSequences_ = 0;
    std::vector<std::shared_ptr<RequestStream>> cancels_;
    std::unordered_map<const RequestStream*, std::shared_ptr<RequestStream>> live_;
    int32_t maxWaiting_ = 0;
    std::atomic<int32_t> engineWaiting_{0};
};

} // namespace llmwb
