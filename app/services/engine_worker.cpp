#include "app/services/engine_worker.h"
#include "app/services/engine_worker_private.h"
#include "app/services/engine_worker_think.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QLocale>
#include <QMutexLocker>
#include <algorithm>
#include <cmath>

#include "engine/backend/device_select.h"
#include "engine/chat/chat_template.h"
#include "engine/model/demo_model.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_info.h"
#include "engine/runtime/model_executor.h"
#include "engine/serving/draft_proposer.h"
#include "engine/serving/engine.h"
#include "engine/serving/memory_plan.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb {

namespace {

SamplingParams toParams(const SamplingSettings& s) {
    SamplingParams p;
    p.temperature = float(s.temperature);
    p.top_p = float(s.topP);
    p.top_k = s.topK;
    p.min_p = float(s.minP);
    p.repetition_penalty = float(s.repetitionPenalty);
    p.presence_penalty = float(s.presencePenalty);
    p.frequency_penalty = float(s.frequencyPenalty);
    p.max_tokens = std::max(1, s.maxTokens);
    if (s.seed >= 0)
        p.seed = uint64_t(s.seed);
    if (s.thinkingBudget >= 0)
        p.thinking_budget = s.thinkingBudget;
    return p;
}

} // namespace

namespace {

// What an engine "length" end was: the user's max tokens, the model's context, or the KV pool
// (which the engine's context limit also counts).
FinishReason refinedLength(int64_t promptTokens, int64_t outputTokens, int64_t askedMaxTokens,
                           int64_t contextTokens) {
    if (outputTokens >= askedMaxTokens)
        return FinishReason::Length;
    if (contextTokens > 0 && promptTokens + outputTokens >= contextTokens)
        return FinishReason::Context;
    return FinishReason::KvPool;
}

} // namespace

EngineWorker::EngineWorker(int cpuThreads, QObject* parent)
    : QObject(parent), cpuThreads_(cpuThreads), model_(std::make_unique<Model>()) {
    server_ = std::make_shared<WorkerServingBackend>([this] {
        QMetaObject::invokeMethod(this, &EngineWorker::serveQueued, Qt::QueuedConnection);
    });
    registerGenerationTypes();
    registerEngineViewTypes();
    sinceView_.start();
    clock_.start();
}

EngineWorker::~EngineWorker() {
    server_->detach(); // server requests end with "abort"; nothing queues calls to this any more
    qDeleteAll(active_);
    // A benchmark's session refers to the engine: it goes first.
    if (bench_)
        bench_->session.reset();
}

void EngineWorker::stop(quint64 requestId) {
    QMutexLocker lock(&mutex_);
    cancelled_.insert(requestId);
    anyCancelled_ = true;
    if (renderingRequest_ == requestId)
        renderCancel_ = true; // its chat template is running now
}

void EngineWorker::cancelLoad() {
    if (loading_)
        loadCancel_ = true;
}

void EngineWorker::stopAll() {
    shuttingDown_ = true;
    server_->setUnavailable("the app is closing");
    anyCancelled_ = true;
    renderCancel_ = true;
}

bool EngineWorker::takeCancelled(quint64 requestId) {
    QMutexLocker lock(&mutex_);
    return cancelled_.remove(requestId);
}

