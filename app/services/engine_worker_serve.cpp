// The engine worker's server requests (the Local server): WorkerServingBackend's queue taken
// between steps, outputs pushed to the requests' streams, the model served after each load.
// Semantics as ServingLoop's (app/server/serving_loop.cpp).
#include "app/services/engine_worker.h"
#include "app/services/engine_worker_private.h"

#include <ctime>

namespace llmwb {

namespace {

// "API · curl/8.5.0 · 127.0.0.1" (the User-Agent cut at 40 characters; "API · 127.0.0.1"
// without one).
QString clientLabel(const Submission& s) {
    QString ua = QString::fromStdString(s.user_agent).simplified();
    if (ua.size() > 40)
        ua = ua.left(39) + QChar(0x2026);
    QString label = QStringLiteral("API");
    if (!ua.isEmpty())
        label += QStringLiteral(" · ") + ua;
    if (!s.client_address.empty())
        label += QStringLiteral(" · ") + QString::fromStdString(s.client_address);
    return label;
}

} // namespace

void EngineWorker::updateServing() {
    if (model_ && model_->serving && servedModel_ != model_.get()) { // a newly loaded model
        servedModel_ = model_.get();
        ServedModel m;
        m.name = model_->metadata.name.toStdString();
        m.root = model_->loadPath.toStdString();
        m.max_model_len = model_->serving->context_limit();
        m.created = static_cast<int64_t>(std::time(nullptr));
        set_chat_template(m, model_->model->chat_template);
        server_->serve(std::move(m), model_->tokenizer);
    }
    if (loading_)
        server_->setUnavailable("a model is loading in the app; retry shortly");
    else if (!model_ || !model_->serving)
        server_->setUnavailable("no model is loaded in the app");
    else if (bench_)
        server_->setUnavailable("the app is running a benchmark; retry when it ends");
    else
        server_->setUnavailable({});
}

void EngineWorker::serveQueued() {
    std::vector<WorkerServingBackend::Pending> pending;
    std::vector<std::shared_ptr<RequestStream>> cancels;
    server_->take(pending, cancels);
    for (const auto& s : cancels)
        abortServedStream(s.get());
    for (WorkerServingBackend::Pending& p : pending) {
        const char* why = nullptr;
        if (shuttingDown_)
            why = "the app is closing";
        else if (!model_ || !model_->serving)
            why = "no model is loaded in the app";
        else if (bench_)
            why = "the app is running a benchmark; retry when it ends";
        else if (!server_->isCurrent(p.generation))
            why = "the app's model was replaced while the request waited; retry";
        if (why) {
            p.stream->refuse(why);
            server_->release(p.stream.get());
            continue;
        }
        admitServed(p);
    }
    if (!model_ || !model_->serving || (bench_ && bench_->session))
        return;
    Engine& engine = *model_->serving;
    if (engine.has_unfinished()) {
        postStep();
    } else if (servedAbortPending_) {
        // As ServingLoop: one step after a cancel even when nothing is left to run, so the
        // metrics see the aborted requests and the gauges drop.
        engine.step(model_->out);
        if (ServingMetrics* m = server_->metrics())
            m->observe_step(model_->out, engine);
        emitView();
    }
    servedAbortPending_ = false;
    server_->setEngineWaiting(engine.num_waiting_sequences());
}

void EngineWorker::admitServed(WorkerServingBackend::Pending& p) {
    Engine& engine = *model_->serving;
    // n > 1: one prefill, the choices forked from it (as ServingLoop::admit). The group is
    // refused whole: no choice is added when one is invalid.
    auto added = engine.add_request_group(p.submission.prompt_ids, p.submission.choices);
    if (!added) {
        p.stream->refuse(added.message());
        server_->release(p.stream.get());
        return;
    }
    const std::vector<RequestId>& ids = *added;
    const QString label = clientLabel(p.submission);
    for (size_t i = 0; i < ids.size(); ++i) {
        auto* a = new Active;
        a->stream = p.stream;
        a->streamIndex = int32_t(i);
        a->label = ids.size() > 1 ? label + QStringLiteral(" · n%1").arg(i) : label;
        a->sinceSignal.start();
        active_.insert(ids[i], a);
    }
    p.stream->admit();
}

bool EngineWorker::pushServed(qint64 engineId, Active& a, RequestOutput&& o) {
    const bool finished = o.finished;
    a.stream->push(a.streamIndex, std::move(o));
    if (!finished)
        return false;
    std::shared_ptr<RequestStream> stream = a.stream;
    delete active_.take(engineId);
    for (const Active* other : std::as_const(active_))
        if (other->stream == stream)
            return true;
    server_->release(stream.get()); // its last sequence ended
    return true;
}

void EngineWorker::abortServedStream(const RequestStream* stream) {
    const auto ids = active_.keys();
    for (qint64 id : ids) {
        Active* a = active_.value(id);
        if (a->stream.get() != stream)
            continue;
        if (model_ && model_->serving && model_->serving->abort(id)) {
            if (ServingMetrics* m = server_->metrics())
                m->observe_aborted(id);
            servedAbortPending_ = true;
        }
        delete active_.take(id); // a cancelled stream gets no more events
    }
    server_->release(stream);
}

} // namespace llmwb
