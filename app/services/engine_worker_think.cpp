// The engine worker's Think harder runs (issue 20): a ladder of budgets over a task set on the
// loaded model. Sample and thinking-budget rungs add every question's request group
// (Engine::add_request_group: one prefill, n forks) to the chat engine, whose step loop (runStep)
// hands their outputs here (thinkOutput); chats and server requests share the batch meanwhile.
// Beam rungs run beam_search one question per queued call, when nothing else is in the engine.
#include <QDateTime>
#include <QFileInfo>
#include <QTimer>
#include <algorithm>

#include "app/services/engine_worker.h"
#include "app/services/engine_worker_private.h"
#include "app/services/engine_worker_think.h"
#include "engine/runtime/model_executor.h"

namespace llmwb {

namespace {

QString thinkQ(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace

void EngineWorker::cancelThink() {
    thinkCancel_ = true;
    QMetaObject::invokeMethod(this, &EngineWorker::thinkStep, Qt::QueuedConnection);
}

void EngineWorker::runThink(const ThinkPlan& plan) {
    auto refuse = [&](const QString& why) {
        ThinkRunOutcome out;
        out.planId = plan.id;
        out.run = {
            {"name", plan.name.toStdString()}, {"status", "failed"}, {"error", why.toStdString()}};
        emit thinkFinished(out);
    };
    if (think_)
        return refuse(tr("Think harder is already running."));
    if (bench_)
        return refuse(tr("A benchmark is running."));
    if (!model_ || !model_->serving || loading_)
        return refuse(tr("No model is loaded."));
    if (const QString why = plan.validate(); !why.isEmpty())
        return refuse(why);
    auto job = std::make_unique<ThinkJob>();
    job->plan = plan;
    job->model = model_.get();
    job->rungs = *parse_think_ladder(plan.ladder.toStdString());
    const Tokenizer& tok = *model_->tokenizer;
    const bool canThink = model_->metadata.hasThinkTokens;
    for (const ThinkRung& r : job->rungs)
        if (r.kind == ThinkRungKind::ThinkingBudget && !canThink)
            return refuse(tr("This model has no <think> and </think> tokens: thinking budgets "
                             "do not apply."));
    if (plan.taskKind == QLatin1String("file")) {
        auto tasks = load_tasks_jsonl(plan.taskFile.toStdString());
        if (!tasks)
            return refuse(thinkQ(tasks.message()));
        job->tasks = std::move(*tasks);
        if (int(job->tasks.size()) > plan.count)
            job->tasks.resize(size_t(plan.count));
    } else {
        TaskSetSpec spec;
        spec.kind =
            plan.taskKind == QLatin1String("logic") ? TaskKind::Logic : TaskKind::Arithmetic;
        spec.level = plan.level;
        job->generated = spec;
        job->tasks = generate_tasks(spec, plan.count, plan.taskSeed);
    }
    // Each question as the chat sends it: one user turn through the model's chat template.
    for (const ReasoningTask& t : job->tasks) {
        GenerationRequest turn;
        turn.messages = {{QStringLiteral("user"), thinkQ(t.question)}};
        std::string prompt;
        bool addSpecial = true;
        if (const QString err = buildPrompt(turn, &prompt, &addSpecial, &shuttingDown_);
            !err.isEmpty())
            return refuse(tr("The chat template failed on a question: %1").arg(err));
        job->prompts.push_back(tok.encode(prompt, addSpecial));
    }
    job->base.temperature = float(plan.temperature);
    job->base.max_tokens = plan.maxTokens;
    job->base.seed = plan.seed;
    nlohmann::ordered_json& run = job->run;
    run["name"] = plan.name.isEmpty() ? plan.taskSetName().toStdString() : plan.name.toStdString();
    run["date"] =
        QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")).toStdString();
    run["model"] = model_->metadata.name.toStdString();
    run["device"] = model_->backend.executor->device_name();
    run["task_set"] = plan.taskSetName().toStdString();
    run["count"] = job->tasks.size();
    run["task_seed"] = plan.taskSeed;
    run["ladder"] = think_ladder_text(job->rungs);
    run["temperature"] = plan.temperature;
    run["max_tokens"] = plan.maxTokens;
    run["seed"] = plan.seed;
    run["price_per_hour"] = plan.pricePerHour;
    nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
    for (const ReasoningTask& t : job->tasks)
        tasks.push_back({{"question", t.question}, {"answer", t.answer}});
    run["tasks"] = std::move(tasks);
    job->clock.start();
    job->sinceProgress.start();
    think_ = std::move(job);
    thinking_ = true;
    thinkCancel_ = false;
    emitThinkProgress(tr("Running"), true);
    postThinkStep(0);
}

void EngineWorker::postThinkStep(int delayMs) {
    if (delayMs <= 0)
        QMetaObject::invokeMethod(this, &EngineWorker::thinkStep, Qt::QueuedConnection);
    else
        QTimer::singleShot(delayMs, this, &EngineWorker::thinkStep);
}

void EngineWorker::emitThinkProgress(const QString& stage, bool force) {
    if (!think_ || (!force && think_->sinceProgress.elapsed() < 100))
        return;
    ThinkJob& job = *think_;
    job.sinceProgress.restart();
    ThinkProgress p;
    p.planId = job.plan.id;
    p.rungs = int(job.rungs.size());
    p.rung = int(std::min(job.rung, job.rungs.size() - 1));
    p.rungLabel = thinkQ(think_rung_label(job.rungs[size_t(p.rung)]));
    p.questions = int(job.tasks.size());
    p.questionsDone = job.questionsDone;
    p.stage = stage;
    p.elapsedS = job.clock.elapsed() / 1000.0;
    p.done = job.summaries;
    emit thinkProgress(p);
}

void EngineWorker::thinkStep() {
    if (!think_)
        return;
    ThinkJob& job = *think_;
    if (job.model != model_.get() || !model_->serving)
        return endThink(QStringLiteral("failed"), tr("The model was replaced."));
    if (!job.failure.isEmpty())
        return endThink(QStringLiteral("failed"), job.failure);
    if (thinkCancel_.exchange(false) || shuttingDown_)
        return endThink(QStringLiteral("cancelled"), tr("Cancelled by the user."));
    if (job.rung >= job.rungs.size())
        return endThink(QStringLiteral("completed"), {});
    const ThinkRung& rung = job.rungs[job.rung];
    Engine& engine = *model_->serving;
    if (!job.submitted) {
        job.submitted = true;
        job.current = ThinkRungResult{};
        job.current.rung = rung;
        job.questionsDone = 0;
        job.nextQuestion = 0;
        job.pending.clear();
        job.samples.assign(job.tasks.size(), {});
        job.left.assign(job.tasks.size(), 0);
        job.scored.assign(job.tasks.size(), {});
        job.rungClock.start();
        if (rung.kind != ThinkRungKind::Beam) {
            const auto choices = think_rung_choices(rung, job.base);
            for (size_t q = 0; q < job.tasks.size(); ++q) {
                auto ids = engine.add_request_group(job.prompts[q], choices);
                if (!ids)
                    return endThink(QStringLiteral("failed"),
                                    tr("Question %1: %2").arg(q + 1).arg(thinkQ(ids.message())));
                job.samples[q].resize(ids->size());
                job.left[q] = int(ids->size());
                for (size_t c = 0; c < ids->size(); ++c)
                    job.pending.insert((*ids)[c], {int(q), int(c)});
            }
            emitThinkProgress(tr("Running %1").arg(thinkQ(think_rung_label(rung))), true);
            postStep(); // runStep steps them with the chats; thinkOutput collects
            return;
        }
    }
    if (rung.kind != ThinkRungKind::Beam)
        return; // runStep drives sample rungs
    // Beam: one question per call, when the engine has nothing else (its steps are the search's).
    if (engine.has_unfinished()) {
        emitThinkProgress(tr("Waiting for the chats that are generating to finish"), false);
        postThinkStep(20);
        return;
    }
    const size_t q = job.nextQuestion++;
    const TaskSetSpec* gen = job.generated ? &*job.generated : nullptr;
    auto res =
        think_run_question(engine, job.prompts[q], rung, job.base, gen, job.tasks[q], int(q));
    if (!res)
        return endThink(QStringLiteral("failed"),
                        tr("Question %1: %2").arg(q + 1).arg(thinkQ(res.message())));
    job.scored[q] = std::move(*res);
    ++job.questionsDone;
    emitView();
    if (job.nextQuestion >= job.tasks.size()) {
        endThinkRung();
        return;
    }
    emitThinkProgress(tr("Running %1").arg(thinkQ(think_rung_label(rung))), false);
    postThinkStep(0);
}

bool EngineWorker::thinkOutput(const RequestOutput& o) {
    if (!think_)
        return false;
    ThinkJob& job = *think_;
    const auto it = job.pending.constFind(o.id);
    if (it == job.pending.constEnd())
        return false;
    const ThinkJob::Pending p = *it;
    ThinkSample& s = job.samples[size_t(p.question)][size_t(p.choice)];
    s.text += o.text;
    s.tokens += int32_t(o.new_token_ids.size());
    if (!o.finished)
        return true;
    job.pending.remove(o.id);
    if (o.finish == FinishReason::Aborted || o.finish == FinishReason::Error) {
        const std::string& why = model_->serving->last_error();
        // Ends the run after runStep's loop (it still walks this step's outputs).
        if (job.failure.isEmpty())
            job.failure = why.empty() ? tr("The backend failed.") : thinkQ(why);
        postThinkStep(0);
        return true;
    }
    if (--job.left[size_t(p.question)] == 0)
        thinkQuestionDone(p.question);
    return true;
}

void EngineWorker::thinkQuestionDone(int question) {
    ThinkJob& job = *think_;
    const size_t q = size_t(question);
    const TaskSetSpec* gen = job.generated ? &*job.generated : nullptr;
    job.scored[q] = think_score_question(gen, job.tasks[q], question, std::move(job.samples[q]));
    ++job.questionsDone;
    emitThinkProgress(tr("Running %1").arg(thinkQ(think_rung_label(job.rungs[job.rung]))), false);
    if (job.questionsDone == int(job.tasks.size()))
        endThinkRung();
}

void EngineWorker::endThinkRung() {
    ThinkJob& job = *think_;
    for (ThinkQuestionResult& r : job.scored)
        job.current.add(std::move(r), true);
    job.scored.clear();
    job.current.wall_ms = double(job.rungClock.nsecsElapsed()) / 1e6;
    job.rungsDone.push_back(think_rung_json(job.current, true));
    job.summaries.push_back(think_rung_json(job.current, false));
    ++job.rung;
    job.submitted = false;
    emitThinkProgress(tr("Running"), true);
    postThinkStep(0);
}

void EngineWorker::endThink(const QString& status, const QString& error) {
    ThinkJob& job = *think_;
    // Requests still running (a cancel, a failure) leave the engine.
    if (model_ && model_->serving && job.model == model_.get())
        for (auto it = job.pending.constBegin(); it != job.pending.constEnd(); ++it)
            model_->serving->abort(it.key());
    ThinkRunOutcome out;
    out.planId = job.plan.id;
    out.run = std::move(job.run);
    out.run["status"] = status.toStdString();
    out.run["error"] = error.toStdString();
    out.run["wall_s"] = job.clock.elapsed() / 1000.0;
    out.run["rungs"] = std::move(job.rungsDone);
    think_.reset();
    thinking_ = false;
    thinkCancel_ = false;
    emitView();
    emit thinkFinished(out);
}

} // namespace llmwb
