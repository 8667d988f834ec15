#include "app/server/serving_loop.h"

#include <future>

namespace llmwb {

ServingLoop::ServingLoop(Engine& engine, ServingMetrics* metrics, ServedModel model,
                         ServingLoopOptions options)
    : engine_(engine), metrics_(metrics), model_(std::move(model)), options_(options),
      thread_([this] { run(); }) {}

ServingLoop::~ServingLoop() {
    shutdown(std::chrono::milliseconds(0));
}

int32_t ServingLoop::num_waiting() const {
    std::lock_guard lk(mu_);
    return pending_sequences_ + engine_waiting_.load();
}

std::shared_ptr<RequestStream> ServingLoop::submit(Submission submission, SubmitRefusal& refusal) {
    const auto n = static_cast<int32_t>(submission.choices.size());
    refusal = SubmitRefusal::None;
    std::shared_ptr<RequestStream> stream;
    {
        std::lock_guard lk(mu_);
        if (!accepting_) {
            refusal = SubmitRefusal::ShuttingDown;
            return nullptr;
        }
        const int32_t waiting = pending_sequences_ + engine_waiting_.load();
        if (options_.max_waiting > 0 && waiting > 0 && waiting + n > options_.max_waiting) {
            refusal = SubmitRefusal::Overloaded;
            return nullptr;
        }
        stream = std::make_shared<RequestStream>(n);
        pending_sequences_ += n;
        pending_.push_back(Pending{stream, std::move(submission)});
    }
    cv_.notify_all();
    return stream;
}

void ServingLoop::cancel(const std::shared_ptr<RequestStream>& stream) {
    if (!stream)
        return;
    {
        std::lock_guard lk(mu_);
        cancels_.push_back(stream);
    }
    cv_.notify_all();
}

void ServingLoop::with_engine(const std::function<void(Engine&)>& fn) {
    if (std::this_thread::get_id() == thread_.get_id()) {
        fn(engine_);
        return;
    }
    std::promise<void> done;
    {
        std::unique_lock lk(mu_);
        if (!running_) { // the engine thread has ended: nothing else touches the engine
            lk.unlock();
            fn(engine_);
            return;
        }
        calls_.push_back([&] {
            fn(engine_);
            done.set_value();
        });
    }
    cv_.notify_all();
    done.get_future().wait();
}

void ServingLoop::shutdown(std::chrono::milliseconds grace) {
    {
        std::lock_guard lk(mu_);
        if (!stop_) {
            accepting_ = false;
            stop_ = true;
            deadline_ = EngineClock::now() + grace;
        } else {
            deadline_ = std::min(deadline_, EngineClock::now() + grace);
        }
    }
    cv_.notify_all();
    if (thread_.joinable() && std::this_thread::get_id() != thread_.get_id())
        thread_.join();
}

void ServingLoop::admit(Pending& p) {
    // n > 1: one prefill, the choices forked from it (Engine::add_request_group).
    auto added = engine_.add_request_group(p.submission.prompt_ids, p.submission.choices);
    if (!added) {
        p.stream->refuse(added.message());
        return;
    }
    const std::vector<RequestId>& ids = *added;
    for (size_t i = 0; i < ids.size(); ++i)
        live_[ids[i]] = Live{p.stream, static_cast<int32_t>(i)};
    ids_of_[p.stream.get()] = ids;
    num_live_ += static_cast<int32_t>(ids.size());
    p.stream->admit();
}

void ServingLoop::abort_stream(RequestStream* stream, bool notify) {
    auto it = ids_of_.find(stream);
    if (it == ids_of_.end())
        return;
    for (RequestId id : it->second) {
        auto lv = live_.find(id);
        if (lv == live_.end())
            continue; // finished already
        if (engine_.abort(id) && metrics_)
            metrics_->observe_aborted(id);
        if (notify) {
            RequestOutput o;
            o.id = id;
            o.finished = true;
            o.finish = FinishReason::Aborted;
            lv->second.stream->push(lv->second.index, std::move(o));
        }
        live_.erase(lv);
        --num_live_;
    }
    ids_of_.erase(it);
}

void ServingLoop::abort_all() {
    std::vector<const RequestStream*> streams;
    for (const auto& [s, ids] : ids_of_)
        streams.push_back(s);
    for (const RequestStream* s : streams)
        abort_stream(const_cast<RequestStream*>(s), true);
}

void ServingLoop::dispatch(StepOutputs& out) {
    for (RequestOutput& o : out.outputs) {
        auto it = live_.find(o.id);
        if (it == live_.end())
            continue;
        const bool finished = o.finished;
        const Live lv = it->second;
        lv.stream->push(lv.index, std::move(o));
        if (finished) {
            live_.erase(it);
            --num_live_;
            auto& ids = ids_of_[lv.stream.get()];
            bool any = false;
            for (RequestId id : ids)
                any |= live_.count(id) > 0;
            if (!any)
                ids_of_.erase(lv.stream.get());
        }
    }
}

void ServingLoop::run() {
    StepOutputs out;
    for (;;) {
        std::vector<Pending> pending;
        std::vector<std::shared_ptr<RequestStream>> cancels;
        std::vector<std::function<void()>> calls;
        bool stopping = false, past_deadline = false;
        {
            std::unique_lock lk(mu_);
            cv_.wait(lk, [&] {
                return stop_ || !pending_.empty() || !cancels_.empty() || !calls_.empty() ||
                       engine_.has_unfinished();
            });
            pending.swap(pending_);
            pending_sequences_ = 0;
            cancels.swap(cancels_);
            calls.swap(calls_);
            stopping = stop_;
            past_deadline = stop_ && EngineClock::now() >= deadline_;
        }
        for (auto& call : calls)
            call();
        for (const auto& s : cancels)
            abort_stream(s.get(), false);
        for (Pending& p : pending) {
            if (stopping)
                p.stream->refuse("the server is shutting down");
            else
                admit(p);
        }
        if (stopping && (past_deadline || live_.empty())) {
            abort_all();
            // Whatever is left in the engine (nothing normally) goes too.
            engine_waiting_ = 0;
            break;
        }
        // After a cancel, one step even when nothing is left to run (it schedules nothing): the
        // metrics see the aborted requests' figures and the gauges drop to what is left.
        if (engine_.has_unfinished() || !cancels.empty()) {
            engine_.step(out);
            if (metrics_)
                metrics_->observe_step(out, engine_);
            dispatch(out);
        }
        engine_waiting_ = engine_.num_waiting_sequences();
    }
    // Calls that arrive from now on run on the caller's thread (with_engine checks running_);
    // the ones queued meanwhile run here.
    std::vector<std::function<void()>> calls;
    {
        std::lock_guard lk(mu_);
        running_ = false;
        calls.swap(calls_);
    }
    for (auto& call : calls)
        call();
}

} // namespace llmwb
