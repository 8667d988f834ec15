// Re-emits the engine worker's signals in the test's thread (queued). QSignalSpy appends to its
// list in the thread that emits, without a lock; a spy read by the test thread while the worker
// thread appends is a data race (it corrupted the heap now and then). Spies on a WorkerRelay
// are touched by the test thread only.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QSignalSpy>
#include <QThread>

#include "app/services/engine_worker.h"

class WorkerRelay : public QObject {
    Q_OBJECT

  public:
    void attach(llmwb::EngineWorker* w) {
        using W = llmwb::EngineWorker;
        const auto q = Qt::QueuedConnection;
        connect(w, &W::modelLoading, this, &WorkerRelay::modelLoading, q);
        connect(w, &W::modelLoaded, this, &WorkerRelay::modelLoaded, q);
        connect(w, &W::loadFailed, this, &WorkerRelay::loadFailed, q);
        connect(w, &W::loadProgress, this, &WorkerRelay::loadProgress, q);
        connect(w, &W::loadCancelled, this, &WorkerRelay::loadCancelled, q);
        connect(w, &W::token, this, &WorkerRelay::token, q);
        connect(w, &W::finished, this, &WorkerRelay::finished, q);
        connect(w, &W::failed, this, &WorkerRelay::failed, q);
        connect(w, &W::engineView, this, &WorkerRelay::engineView, q);
        connect(w, &W::loadTestFinished, this, &WorkerRelay::loadTestFinished, q);
        connect(w, &W::deviceAvailability, this, &WorkerRelay::deviceAvailability, q);
        connect(w, &W::benchProgress, this, &WorkerRelay::benchProgress, q);
        connect(w, &W::benchRunFinished, this, &WorkerRelay::benchRunFinished, q);
        connect(w, &W::benchFinished, this, &WorkerRelay::benchFinished, q);
    }

  signals:
    void modelLoading(const QString& path);
    void modelLoaded(const llmwb::ModelMetadata& metadata);
    void loadFailed(const QString& message);
    void loadProgress(int percent, const QString& stage);
    void loadCancelled(const QString& path);
    void token(quint64 requestId, qint64 conversationId, const QString& textDelta);
    void finished(const llmwb::GenerationStats& stats);
    void failed(quint64 requestId, qint64 conversationId, const QString& message);
    void engineView(const llmwb::EngineView& view);
    void loadTestFinished(int completed);
    void deviceAvailability(bool cudaAvailable, const QString& reason);
    void benchProgress(const llmwb::BenchProgress& progress);
    void benchRunFinished(const llmwb::BenchRunOutcome& outcome);
    void benchFinished(qint64 planId, const QString& message);
};

// Waits until `spy` holds `count` signals (QSignalSpy::wait() waits for one more than it already
// holds, whenever the signal came).
inline bool waitFor(QSignalSpy& spy, qsizetype count, int timeoutMs) {
    QElapsedTimer t;
    t.start();
    while (spy.size() < count && t.elapsed() < timeoutMs)
        spy.wait(20);
    return spy.size() >= count;
}

// A worker with `threads` engine threads, one token signal per token, moved to `thread` (started;
// the worker is deleted when the thread finishes) and relayed through `relay`.
inline llmwb::EngineWorker* startRelayedWorker(QThread& thread, WorkerRelay& relay, int threads) {
    auto* worker = new llmwb::EngineWorker(threads);
    worker->setTokenSignalIntervalMs(0);
    worker->moveToThread(&thread);
    relay.attach(worker);
    QObject::connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
    thread.start();
    return worker;
}