void EngineWorker::setTuning(const EngineTuning& tuning) {
    const EngineTuning t = tuning.clamped();
    const EngineTuning old = tuning_;
    tuning_ = t;
    if (!model_ || !model_->serving)
        return;
    if (bench_ && bench_->session) { // the run's engine keeps its settings; the chats' gets these
        emitView();
        return;
    }
    Engine& e = *model_->serving;
    if (t.maxNumSeqs != old.maxNumSeqs || t.maxNumBatchedTokens != old.maxNumBatchedTokens)
        e.set_limits(t.maxNumSeqs, t.maxNumBatchedTokens);
    if (t.numSpeculativeTokens != old.numSpeculativeTokens ||
        t.speculativeMethod != old.speculativeMethod || t.speculativeAuto != old.speculativeAuto)
        applySpeculation();
    if (t.blockSize != e.config().block_size) {
        rebuildPending_ = true;
        if (!e.has_unfinished()) {
            if (rebuildEngine()) // with the tuning's KV type
                model_->serving->step(model_->out);
            emitView();
            return;
        }
    } else {
        rebuildPending_ = false;
    }
    // A new KV type: pending until the next step, which preempts the running requests and
    // recomputes them in it (the pool is re-planned for its bytes per block).
    const bool kvSwitched = t.kvCacheDtype != old.kvCacheDtype && applyKvDtype(old.kvCacheDtype);
    if (t.gpuMemoryUtilization != old.gpuMemoryUtilization) {
        const QString refusal = checkUtilization(t.gpuMemoryUtilization);
        if (!refusal.isEmpty()) {
            // Refused: the utilization in force stays, and the view says so (the Tuning dock
            // puts its slider back).
            tuning_.gpuMemoryUtilization = old.gpuMemoryUtilization;
            utilizationRefusal_ = refusal;
            refusedUtilization_ = t.gpuMemoryUtilization;
            emitView();
            return;
        }
        utilizationRefusal_.clear();
        refusedUtilization_ = 0;
    }
    applyPoolPlan();
    if (!e.has_unfinished()) {
        e.step(model_->out); // nothing to schedule: applies the new plan now
        emitView();
    } else if (kvSwitched || !kvDtypeError_.isEmpty()) {
        emitView(); // the switch (or why not) shows now; the next step applies it
    }
}

// "" when a pool planned with `utilization` holds what the engine needs now (one block when
// idle; the longest running request alone otherwise); else why not, with the smallest value
// that works.
QString EngineWorker::checkUtilization(double utilization) const {
    const Engine& e = *model_->serving;
    MemoryBudget b = memoryBudget();
    b.utilization = utilization;
    b.fallback_when_short = false;
    const KvPoolShape shape = e.pool_shape(e.memory_plan().workspace_bytes);
    const int32_t minBlocks = e.has_unfinished() ? e.min_blocks_for_live() : 1;
    if (plan_memory(shape, b, minBlocks))
        return {};
    const QLocale loc;
    const QString asked = loc.toString(utilization, 'g', 4);
    const qint64 need =
        qint64(minBlocks) * kv_bytes_per_block(*shape.model, shape.block_size, shape.kv_dtype);
    const auto least = min_utilization(shape, b, minBlocks);
    const QString what =
        e.has_unfinished() ? tr("the running requests need %1 KV blocks (%2)")
                                 .arg(loc.toString(minBlocks), loc.formattedDataSize(need, 1))
                           : tr("the weights and the workspace leave no room for one KV block (%1)")
                                 .arg(loc.formattedDataSize(need, 1));
    if (!least)
        return tr("GPU memory utilization %1 is refused: %2, and even 1.0 is not enough.")
            .arg(asked, what);
    return tr("GPU memory utilization %1 is refused: %2. The smallest value that works now is "
              "%3.")
        .arg(asked, what, loc.toString(*least, 'g', 4));
}

// Re-plans the pool of the running engine from the tuning (taking effect before its next step).
void EngineWorker::applyPoolPlan() {
    const Status st = model_->serving->set_memory_budget(memoryBudget());
    replanError_ = st ? QString() : q(st.message());
}

// A new engine with the tuning's block size (the engine must be idle). False: the old one stays.
bool EngineWorker::rebuildEngine() {
    const EngineConfig ec = engineConfig(tuning_.blockSize);
    ModelExecutor& exec = *model_->backend.executor;
    // The executor's KV pool belongs to one engine at a time: the old engine goes first, and a
    // failure recreates it with its own settings (an empty cache).
    const EngineConfig previous = model_->serving->config();
    model_->serving.reset();
    auto serving = Engine::create(exec, *model_->tokenizer, ec);
    rebuildPending_ = false;
    if (!serving) {
        replanError_ = q(serving.message());
        auto old = Engine::create(exec, *model_->tokenizer, previous);
        if (old)
            model_->serving = std::move(*old);
        return false;
    }
    model_->serving = std::move(*serving);
    replanError_.clear();
    applyKvDtype(tuning_.kvCacheDtype); // a switch chosen while the old engine was busy
    applySpeculation();
    return true;
}

QString EngineWorker::renderChatPrompt(const GenerationRequest& request, std::string* prompt,
                                       bool* addSpecialTokens) {
    {
        QMutexLocker lock(&mutex_);
        renderingRequest_ = request.requestId;
        renderCancel_ = shuttingDown_ || cancelled_.contains(request.requestId);
    }
    QString err = buildPrompt(request, prompt, addSpecialTokens, &renderCancel_);
    QMutexLocker lock(&mutex_);
    renderingRequest_ = 0;
    return err;
}

