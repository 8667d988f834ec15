// ServingLoop: the CLI's ServingBackend — one thread that owns the Engine and drives it, while
// HTTP handler threads submit requests and cancel them.
//
//   handler threads                         engine thread (run())
//   submit(prompt, params x n) --queue-->   drain: submissions -> Engine::add_request (admit or
//   cancel(stream)             --queue-->          refuse), cancels -> Engine::abort, calls
//   with_engine(fn)            --queue-->   step() while there is work; ServingMetrics::
//   RequestStream::wait_events <--push---          observe_step after each step; outputs pushed
//                                                  to their RequestStream; sleep on a condition
//                                                  variable when idle
//
// The engine is touched only on the engine thread (with_engine runs a function there, between
// steps: tests check consistency and free blocks with it). n > 1: n requests over the same
// prompt (prefix caching shares the prompt's full blocks). Shutdown: stop taking requests, let
// the live ones run for a grace period, then abort what is left (their streams end with
// finish_reason "abort").
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "app/server/serving_backend.h"
#include "engine/serving/engine.h"
#include "engine/serving/serving_metrics.h"

namespace llmwb {

struct ServingLoopOptions {
    // At most this many sequences waiting (queued here or in the engine's waiting queue) before
    // submit refuses with Overloaded; 0: no limit. A request is taken while none waits.
    int32_t max_waiting = 0;
};

class ServingLoop final : public ServingBackend {
  public:
    // `engine` and `metrics` (may be null) must outlive the loop. Starts the engine thread.
    ServingLoop(Engine& engine, ServingMetrics* metrics, ServedModel model,
                ServingLoopOptions options = {});
    ~ServingLoop() override; // shutdown(0 s) if not done yet
    ServingLoop(const ServingLoop&) = delete;
    ServingLoop& operator=(const ServingLoop&) = delete;

    const ServedModel& model() const override { return model_; }
    std::shared_ptr<RequestStream> submit(Submission submission, SubmitRefusal& refusal) override;
    void cancel(const std::shared_ptr<RequestStream>& stream) override;

    // Runs fn(engine) on the engine thread between two steps and waits for it.
    void with_engine(const std::function<void(Engine&)>& fn);
    // Stops taking requests, lets live ones run up to `grace`, aborts the rest, ends the thread.
    void shutdown(std::chrono::milliseconds grace);
    // Sequences queued or waiting in the engine (what max_waiting limits).
    int32_t num_waiting() const;
    // Requests admitted and not finished yet (sequences).
    int32_t num_live() const { return num_live_.load(); }

  private:
    struct Live {
        std::shared_ptr<RequestStream> stream;
        int32_t index = 0;
    };
    struct Pending {
        std::shared_ptr<RequestStream> stream;
        Submission submission;
    };
    void run();
    void admit(Pending& p);
    void abort_stream(RequestStream* stream, bool notify);
    void abort_all(); // shutdown: every live sequence ends with an abort event
    void dispatch(StepOutputs& out);

    Engine& engine_;
    ServingMetrics* metrics_;
    ServedModel model_;
    ServingLoopOptions options_;

    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::vector<Pending> pending_;
    int32_t pending_sequences_ = 0;
    std::vector<std::shared_ptr<RequestStream>> cancels_;
    std::vector<std::function<void()>> calls_;
    bool accepting_ = true, stop_ = false;
    EngineClock::time_point deadline_{};
    std::atomic<int32_t> engine_waiting_{0}, num_live_{0};
    std::atomic<bool> running_{true};

    // Engine thread only.
    std::unordered_map<RequestId, Live> live_;
    std::unordered_map<const RequestStream*, std::vector<RequestId>> ids_of_;

    std::thread thread_; // last: started once everything above exists
};

} // namespace llmwb
