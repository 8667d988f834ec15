// The Benchmark page's service on the GUI thread: starts plans on the engine worker (through
// signals main() connects), stores every run the worker reports in the BenchStore as soon as it
// ends (completed, cancelled or failed: none is dropped), and exports and imports reports.
#pragma once

#include <QList>
#include <QObject>
#include <QString>

#include "app/services/bench_store.h"
#include "app/services/bench_types.h"

namespace llmwb {

class BenchController : public QObject {
    Q_OBJECT

  public:
    explicit BenchController(BenchStore& store, QObject* parent = nullptr);

    BenchStore& store() { return store_; }
    bool isRunning() const { return planId_ != 0; }
    QList<qint64> planRuns() const { return planRuns_; } // stored runs of the current/last plan

    // "" when the plan was sent to the worker, else why not.
    QString start(BenchPlan plan);
    void cancel();

    // The runs as one report zip at `path` ("" or the error). The title names the report.
    QString exportReport(const QList<qint64>& ids, const QString& path, const QString& title);
    // Adds a report's runs (marked as imported from the file's name) as one group; the ids
    // stored, or the error in *error (the runs already stored are untouched).
    QList<qint64> importReport(const QString& path, QString* error);

  public slots:
    void onProgress(const llmwb::BenchProgress& progress);
    void onRunFinished(const llmwb::BenchRunOutcome& outcome);
    void onFinished(qint64 planId, const QString& message);

  signals:
    void startRequested(const llmwb::BenchPlan& plan); // to EngineWorker::runBenchmark
    void cancelRequested();                            // to EngineWorker::cancelBenchmark
    void progress(const llmwb::BenchProgress& progress);
    void runStored(qint64 runId);
    void runsChanged();
    // The plan ended ("" = every run completed, else why it stopped).
    void finished(const QString& message);
    void storageFailed(const QString& message);

  private:
    BenchStore& store_;
    qint64 nextPlanId_ = 1;
    qint64 planId_ = 0;  // the plan running (0: none)
    qint64 groupId_ = 0; // its runs' group in the store
    QList<qint64> planRuns_;
};

} // namespace llmwb