QString EngineWorker::buildPrompt(const GenerationRequest& request, std::string* prompt,
                                  bool* addSpecialTokens, const std::atomic<bool>* cancel) const {
    const Tokenizer& tok = *model_->tokenizer;
    if (model_->chatTemplate) {
        nlohmann::ordered_json messages = nlohmann::ordered_json::array();
        for (const PromptMessage& m : request.messages)
            messages.push_back(
                {{"role", m.role.toStdString()}, {"content", m.content.toStdString()}});
        ChatRenderOptions opts;
        opts.add_generation_prompt = true;
        if (tok.valid_id(tok.bos_id()))
            opts.bos_token = tok.token_text(tok.bos_id());
        if (tok.valid_id(tok.eos_id()))
            opts.eos_token = tok.token_text(tok.eos_id());
        opts.cancel = cancel;
        opts.max_seconds = templateSeconds_;
        if (request.sampling.enableThinking >= 0)
            opts.enable_thinking = request.sampling.enableThinking == 1;
        Result<std::string> text = make_error("not rendered");
        try {
            text = render_chat(*model_->chatTemplate, messages, opts);
        } catch (const std::bad_alloc&) {
            return tr("The chat template failed: out of memory");
        } catch (const std::exception& e) {
            return tr("The chat template failed: %1").arg(QString::fromUtf8(e.what()));
        }
        if (!text)
            return tr("The chat template failed: %1").arg(q(text.message()));
        *prompt = std::move(*text);
        *addSpecialTokens = false; // the template writes the special tokens itself
        return {};
    }
    // No template: a plain transcript.
    std::string p;
    for (const PromptMessage& m : request.messages)
        p += m.role.toStdString() + ": " + m.content.toStdString() + "\n";
    p += "assistant:";
    *prompt = std::move(p);
    *addSpecialTokens = true;
    return {};
}

void EngineWorker::generate(const GenerationRequest& request) {
    GenerationStats stats;
    stats.requestId = request.requestId;
    stats.conversationId = request.conversationId;
    if (shuttingDown_ || takeCancelled(request.requestId)) {
        stats.finishReason = FinishReason::Aborted;
        emit finished(stats);
        return;
    }
    if (!model_ || !model_->serving) {
        emit failed(request.requestId, request.conversationId, tr("No model is loaded."));
        return;
    }
    if (bench_) { // starts when the benchmark ends (endBenchmark)
        heldGenerates_.push_back(request);
        emitView();
        return;
    }
    std::string prompt;
    bool addSpecial = true;
    if (const QString err = renderChatPrompt(request, &prompt, &addSpecial); !err.isEmpty()) {
        if (shuttingDown_ || takeCancelled(request.requestId)) { // Stop during the render
            stats.finishReason = FinishReason::Aborted;
            emit finished(stats);
            return;
        }
        emit failed(request.requestId, request.conversationId, err);
        return;
    }
    std::vector<int32_t> ids = model_->tokenizer->encode(prompt, addSpecial);
    SamplingParams params = toParams(request.sampling);
    if (Status st = params.validate(); !st) {
        emit failed(request.requestId, request.conversationId, q(st.message()));
        return;
    }
    // Leave room for at least one token in the context (the model's, or the KV pool's when that
    // is smaller: the engine's context limit is the smaller of the two).
    const int64_t room = model_->serving->context_limit() - int64_t(ids.size());
    const int64_t context = model_->model->config.max_position;
    if (room < 1) {
        const QLocale loc;
        const int64_t pool = int64_t(model_->serving->memory_plan().num_blocks) *
                             model_->serving->memory_plan().block_size;
        emit failed(request.requestId, request.conversationId,
                    context > 0 && int64_t(ids.size()) >= context
                        ? tr("The conversation (%1 tokens) no longer fits the context of the "
                             "model (%2 tokens); start a new chat or delete messages.")
                              .arg(loc.toString(qint64(ids.size())), loc.toString(qint64(context)))
                        : tr("The conversation (%1 tokens) no longer fits the KV cache pool "
                             "(%2 tokens; the model's context is %3): raise GPU memory "
                             "utilization in the Tuning dock, or start a new chat.")
                              .arg(loc.toString(qint64(ids.size())), loc.toString(qint64(pool)),
                                   loc.toString(qint64(context))));
        return;
    }
    const int64_t askedMaxTokens = params.max_tokens;
    params.max_tokens = int(std::min<int64_t>(params.max_tokens, room));
    auto id = model_->serving->add_request(std::move(ids), params);
    if (!id) {
        emit failed(request.requestId, request.conversationId,
                    model_->serving->weights_lost() // the model file changed: say what to do
                        ? tr("%1. Reload the model to go on.").arg(q(model_->serving->last_error()))
                        : q(id.message()));
        return;
    }
    auto* a = new Active;
    a->requestId = request.requestId;
    a->conversationId = request.conversationId;
    a->askedMaxTokens = askedMaxTokens;
    a->contextTokens = context;
    a->sinceSignal.start();
    active_.insert(*id, a);
    postStep();
}

