// The engine in a worker thread: a QObject moved to a QThread by main(). Commands arrive as
// queued slot calls (loadModel, loadDemoModel, generate, runLoadTest); results leave as
// signals carrying copyable values. stop() and stopAll() are the exceptions: they are
// thread-safe and are called directly from the GUI thread, setting flags that the step loop
// reads between steps.
//
// Generation runs on the continuous-batching serving Engine: generate() adds a request and a
// step loop runs while requests are unfinished. Each step is posted to the worker's own event
// queue, so commands that arrive meanwhile (another generate, a load test) are processed
// between steps, and several conversations generate at once. After a step, at most every
// kSnapshotIntervalMs, engineView() carries an EngineSnapshot plus the steps since the last one.
//
// Tuning (setTuning) applies live: utilization re-plans the KV pool through the engine's memory
// plan (requests that no longer fit are preempted and resumed, none fail), batch limits apply
// from the next step; a block size change rebuilds the engine as soon as it is idle. Loading
// reports its stages (loadProgress) and stops between stages when cancelLoad() was called; the
// previous model then stays loaded.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QMetaType>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QVector>
#include <atomic>
#include <memory>

#include "app/services/bench_types.h"
#include "app/services/engine_view.h"
#include "app/services/engine_worker_server.h"
#include "app/services/generation_types.h"
#include "app/services/think_types.h"

namespace llmwb {

namespace kernels {
class ThreadPool;
}
class CudaPlugin;
struct EngineConfig;
struct SpeculativeConfig;
struct KvScales;
struct StepOutputs;
struct MemoryBudget;
class RequestStream;
class WorkerServingBackend;

class EngineWorker : public QObject {
    Q_OBJECT

  public:
    static constexpr int kSnapshotIntervalMs = 33;
    static constexpr int kLoadTestRequests = 16;

    // cpuThreads: threads of the CPU backend (<= 0: one per hardware thread).
    explicit EngineWorker(int cpuThreads = 0, QObject* parent = nullptr);
    ~EngineWorker() override;

    // Thread-safe. Cancels the request if it is running or still queued.
    void stop(quint64 requestId);
    // Thread-safe. Cancels every running request and every later one (used when quitting).
    void stopAll();
    // Thread-safe. Stops the model load in progress between two stages (the previous model
    // stays loaded; loadCancelled() is emitted). Ignored when no load runs.
    void cancelLoad();
    bool isLoading() const { return loading_; }
    // Thread-safe. Cancels the benchmark plan in progress: its current run ends now (kept, as
    // cancelled, with what it measured), later runs do not start, the chat engine comes back.
    void cancelBenchmark();
    bool isBenchmarking() const { return benchmarking_; }
    // Thread-safe. Cancels the Think harder run in progress (its requests are aborted; the rungs
    // done so far are kept in the outcome, status "cancelled").
    void cancelThink();
    bool isThinking() const { return thinking_; }
    // Minimum time between two token signals (text is coalesced in between); 0 = every token.
    void setTokenSignalIntervalMs(int ms) { tokenIntervalMs_ = ms; }
    // Wall-time limit of one chat template render (default jinja::RenderLimits' 2 s); tests
    // raise it to show that Stop, not the limit, ends a runaway template.
    void setTemplateTimeLimit(double seconds) { templateSeconds_ = seconds; }
    // The OpenAI server's backend over this worker's engine (engine_worker_serve.cpp): server
    // requests join the chats' batch. Thread-safe; it outlives the worker when shared.
    std::shared_ptr<WorkerServingBackend> servingBackend() const { return server_; }

  public slots:
    // The engine views' interval while requests run (default kSnapshotIntervalMs; 0 = a view
    // after every step, which tests use to see every request a step ran).
    void setSnapshotIntervalMs(int ms) { snapshotIntervalMs_ = ms < 0 ? 0 : ms; }
    void loadModel(const QString& path);
    // Writes the demo model into dir on first use (a bigram model, engine/model/demo_model.h),
    // then loads it.
    void loadDemoModel(const QString& dir);
    void generate(const llmwb::GenerationRequest& request);
    // Adds `count` synthetic concurrent requests (shared system prompt, different questions and
    // lengths). Their text is not streamed; loadTestFinished() reports when all are done.
    void runLoadTest(int count = kLoadTestRequests);
    // Runs a benchmark plan on the loaded model, one run after another (bench_types.h). Each
    // run gets an engine of its own over the model's executor, with the tuning plus the run's
    // policy and sweep value; the Engine dock shows it live (its snapshots are the worker's
    // usual views). Chats that are generating finish first; chats sent meanwhile wait and start
    // when the plan ends or is cancelled. Progress: benchProgress(); each run, however it ended:
    // benchRunFinished(); the plan: benchFinished().
    void runBenchmark(const llmwb::BenchPlan& plan);
    // Runs a Think harder ladder on the loaded model (think_types.h, engine_worker_think.cpp):
    // the rungs in order, each over every task; chats keep running in the same batch. Progress:
    // thinkProgress(); the end (completed, cancelled or failed): thinkFinished().
    void runThink(const llmwb::ThinkPlan& plan);
    // Engine settings from the Tuning dock; also used by the next model load.
    void setTuning(const llmwb::EngineTuning& tuning);
    // The device of the next load: "auto" (CUDA when the plugin loads and a device exists, else
    // the CPU, saying why), "cpu" or "cuda" (a load fails with the reason when CUDA is
    // unavailable; the previous model stays). A loaded model that would move is reloaded on the
    // new device as soon as the engine is idle.
    void setDevice(const QString& preference);
    // The float weights of the next load (`llmwb --dtype`): "auto" (as stored) or "bfloat16"
    // (F32/F16 matrices cast to BF16 at load on the CPU; ModelMetadata says what was cast, or
    // why nothing could be). A model loaded on the CPU is reloaded as soon as the engine is idle.
    void setWeightDtype(const QString& dtype);
    // Checks whether CUDA can be used (plugin, driver, device); emits deviceAvailability().
    void probeDevices();

