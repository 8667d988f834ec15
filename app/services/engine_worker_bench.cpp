// The engine worker's benchmarks: a plan's runs one after another, each on an engine of its own
// over the loaded model's executor, stepped one engine step per queued call so that Cancel,
// tuning and chats sent meanwhile are served between steps.
#include <QDateTime>
#include <QFileInfo>
#include <QLocale>
#include <QMutexLocker>
#include <QTimer>
#include <algorithm>
#include <cmath>

#include "app/cli/prompts_jsonl.h"
#include "app/report/engine_settings.h"
#include "app/report/environment.h"
#include "app/services/engine_worker.h"
#include "app/services/engine_worker_private.h"
#include "engine/runtime/model_executor.h"
#include "engine/serving/bench_workload.h"

namespace llmwb {

namespace {

QString number(double v) {
    return QString::number(v, 'g', 6);
}

SchedulerPolicy policyOf(const QString& name) {
    if (name == QLatin1String("static"))
        return SchedulerPolicy::Static;
    if (name == QLatin1String("sequential"))
        return SchedulerPolicy::Sequential;
    return SchedulerPolicy::Continuous;
}

// The run's engine: the tuning with the run's policy and sweep value.
void applySweep(EngineConfig& ec, const QString& setting, double v, SpeculativeMethod method) {
    if (setting == QLatin1String("gpu_memory_utilization"))
        ec.memory.utilization = v;
    else if (setting == QLatin1String("max_num_seqs"))
        ec.max_num_seqs = int32_t(v);
    else if (setting == QLatin1String("max_num_batched_tokens"))
        ec.max_num_batched_tokens = int32_t(v);
    else if (setting == QLatin1String("block_size"))
        ec.block_size = int32_t(v);
    else if (setting == QLatin1String("num_speculative_tokens")) {
        ec.speculative.num_speculative_tokens = int32_t(v);
        if (ec.speculative.method == SpeculativeMethod::Off)
            ec.speculative.method =
                method == SpeculativeMethod::Off ? SpeculativeMethod::Ngram : method;
    }
}

} // namespace

void EngineWorker::cancelBenchmark() {
    benchCancel_ = true;
}

void EngineWorker::runBenchmark(const BenchPlan& plan) {
    if (bench_) {
        emit benchFinished(plan.id, tr("A benchmark is already running."));
        return;
    }
    if (think_) {
        emit benchFinished(plan.id, tr("Think harder is running."));
        return;
    }
    if (!model_ || !model_->serving || loading_) {
        emit benchFinished(plan.id, tr("No model is loaded."));
        return;
    }
    if (const QString why = plan.validate(); !why.isEmpty()) {
        emit benchFinished(plan.id, why);
        return;
    }
    auto job = std::make_unique<BenchJob>();
    job->plan = plan;
    job->clock.start();
    job->sinceProgress.start();
    // The runs: every sweep value (or none) x every policy.
    const QVector<double> values =
        plan.sweepSetting.isEmpty() ? QVector<double>{0} : plan.sweepValues;
    for (double v : values)
        for (const QString& p : plan.policies) {
            BenchJob::RunSpec r;
            r.policy = p;
            if (!plan.sweepSetting.isEmpty()) {
                r.sweepSetting = plan.sweepSetting;
                r.sweepValue = v;
                r.name = plan.sweepSetting + QLatin1Char('=') + number(v);
                if (plan.policies.size() > 1)
                    r.name += QLatin1String(" · ") + p;
            } else {
                r.name = plan.policies.size() > 1 || plan.name.isEmpty() ? p : plan.name;
            }
            if (!plan.name.isEmpty() && (plan.policies.size() > 1 || !plan.sweepSetting.isEmpty()))
                r.name = plan.name + QLatin1String(": ") + r.name;
            job->specs.push_back(r);
        }
    // The workload, as token ids (made once: every run gets the very same requests).
    const BenchWorkload& w = plan.workload;
    const Tokenizer& tok = *model_->tokenizer;
    if (!w.prompts.isEmpty()) {
        // Each message as the chat sends it: one user turn through the model's chat template.
        for (const QString& text : w.prompts) {
            BenchRequest r;
            GenerationRequest turn;
            turn.messages = {{QStringLiteral("user"), text}};
            std::string prompt;
            bool addSpecial = true;
            if (buildPrompt(turn, &prompt, &addSpecial, &shuttingDown_).isEmpty())
                r.prompt = tok.encode(prompt, addSpecial);
            else // the template failed on it: the plain text
                r.prompt = tok.encode(text.toStdString(), true);
            r.output_len = w.outputLen;
            if (!r.prompt.empty())
                job->workload.push_back(std::move(r));
        }
    } else if (!w.dataset.isEmpty()) {
        SamplingParams defaults;
        defaults.max_tokens = w.outputLen;
        auto lines = cli::read_prompts_jsonl(w.dataset.toStdString(), defaults);
        if (!lines) {
            emit benchFinished(plan.id, q(lines.message()));
            return;
        }
        for (const cli::PromptLine& pl : *lines) {
            if (!pl.ok()) {
                emit benchFinished(
                    plan.id,
                    QStringLiteral("%1:%2: %3").arg(w.dataset).arg(pl.line).arg(q(pl.error)));
                return;
            }
            BenchRequest r;
            r.prompt = pl.ids ? *pl.ids : tok.encode(*pl.prompt, true);
            r.output_len = pl.params.max_tokens;
            job->workload.push_back(std::move(r));
            if (int(job->workload.size()) >= BenchWorkload::kMaxPrompts)
                break;
        }
    } else {
        RandomWorkloadSpec spec;
        spec.num_prompts = w.numPrompts;
        spec.input_len = w.inputLen;
        spec.output_len = w.outputLen;
        spec.range_ratio = w.rangeRatio;
        spec.prefix_len = w.prefixLen;
        spec.seed = w.seed;
        job->workload = make_random_workload(spec, model_->model->config.vocab_size);
    }
    if (job->workload.empty()) {
        emit benchFinished(plan.id, tr("The benchmark has no prompts."));
        return;
    }
    bench_ = std::move(job);
    updateServing(); // the server waits for the benchmark
    benchmarking_ = true;
    benchCancel_ = false;
    // The machine and the model (the model file's SHA-256 is computed once per load path).
    emitBenchProgress(tr("Reading the machine and hashing the model file"), true);
    EnvironmentInputs in;
    in.model_path = model_->loadPath.toStdString();
    in.model_name = model_->metadata.name.toStdString();
    in.weight_dtype = model_->metadata.dtypeSummary.join(QStringLiteral("; ")).toStdString();
    const ModelExecutor& exec = *model_->backend.executor;
    // The type the runs use: a switch still pending in the chat engine applies before they
    // start (they wait for the chats).
    in.kv_dtype = kv_dtype_name(model_->serving->pending_kv_dtype());
    in.device = exec.device_name();
    in.threads = cpuThreads_;
    if (model_->backend.on_cuda() && model_->backend.plugin)
        describe_cuda_device(in, *model_->backend.plugin);
    in.engine_settings = engine_settings_json(model_->serving->config(),
                                              model_->serving->memory_plan(), in.kv_dtype);
    // The model's SHA-256 once per file version (a 10 GB file takes seconds to hash).
    const QFileInfo fi(model_->loadPath);
    const QString key = QStringLiteral("%1|%2|%3")
                            .arg(fi.absoluteFilePath())
                            .arg(fi.size())
                            .arg(fi.lastModified().toMSecsSinceEpoch());
    const auto cached = modelHashes_.constFind(key);
    bench_->environment = probe_environment(in, cached == modelHashes_.constEnd());
    if (cached != modelHashes_.constEnd()) {
        for (const auto& [k, v] : cached->items())
            bench_->environment[k] = v;
    } else {
        nlohmann::ordered_json keep;
        for (const char* k : {"model_sha256", "model_sha256_of", "model_error"})
            if (bench_->environment.contains(k))
                keep[k] = bench_->environment[k];
        modelHashes_.insert(key, keep);
    }
    postBenchStep(0);
}

void EngineWorker::postBenchStep(int delayMs) {
    if (delayMs <= 0)
        QMetaObject::invokeMethod(this, &EngineWorker::benchStep, Qt::QueuedConnection);
    else
        QTimer::singleShot(delayMs, this, &EngineWorker::benchStep);
}

void EngineWorker::emitBenchProgress(const QString& stage, bool force) {
    if (!bench_ || (!force && bench_->sinceProgress.elapsed() < 100))
        return;
    bench_->sinceProgress.restart();
    BenchProgress p;
    p.planId = bench_->plan.id;
    p.runs = int(bench_->specs.size());
    p.run = int(std::min(bench_->current, bench_->specs.size() - 1));
    p.runName = bench_->specs[size_t(p.run)].name;
    p.stage = stage;
    p.elapsedS = bench_->clock.elapsed() / 1000.0;
    if (bench_->session) {
        p.completed = bench_->session->completed();
        p.total = bench_->session->total();
    }
    // Done so far as a fraction of the plan: whole runs plus the current run's requests.
    const double done =
        (double(bench_->current) + (p.total > 0 ? double(p.completed) / double(p.total) : 0.0)) /
        double(p.runs);
    if (done > 0.02 && p.elapsedS > 0.5)
        p.etaS = p.elapsedS * (1.0 - done) / done;
    emit benchProgress(p);
}

bool EngineWorker::startBenchRun() {
    BenchJob& job = *bench_;
    const BenchJob::RunSpec& spec = job.specs[job.current];
    EngineConfig ec = engineConfig(tuning_.blockSize);
    ec.policy = policyOf(spec.policy);
    applySweep(ec, spec.sweepSetting, spec.sweepValue, tuning_.speculativeMethod);
    BenchRunOptions ro;
    ro.request_rate = job.plan.workload.requestRate > 0 ? job.plan.workload.requestRate
                                                        : std::numeric_limits<double>::infinity();
    ro.burstiness = job.plan.workload.burstiness;
    ro.max_concurrency = job.plan.workload.maxConcurrency;
    ro.seed = job.plan.workload.seed;
    if (ec.policy == SchedulerPolicy::Static) {
        // Static batching as a padded batch runs it: batches of max_concurrency (or
        // max_num_seqs) requests, each padded to its longest prompt and output.
        ro.static_batches = true;
        ro.static_padding = true;
        ro.batch_size = job.plan.workload.maxConcurrency > 0 ? job.plan.workload.maxConcurrency
                                                             : ec.max_num_seqs;
        ec.max_num_seqs = std::max(ec.max_num_seqs, ro.batch_size);
    }
    job.runConfig = ec;
    job.runOptions = ro;
    job.runDate =
        QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")).toStdString();
    // The executor's KV pool belongs to one engine at a time: the chat engine goes (it comes
    // back in endBenchmark, with the tuning).
    ModelExecutor& exec = *model_->backend.executor;
    model_->serving.reset();
    auto engine = Engine::create(exec, *model_->tokenizer, ec);
    if (!engine) {
        endBenchRun(BenchRunStatus::Failed, q(engine.message()));
        return false;
    }
    model_->serving = std::move(*engine);
    applySpeculationConfig(ec.speculative);
    if (!speculationError_.isEmpty()) {
        endBenchRun(BenchRunStatus::Failed, speculationError_);
        return false;
    }
    job.session = std::make_unique<BenchSession>(*model_->serving, job.workload, ro);
    job.lastStep = -1;
    emitBenchProgress(tr("Running"), true);
    return true;
}

void EngineWorker::benchStep() {
    if (!bench_)
        return;
    BenchJob& job = *bench_;
    // Stops of chats that wait for the benchmark.
    if (anyCancelled_) {
        for (qsizetype i = heldGenerates_.size() - 1; i >= 0; --i)
            if (shuttingDown_ || takeCancelled(heldGenerates_[i].requestId)) {
                GenerationStats stats;
                stats.requestId = heldGenerates_[i].requestId;
                stats.conversationId = heldGenerates_[i].conversationId;
                stats.finishReason = FinishReason::Aborted;
                emit finished(stats);
                heldGenerates_.remove(i);
            }
        if (active_.isEmpty())
            anyCancelled_ = false;
    }
    const bool cancel = benchCancel_.exchange(false) || shuttingDown_;
    if (cancel) {
        if (job.session) {
            job.session->cancel(tr("cancelled").toStdString());
            endBenchRun(BenchRunStatus::Cancelled, tr("Cancelled by the user."));
        }
        endBenchmark(tr("Cancelled."));
        return;
    }
    if (!job.session) {
        // Chats that were generating finish first.
        if (model_->serving && model_->serving->has_unfinished()) {
            if (!job.waitingForChats) {
                job.waitingForChats = true;
                emitBenchProgress(tr("Waiting for the chats that are generating to finish"), true);
            }
            postBenchStep(20); // runStep() keeps stepping them meanwhile
            return;
        }
        job.waitingForChats = false;
        if (!startBenchRun()) {
            if (job.current >= job.specs.size()) {
                endBenchmark(job.failure);
                return;
            }
            postBenchStep(0);
            return;
        }
    }
    auto wait = job.session->advance();
    if (const StepOutputs& so = job.session->last_outputs(); so.step_index > job.lastStep) {
        job.lastStep = so.step_index; // a step ran (advance() may only have waited)
        recordStep(so);
    }
    if (!wait) {
        endBenchRun(BenchRunStatus::Failed, q(wait.message()));
    } else if (job.session->done()) {
        endBenchRun(BenchRunStatus::Completed, {});
    } else {
        if (sinceView_.elapsed() >= snapshotIntervalMs_)
            emitView();
        emitBenchProgress(tr("Running"), false);
        postBenchStep(int(std::ceil(std::min(*wait, 0.05) * 1000.0)));
        return;
    }
    if (job.current >= job.specs.size()) {
        endBenchmark(job.failure);
        return;
    }
    postBenchStep(0);
}

void EngineWorker::endBenchRun(BenchRunStatus status, const QString& error) {
    BenchJob& job = *bench_;
    const BenchJob::RunSpec& spec = job.specs[job.current];
    BenchRunOutcome out;
    out.planId = job.plan.id;
    out.index = int(job.current);
    BenchRun& run = out.run;
    run.name = spec.name.toStdString();
    run.policy = spec.policy.toStdString();
    run.status = status;
    run.error = error.toStdString();
    run.date =
        job.runDate.empty()
            ? QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")).toStdString()
            : job.runDate;
    run.model_id = model_->metadata.name.toStdString();
    run.sweep_setting = spec.sweepSetting.toStdString();
    run.sweep_value = spec.sweepValue;
    run.percentile_metrics = job.plan.percentileMetrics.toStdString();
    const BenchWorkload& w = job.plan.workload;
    nlohmann::ordered_json workload;
    workload["dataset_name"] = w.datasetName().toStdString();
    workload["num_prompts"] = job.workload.size();
    if (w.prompts.isEmpty() && w.dataset.isEmpty()) {
        workload["random_input_len"] = w.inputLen;
        workload["random_output_len"] = w.outputLen;
        workload["random_range_ratio"] = w.rangeRatio;
        workload["random_prefix_len"] = w.prefixLen;
    } else {
        workload["output_len"] = w.outputLen;
    }
    workload["request_rate"] =
        w.requestRate > 0 ? nlohmann::ordered_json(w.requestRate) : nlohmann::ordered_json("inf");
    workload["burstiness"] = w.burstiness;
    workload["max_concurrency"] = w.maxConcurrency;
    workload["seed"] = w.seed;
    run.settings["workload"] = workload;
    const ModelExecutor& exec = *model_->backend.executor;
    run.settings["engine"] = engine_settings_json(
        job.runConfig, model_->serving ? model_->serving->memory_plan() : MemoryPlan{},
        kv_dtype_name(exec.kv_dtype()), &job.runOptions);
    if (job.session) {
        std::vector<double> qs(job.plan.metricPercentiles.begin(),
                               job.plan.metricPercentiles.end());
        run.figures = job.session->result(qs);
        run.requests = job.session->request_rows();
        run.steps = job.session->step_rows();
        job.session.reset();
    }
    if (status == BenchRunStatus::Failed && job.failure.isEmpty())
        job.failure = tr("Run \"%1\" failed: %2").arg(spec.name, error);
    out.environment = job.environment;
    ++job.current;
    emitView();
    emit benchRunFinished(out);
}

void EngineWorker::endBenchmark(QString message) {
    const qint64 planId = bench_->plan.id;
    bench_->session.reset();
    bench_.reset();
    benchmarking_ = false;
    // The chat engine again, with the tuning as it is now.
    if (model_ && model_->backend.executor) {
        ModelExecutor& exec = *model_->backend.executor;
        model_->serving.reset();
        auto engine = Engine::create(exec, *model_->tokenizer, engineConfig(tuning_.blockSize));
        if (engine) {
            model_->serving = std::move(*engine);
            replanError_.clear();
        } else {
            // The tuning does not fit any more (e.g. the memory was taken meanwhile): a small
            // pool keeps the model usable, and the view says why.
            replanError_ = q(engine.message());
            EngineConfig small = engineConfig(tuning_.blockSize);
            small.memory.num_blocks = 64;
            if (auto fallback = Engine::create(exec, *model_->tokenizer, small))
                model_->serving = std::move(*fallback);
        }
        // A KV type chosen during the benchmark: applied now (the engine is idle), so that the
        // next run and its report use it.
        if (model_->serving && applyKvDtype(tuning_.kvCacheDtype))
            model_->serving->step(model_->out);
        applySpeculation();
    }
    updateServing();
    emitView();
    emit benchFinished(planId, message);
    // The chats that waited.
    const QVector<GenerationRequest> held = std::exchange(heldGenerates_, {});
    for (const GenerationRequest& r : held)
        generate(r);
}

} // namespace llmwb