void EngineWorker::runLoadTest(int count) {
    if (!model_ || !model_->serving || shuttingDown_ || bench_)
        return;
    const char* questions[] = {"What is paged attention?",
                               "Explain continuous batching.",
                               "Why does a KV cache grow with the context?",
                               "What is a prefix cache?",
                               "How does top-p sampling work?",
                               "What is speculative decoding?",
                               "Describe the attention mechanism.",
                               "What limits decode throughput?"};
    const std::string system =
        "You are a helpful assistant. Answer briefly and precisely, in plain words, "
        "for an engineer who knows how transformers work. ";
    for (int i = 0; i < count; ++i) {
        std::string prompt = system;
        prompt += questions[i % 8];
        for (int r = 0; r < i % 3; ++r) // different prompt lengths
            prompt += " Please give an example and mention the trade-offs.";
        SamplingParams p;
        p.temperature = 0.8f;
        p.seed = uint64_t(1000 + i);
        p.ignore_eos = true;
        p.max_tokens = 24 + (i * 37) % 140;
        std::vector<int32_t> ids = model_->tokenizer->encode(prompt, true);
        auto id = model_->serving->add_request(std::move(ids), p);
        if (!id)
            continue;
        auto* a = new Active;
        a->loadTest = true;
        a->sinceSignal.start();
        active_.insert(*id, a);
        view_.loadTestRequests.insert(*id);
        ++loadTestLeft_;
    }
    postStep();
}

void EngineWorker::postStep() {
    if (stepPosted_)
        return;
    stepPosted_ = true;
    QMetaObject::invokeMethod(this, &EngineWorker::runStep, Qt::QueuedConnection);
}

void EngineWorker::finishActive(qint64 engineId, Active& a, FinishReason reason) {
    if (a.stream) { // a server request: its stream ends with the reason
        RequestOutput o;
        o.id = engineId;
        o.finished = true;
        o.finish = reason;
        pushServed(engineId, a, std::move(o));
        return;
    }
    if (a.loadTest) {
        ++loadTestDone_;
        if (--loadTestLeft_ == 0) {
            emit loadTestFinished(loadTestDone_);
            loadTestDone_ = 0;
        }
    } else {
        if (!a.pending.isEmpty())
            emit token(a.requestId, a.conversationId, a.pending);
        GenerationStats stats;
        stats.requestId = a.requestId;
        stats.conversationId = a.conversationId;
        stats.promptTokens = a.metrics.prompt_tokens;
        stats.completionTokens = a.metrics.output_tokens;
        stats.ttftMs = a.metrics.ttft_ms;
        stats.tokensPerSecond = a.metrics.tpot_ms > 0 ? 1000.0 / a.metrics.tpot_ms : 0;
        stats.totalMs = a.metrics.e2e_ms;
        stats.finishReason = reason == FinishReason::Length
                                 ? refinedLength(stats.promptTokens, stats.completionTokens,
                                                 a.askedMaxTokens, a.contextTokens)
                                 : reason;
        takeCancelled(a.requestId); // a stop that arrived after the end
        emit finished(stats);
    }
    delete active_.take(engineId);
}

void EngineWorker::failActive(qint64 engineId, Active& a, const QString& message) {
    if (a.loadTest || a.stream) {
        finishActive(engineId, a, FinishReason::Aborted); // counted as done
        return;
    }
    if (!a.pending.isEmpty())
        emit token(a.requestId, a.conversationId, a.pending);
    takeCancelled(a.requestId);
    emit failed(a.requestId, a.conversationId, message);
    delete active_.take(engineId);
}

