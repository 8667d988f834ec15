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
// Tuning (setTuning) applies live: utilization re-plans the KV pool (requests that no longer fit
// are preempted and resumed, none fail), batch limits apply from the next step; a block size
// change rebuilds the engine as soon as it is idle. Loading reports its stages (loadProgress)
// and stops between stages when cancelLoad() was called; the previous model then stays loaded.
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

#include "app/services/generation_types.h"
#include "engine/serving/engine_snapshot.h"

namespace llmwb {

namespace kernels {
class ThreadPool;
}
class CudaPlugin;
class ModelExecutor;
struct EngineConfig;

// One request's share of one engine step (for the batch timeline).
struct StepSegment {
    qint64 requestId = -1;  // engine request id
    int tokens = 0;
    bool prefill = false;
};

// One engine step, summarized.
struct StepRecord {
    qint64 step = 0;
    double ms = 0;
    int prefillTokens = 0;
    int decodeTokens = 0;
    int preempted = 0;
    QVector<StepSegment> segments;
};

// Time to first token of a request whose first token came since the previous view.
struct TtftSample {
    qint64 requestId = -1;
    double ttftMs = 0;
};

// What the Engine dock draws: the latest snapshot and the steps run since the previous view.
struct EngineView {
    EngineSnapshot snapshot;
    QVector<StepRecord> steps;
    double tokensPerSecond = 0;        // generated tokens per second since the previous view
    double promptTokensPerSecond = 0;  // prompt (prefill) tokens computed per second
    QSet<qint64> loadTestRequests;     // engine ids of the load test's requests
    qint64 timeMs = 0;                 // when the view was made (ms since the worker started)
    QVector<TtftSample> ttfts;         // first tokens since the previous view
    // The pool and its settings.
    EngineTuning tuning;       // as applied (blockSize: the engine's current block size)
    bool poolCapped = false;   // utilization allowed more than max_num_seqs x context uses
    int poolCapBlocks = 0;
    QString planError;         // the last re-plan failed (the pool kept or a fallback used)
    bool rebuildPending = false;  // a block size change waits for the engine to be idle
    QString device = QStringLiteral("CPU");
    QString kvDtype = QStringLiteral("fp32");
    QString cudaUnavailable;  // why CUDA is not used ("" when it is or nobody asked)
};

class EngineWorker : public QObject {
    Q_OBJECT

public:
    static constexpr int kSnapshotIntervalMs = 33;
    static constexpr int kLoadTestRequests = 16;

    // threads <= 0: one per hardware thread.
    explicit EngineWorker(int threads = 0, QObject* parent = nullptr);
    ~EngineWorker() override;

    // Thread-safe. Cancels the request if it is running or still queued.
    void stop(quint64 requestId);
    // Thread-safe. Cancels every running request and every later one (used when quitting).
    void stopAll();
    // Thread-safe. Stops the model load in progress between two stages (the previous model
    // stays loaded; loadCancelled() is emitted). Ignored when no load runs.
    void cancelLoad();
    bool isLoading() const { return loading_; }
    // Minimum time between two token signals (text is coalesced in between); 0 = every token.
    void setTokenSignalIntervalMs(int ms) { tokenIntervalMs_ = ms; }

public slots:
    void loadModel(const QString& path);
    // Writes the demo model into dir on first use (random weights), then loads it.
    void loadDemoModel(const QString& dir);
    void generate(const llmwb::GenerationRequest& request);
    // Adds `count` synthetic concurrent requests (shared system prompt, different questions and
    // lengths). Their text is not streamed; loadTestFinished() reports when all are done.
    void runLoadTest(int count = kLoadTestRequests);
    // Engine settings from the Tuning dock; also used by the next model load.
    void setTuning(const llmwb::EngineTuning& tuning);
    // The device of the next load: "auto" (CUDA when the plugin loads and a device exists, else
    // the CPU, saying why), "cpu" or "cuda" (a load fails with the reason when CUDA is
    // unavailable; the previous model stays). A loaded model that would move is reloaded on the
    // new device as soon as the engine is idle.
    void setDevice(const QString& preference);
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
    void finished(const llmwb::GenerationStats& stats);
    void failed(quint64 requestId, qint64 conversationId, const QString& message);
    void engineView(const llmwb::EngineView& view);
    void loadTestFinished(int completed);
    // reason: why CUDA cannot be used ("" when it can).
    void deviceAvailability(bool cudaAvailable, const QString& reason);

private slots:
    void runStep();

private:
    struct Model;
    struct Active;
    bool takeCancelled(quint64 requestId);
    QString buildPrompt(const GenerationRequest& request, std::string* prompt,
                        bool* addSpecialTokens) const;
    void postStep();
    void applyCancellations();
    void finishActive(qint64 engineId, Active& a, const QString& reason);
    void cancelEverything();
    void emitView();
    bool loadStage(int percent, const QString& stage);  // false: cancelled
    void doLoad(const QString& path);
    bool rebuildEngine();
    void applyPoolPlan();
    EngineConfig engineConfig(int32_t blockSize) const;
    // The tuning with the executor's device memory when the tuning names none.
    EngineTuning planTuning(const ModelExecutor& executor) const;
    void reloadOnNewDevice();

    int threads_;
    std::unique_ptr<kernels::ThreadPool> pool_;  // shared by the loaded and a loading model
    EngineTuning tuning_;
    QString devicePref_ = QStringLiteral("auto");
    bool deviceReloadPending_ = false;
    std::shared_ptr<CudaPlugin> cudaPlugin_;  // loaded once, reused by later loads
    QString cudaUnavailable_;                 // the last known reason ("" = usable or unknown)
    bool poolCapped_ = false, rebuildPending_ = false;
    int poolCapBlocks_ = 0;
    QString planError_;
    QElapsedTimer clock_;
    qint64 promptTokensSinceView_ = 0;
    bool busy_ = false;  // steps ran since the last idle view
    std::atomic<bool> loading_{false};
    std::atomic<bool> loadCancel_{false};
    int tokenIntervalMs_ = 16;
    std::unique_ptr<Model> model_;
    QHash<qint64, Active*> active_;  // engine id -> request (owned)
    bool stepPosted_ = false;
    int loadTestLeft_ = 0, loadTestDone_ = 0;
    EngineView view_;
    QElapsedTimer sinceView_;
    qint64 tokensSinceView_ = 0;
    QMutex mutex_;
    QSet<quint64> cancelled_;
    std::atomic<bool> anyCancelled_{false};
    std::atomic<bool> shuttingDown_{false};
};

void registerEngineViewTypes();

}  // namespace llmwb

Q_DECLARE_METATYPE(llmwb::EngineSnapshot)
Q_DECLARE_METATYPE(llmwb::EngineView)
