// The Think harder page's service on the GUI thread: starts ladders on the engine worker
// (through signals main() connects), stores every run the worker reports in the ThinkStore as
// soon as it ends (completed, cancelled or failed: none is dropped), and exports runs in a
// report zip (think.json, think.csv and report.html's section, beside any benchmark runs).
#pragma once

#include <QList>
#include <QObject>
#include <QString>

#include "app/services/think_store.h"
#include "app/services/think_types.h"

namespace llmwb {

class BenchStore;

class ThinkController : public QObject {
    Q_OBJECT

  public:
    // benchStore (optional): the benchmark runs the export may add.
    explicit ThinkController(ThinkStore& store, BenchStore* benchStore = nullptr,
                             QObject* parent = nullptr);

    ThinkStore& store() { return store_; }
    bool isRunning() const { return planId_ != 0; }
    qint64 lastRun() const { return lastRun_; } // the id stored last (0: none)

    // "" when the plan was sent to the worker, else why not.
    QString start(ThinkPlan plan);
    void cancel();

    // The think runs (and the benchmark runs benchIds, may be empty) as one report zip at `path`
    // ("" or the error).
    QString exportReport(const QList<qint64>& thinkIds, const QList<qint64>& benchIds,
                         const QString& path, const QString& title);

  public slots:
    void onProgress(const llmwb::ThinkProgress& progress);
    void onFinished(const llmwb::ThinkRunOutcome& outcome);

  signals:
    void startRequested(const llmwb::ThinkPlan& plan); // to EngineWorker::runThink
    void cancelRequested();                            // to EngineWorker::cancelThink
    void progress(const llmwb::ThinkProgress& progress);
    void runsChanged();
    // The run ended: its JSON (status, error, rungs) and its id in the store (0: not stored).
    void finished(const nlohmann::ordered_json& run, qint64 storedId);
    void storageFailed(const QString& message);

  private:
    ThinkStore& store_;
    BenchStore* benchStore_;
    qint64 nextPlanId_ = 1;
    qint64 planId_ = 0;
    qint64 lastRun_ = 0;
};

} // namespace llmwb