void EngineWorker::applyCancellations() {
    if (!anyCancelled_.exchange(false))
        return;
    const bool all = shuttingDown_;
    const auto ids = active_.keys();
    for (qint64 id : ids) {
        Active* a = active_.value(id);
        if (!all && (a->loadTest || a->stream || !takeCancelled(a->requestId)))
            continue;
        model_->serving->abort(id);
        finishActive(id, *a, FinishReason::Aborted);
    }
}

void EngineWorker::cancelEverything() {
    const auto ids = active_.keys();
    for (qint64 id : ids) {
        if (model_ && model_->serving)
            model_->serving->abort(id);
        finishActive(id, *active_.value(id), FinishReason::Aborted);
    }
    view_.loadTestRequests.clear();
}

void EngineWorker::runStep() {
    stepPosted_ = false;
    if (!model_ || !model_->serving || (bench_ && bench_->session))
        return; // a benchmark run steps its own engine (benchStep)
    Engine& engine = *model_->serving;
    applyCancellations();
    if (!engine.has_unfinished()) {
        emitView();
        return;
    }
    StepOutputs& out = model_->out;
    engine.step(out);
    recordStep(out);
    if (ServingMetrics* m = server_->metrics())
        m->observe_step(out, engine);
    server_->setEngineWaiting(engine.num_waiting_sequences());
    for (RequestOutput& o : out.outputs) {
        if (think_ && thinkOutput(o))
            continue; // a Think harder sample (engine_worker_think.cpp)
        Active* a = active_.value(o.id);
        if (!a)
            continue;
        a->metrics = o.metrics;
        if (a->stream) { // a server request: the handler formats it
            pushServed(o.id, *a, std::move(o));
            continue;
        }
        if (!a->loadTest) {
            a->pending += q(o.text);
            if (!a->pending.isEmpty() && !o.finished &&
                a->sinceSignal.elapsed() >= tokenIntervalMs_) {
                emit token(a->requestId, a->conversationId, a->pending);
                a->pending.clear();
                a->sinceSignal.restart();
            }
        }
        // The worker aborts cancelled requests itself (applyCancellations): an Aborted
        // request here is one the backend failed.
        if (o.finished && o.finish == FinishReason::Aborted)
            failActive(o.id, *a,
                       tr("The backend failed: %1")
                           .arg(engine.last_error().empty() ? tr("unknown error")
                                                            : q(engine.last_error())));
        else if (o.finished && o.finish == FinishReason::Error) // the model file changed
            failActive(o.id, *a, tr("%1. Reload the model to go on.").arg(q(engine.last_error())));
        else if (o.finished)
            finishActive(o.id, *a, o.finish);
    }
    if (rebuildPending_ && !engine.has_unfinished())
        rebuildEngine(); // `engine` is gone after this line
    if (!model_->serving)
        return; // the rebuild and its fallback failed (replanError_ says why)
    if (deviceReloadPending_ && model_->serving && !model_->serving->has_unfinished()) {
        emitView();
        reloadOnNewDevice(); // replaces model_
        return;
    }
    if (sinceView_.elapsed() >= snapshotIntervalMs_ || !model_->serving->has_unfinished())
        emitView();
    if (model_->serving->has_unfinished())
        postStep();
}