  signals:
    void modelLoading(const QString& path);
    void modelLoaded(const llmwb::ModelMetadata& metadata);
    void loadFailed(const QString& message);
    // percent 0..100; stage: what is being done, for people ("Reading the model file").
    void loadProgress(int percent, const QString& stage);
    void loadCancelled(const QString& path);
    void token(quint64 requestId, qint64 conversationId, const QString& textDelta);
    // The request ended: a stop, its length, or a stop() (finishReason Aborted).
    void finished(const llmwb::GenerationStats& stats);
    // The request could not start or the backend failed while it ran (message: why).
    void failed(quint64 requestId, qint64 conversationId, const QString& message);
    void engineView(const llmwb::EngineView& view);
    void loadTestFinished(int completed);
    void benchProgress(const llmwb::BenchProgress& progress);
    void benchRunFinished(const llmwb::BenchRunOutcome& outcome);
    // The plan ended: message "" when every run completed, else why it stopped (cancelled, no
    // model, a run that failed: its error).
    void benchFinished(qint64 planId, const QString& message);
    void thinkProgress(const llmwb::ThinkProgress& progress);
    void thinkFinished(const llmwb::ThinkRunOutcome& outcome);
    // reason: why CUDA cannot be used ("" when it can).
    void deviceAvailability(bool cudaAvailable, const QString& reason);

  private slots:
    void runStep();
    void benchStep();
    void thinkStep();
    // Takes the server's submissions and cancellations (engine_worker_serve.cpp).
    void serveQueued();

  private:
    struct Model;
    struct Active;
    bool takeCancelled(quint64 requestId);
    // The chat template (an untrusted program) renders under its limits and stops when `cancel`
    // becomes true; a failure, including an exception from the template, is the returned text.
    QString buildPrompt(const GenerationRequest& request, std::string* prompt,
                        bool* addSpecialTokens, const std::atomic<bool>* cancel = nullptr) const;
    // buildPrompt for a chat request: stop(requestId) and stopAll() cancel its render.
    QString renderChatPrompt(const GenerationRequest& request, std::string* prompt,
                             bool* addSpecialTokens);
    void postStep();
    void applyCancellations();
    void finishActive(qint64 engineId, Active& a, FinishReason reason);
    void failActive(qint64 engineId, Active& a, const QString& message);
    void cancelEverything();
    // Server requests (engine_worker_serve.cpp). updateServing: tells the server whether it can
    // serve now (a model, not loading, no benchmark) and serves a newly loaded model.
    void updateServing();
    void admitServed(WorkerServingBackend::Pending& p);
    // An output of a server request to its stream; true when that sequence ended (the Active is
    // deleted then).
    bool pushServed(qint64 engineId, Active& a, RequestOutput&& o);
    void abortServedStream(const RequestStream* stream);
    void emitView();
    void recordStep(const StepOutputs& out);           // for the next view (timeline, rates, TTFTs)
    bool loadStage(int percent, const QString& stage); // false: cancelled
    void doLoad(const QString& path);
    bool rebuildEngine();
    void applyPoolPlan();
    QString checkUtilization(double utilization) const;
    EngineConfig engineConfig(int32_t blockSize) const;
    SpeculativeConfig speculativeConfig() const; // from the tuning
    // Applies it to the engine; self-q4 makes the 4-bit draft first (an error turns
    // speculation off and is shown: speculationError_).
    void applySpeculation();
    // The KV pool's budget from the tuning (a budget too small for the weights falls back to a
    // small pool; the plan's note says why).
    MemoryBudget memoryBudget() const;
    void reloadOnNewDevice();
    // The KV-cache element type (engine_worker_kv.cpp). wantedKvDtype: the tuning's on this
    // model's backend ("auto": the backend's own). kvScalesFor: fp8 scales calibrated on the
    // built-in text (empty = 1.0 when that fails; kvCalibration_ says how they were found).
    // applyKvDtypeAtLoad: before the model's first engine. applyKvDtype: a live switch of the
    // serving engine (pending until its next step; `previous`: the tuning's value to go back to
    // when the switch is refused). false: nothing to switch or refused.
    KvDtype wantedKvDtype(const Model& m) const;
    KvScales kvScalesFor(Model& m, KvDtype t);
    void applyKvDtypeAtLoad(Model& m);
    bool applyKvDtype(const QString& previous);
    // Benchmarks (engine_worker_bench.cpp).
    struct BenchJob;
    void postBenchStep(int delayMs);
    bool startBenchRun(); // false: the run failed to start (recorded as failed)
    void endBenchRun(BenchRunStatus status, const QString& error);
    // By value: callers pass members of *bench_, which this resets before it emits the message.
    void endBenchmark(QString message);
    void emitBenchProgress(const QString& stage, bool force);
    void applySpeculationConfig(SpeculativeConfig c);
    // Think harder (engine_worker_think.cpp). thinkOutput: true when `o` is one of the run's
    // requests (consumed); endThink: status "completed" | "cancelled" | "failed".
    struct ThinkJob;
    void postThinkStep(int delayMs);
    bool thinkOutput(const RequestOutput& o);
    void thinkQuestionDone(int question);
    void endThinkRung();
    void endThink(const QString& status, const QString& error);
    void emitThinkProgress(const QString& stage, bool force);

