// ServingBackend: what the OpenAI server needs from whoever drives the engine — the model it
// serves (name, context, tokenizer, chat template), and submit / cancel of requests whose
// outputs come back through a RequestStream. The engine is not thread safe: one thread drives
// it, and HTTP handler threads talk to that thread only through this interface. The CLI's
// ServingLoop (serving_loop.h) implements it with a thread of its own; the desktop app's engine
// worker (which already owns an Engine in a QThread) can implement it later to host server
// requests in the same batch as its chats.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/runtime/sampling_params.h"
#include "engine/serving/output_processor.h"
#include "engine/util/result.h"

namespace llmwb {

class Tokenizer;

// The model behind the server, fixed while it serves.
struct ServedModel {
    std::string name;                     // the id clients send as "model" (--served-model-name)
    std::string root;                     // the model's path
    int64_t max_model_len = 0;            // the model's context in tokens
    int64_t created = 0;                  // unix time the server started
    const Tokenizer* tokenizer = nullptr; // thread safe (immutable)
    // The model's chat template, parsed once (rendering is const); null with
    // chat_template_error saying why (no template, or one the interpreter refuses).
    std::shared_ptr<const ChatTemplate> chat_template;
    std::string chat_template_error;
};

// Fills model.chat_template (or chat_template_error) from a template source.
void set_chat_template(ServedModel& model, const std::optional<std::string>& source);

// One output of one choice of a request (choice = index among its n sequences).
struct StreamEvent {
    int32_t index = 0;
    RequestOutput output;
};

// The outputs of one submitted request (n sequences), from the engine thread to one HTTP handler
// thread: a small thread-safe queue with a condition variable. The engine side reports admission
// (the engine accepted every sequence) or a refusal, then events; the handler side waits.
class RequestStream {
  public:
    explicit RequestStream(int32_t n) : n_(n) {}

    // Engine side.
    void admit();
    void refuse(std::string message); // add_request failed: nothing of the request runs
    void push(int32_t index, RequestOutput&& output);

    // Handler side. Waits up to `timeout` for admission or refusal; nullopt while undecided,
    // else ok or the refusal message.
    std::optional<Status> wait_admitted(std::chrono::milliseconds timeout);
    // Waits up to `timeout` for events and moves all queued ones to `out` (appended). Returns
    // false when nothing came.
    bool wait_events(std::vector<StreamEvent>& out, std::chrono::milliseconds timeout);
    // Every sequence finished (its last event may still be queued).
    bool all_finished() const;
    int32_t n() const { return n_; }

  private:
    const int32_t n_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<StreamEvent> events_;
    bool decided_ = false;
    std::string refused_;
    int32_t finished_ = 0;
};

// Why a submission was not even queued.
enum class SubmitRefusal : uint8_t { None, Overloaded, ShuttingDown, NotReady };

struct Submission {
    std::vector<int32_t> prompt_ids;
    std::vector<SamplingParams> choices; // one per sequence (n > 1: seeds seed, seed+1, ...)
    // Who asked (for views that label requests by client): the peer's address and User-Agent.
    std::string client_address, user_agent;
};

class ServingBackend {
  public:
    virtual ~ServingBackend() = default;
    virtual const ServedModel& model() const = 0;
    // Queues a request; the stream reports admission or refusal, then outputs. Null with
    // `refusal` set when it cannot be queued (too many waiting, shutting down, not loaded).
    virtual std::shared_ptr<RequestStream> submit(Submission submission,
                                                  SubmitRefusal& refusal) = 0;
    // Aborts what is left of the request (a client that went away); its blocks are freed at the
    // next step. The stream gets no more events. Safe to call more than once or after the end.
    virtual void cancel(const std::shared_ptr<RequestStream>& stream) = 0;
    // Why the backend serves nothing now (no model, a model loading, a benchmark running), or
    // nullopt when it serves. While set, model() may be stale and the model and generation
    // routes answer 503 with this text.
    virtual std::optional<std::string> unavailable() const { return std::nullopt; }
};

} // namespace llmwb