// The step for the next view: its record (batch timeline), its tokens (rates), and the first
// tokens it sampled (TTFT samples).
void EngineWorker::recordStep(const StepOutputs& out) {
    if (!busy_) { // the first step after idle: rates count from now, not from the last view
        busy_ = true;
        sinceView_.restart();
        tokensSinceView_ = promptTokensSinceView_ = 0;
    }
    if (out.step_index >= 0) {
        StepRecord rec;
        rec.step = out.step_index;
        rec.ms = out.step_ms;
        rec.prefillTokens = out.num_prefill_tokens;
        rec.decodeTokens = out.num_decode_tokens;
        rec.preempted = int(out.preempted.size());
        promptTokensSinceView_ += out.num_prefill_tokens;
        rec.segments.reserve(qsizetype(out.scheduled.size()));
        for (const ScheduledRequest& s : out.scheduled) {
            StepSegment seg{s.id, s.num_scheduled, s.prefill, s.num_draft, 0};
            if (s.num_draft > 0) // accepted drafts = tokens out beyond the target's own one
                for (const RequestOutput& o : out.outputs)
                    if (o.id == s.id)
                        seg.accepted = std::clamp(int(o.new_token_ids.size()) - 1, 0, s.num_draft);
            rec.segments.push_back(seg);
        }
        view_.steps.push_back(std::move(rec));
        if (view_.steps.size() > 1000) // nobody collects them: keep the newest
            view_.steps.remove(0, view_.steps.size() - 1000);
    }
    for (const RequestOutput& o : out.outputs) {
        tokensSinceView_ += qint64(o.new_token_ids.size());
        // Its first tokens came in this step.
        if (!o.new_token_ids.empty() && o.metrics.ttft_ms > 0 &&
            o.metrics.output_tokens == int32_t(o.new_token_ids.size())) {
            view_.ttfts.push_back({o.id, o.metrics.ttft_ms});
            if (view_.ttfts.size() > 1000)
                view_.ttfts.remove(0, view_.ttfts.size() - 1000);
        }
    }
}

void EngineWorker::emitView() {
    if (!model_ || !model_->serving)
        return;
    model_->serving->snapshot(view_.snapshot);
    const double secs = sinceView_.elapsed() / 1000.0;
    view_.tokensPerSecond = secs > 0 ? double(tokensSinceView_) / secs : 0;
    view_.promptTokensPerSecond = secs > 0 ? double(promptTokensSinceView_) / secs : 0;
    if (!model_->serving->has_unfinished()) {
        view_.tokensPerSecond = view_.promptTokensPerSecond = 0;
        busy_ = false;
    }
    view_.timeMs = clock_.elapsed();
    view_.tuning = tuning_;
    if (!bench_ || !bench_->session)
        view_.tuning.blockSize = model_->serving->config().block_size;
    view_.benchmarking = bench_ != nullptr;
    view_.heldChats = int(heldGenerates_.size());
    view_.replanError = replanError_;
    view_.speculationError = speculationError_;
    view_.draftWeightBytes = model_->draft ? model_->draft->weight_bytes() : 0;
    view_.draftKvBytes = model_->draft ? model_->draft->kv_bytes() : 0;
    view_.utilizationRefusal = utilizationRefusal_;
    view_.refusedUtilization = refusedUtilization_;
    view_.rebuildPending = rebuildPending_;
    const ModelExecutor& exec = *model_->backend.executor;
    view_.kvDtype = exec.kv_dtype();
    view_.autoKvDtype = model_->autoKv;
    view_.pendingKvDtype = model_->serving->pending_kv_dtype();
    view_.supportedKvDtypes.clear();
    for (KvDtype t : kAllKvDtypes)
        if (exec.supports_kv_dtype(t))
            view_.supportedKvDtypes.push_back(t);
    view_.kvSwitch = kvSwitch_;
    // The engine could not make the pool of the new type (it went back to the old one): say so
    // where the switch was asked for.
    const KvDtype want = wantedKvDtype(*model_);
    if (kvDtypeError_.isEmpty() && !bench_ && want != exec.kv_dtype() &&
        view_.pendingKvDtype == exec.kv_dtype() && exec.supports_kv_dtype(want) &&
        !model_->serving->last_error().empty())
        kvDtypeError_ = tr("The KV cache stays %1: %2")
                            .arg(QString::fromLatin1(kv_dtype_name(exec.kv_dtype())),
                                 q(model_->serving->last_error()));
    view_.kvDtypeError = kvDtypeError_;
    view_.refusedKvDtype = refusedKvDtype_;
    view_.kvCalibration = kvCalibration_;
    view_.requestLabels.clear();
    for (auto it = active_.cbegin(); it != active_.cend(); ++it)
        if (!it.value()->label.isEmpty())
            view_.requestLabels.insert(it.key(), it.value()->label);
    // Forget load test ids once they are gone from the snapshot.
    if (loadTestLeft_ == 0)
        view_.loadTestRequests.clear();
    emit engineView(view_);
    view_.steps.clear();
    view_.ttfts.clear();
    tokensSinceView_ = 0;
    promptTokensSinceView_ = 0;
    sinceView_.restart();
}

} // namespace llmwb