    int cpuThreads_;
    // The CPU backend's threads, shared by the loaded and a loading model (unused on CUDA).
    std::unique_ptr<kernels::ThreadPool> cpuPool_;
    EngineTuning tuning_;
    QString devicePref_ = QStringLiteral("auto");
    QString weightDtype_ = QStringLiteral("auto");
    bool deviceReloadPending_ = false;
    std::shared_ptr<CudaPlugin> cudaPlugin_; // loaded once, reused by later loads
    QString cudaUnavailable_;                // the last known reason ("" = usable or unknown)
    bool rebuildPending_ = false;
    QString replanError_;      // the last re-plan or rebuild that failed ("" = none)
    QString speculationError_; // why the chosen speculation could not be set up ("" = none)
    QString kvDtypeError_;     // why the chosen KV-cache type is not in force ("" = it is)
    QString refusedKvDtype_;   // the tuning's value that was refused ("" = none)
    QString kvCalibration_;    // fp8: how its scales were found ("" = not fp8)
    KvDtypeSwitch kvSwitch_;   // the pool before the last switch (since the load)
    // The last utilization refused by setTuning (checkUtilization) and why ("" = none).
    QString utilizationRefusal_;
    double refusedUtilization_ = 0;
    QElapsedTimer clock_;
    qint64 promptTokensSinceView_ = 0;
    bool busy_ = false; // steps ran since the last idle view
    std::atomic<bool> loading_{false};
    std::atomic<bool> loadCancel_{false};
    int tokenIntervalMs_ = 16;
    std::unique_ptr<Model> model_;
    QHash<qint64, Active*> active_; // engine id -> request (owned)
    bool stepPosted_ = false;
    int loadTestLeft_ = 0, loadTestDone_ = 0;
    std::unique_ptr<BenchJob> bench_;
    std::atomic<bool> benchmarking_{false};
    std::atomic<bool> benchCancel_{false};
    QVector<GenerationRequest> heldGenerates_; // chats sent during a benchmark
    std::unique_ptr<ThinkJob> think_;
    std::atomic<bool> thinking_{false};
    std::atomic<bool> thinkCancel_{false};
    // environment.json's model_sha256 (and model_error) by "path|size|mtime".
    QHash<QString, nlohmann::ordered_json> modelHashes_;
    EngineView view_;
    QElapsedTimer sinceView_;
    int snapshotIntervalMs_ = kSnapshotIntervalMs;
    qint64 tokensSinceView_ = 0;
    QMutex mutex_;
    QSet<quint64> cancelled_;
    quint64 renderingRequest_ = 0;          // whose template renders now (0 = none); mutex_
    std::atomic<bool> renderCancel_{false}; // stops that render (stop(), stopAll())
    std::atomic<double> templateSeconds_{2.0};
    std::atomic<bool> anyCancelled_{false};
    std::atomic<bool> shuttingDown_{false};
    std::shared_ptr<WorkerServingBackend> server_;
    const void* servedModel_ = nullptr; // the Model the server was last given (model_.get())
    bool servedAbortPending_ = false;   // a step for the metrics after server aborts
};

} // namespace llmwb
