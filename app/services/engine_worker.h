// The engine in a worker thread: a QObject moved to a QThread by main(). Commands arrive as
// queued slot calls (loadModel, loadDemoModel, generate); results leave as signals carrying
// copyable values. stop() and stopAll() are the exceptions: they are thread-safe and are
// called directly from the GUI thread, setting atomic flags that the running generation reads
// between tokens. One generation runs at a time (the batched engine comes with the scheduler).
#pragma once

#include <QMutex>
#include <QObject>
#include <QSet>
#include <atomic>
#include <memory>

#include "app/services/generation_types.h"

namespace llmwb {

class EngineWorker : public QObject {
    Q_OBJECT

public:
    // threads <= 0: one per hardware thread.
    explicit EngineWorker(int threads = 0, QObject* parent = nullptr);
    ~EngineWorker() override;

    // Thread-safe. Cancels the request if it is running or still queued.
    void stop(quint64 requestId);
    // Thread-safe. Cancels the running request and every later one (used when quitting).
    void stopAll();
    // Minimum time between two token signals (text is coalesced in between); 0 = every token.
    void setTokenSignalIntervalMs(int ms) { tokenIntervalMs_ = ms; }

public slots:
    void loadModel(const QString& path);
    // Writes the demo model into dir on first use (random weights), then loads it.
    void loadDemoModel(const QString& dir);
    void generate(const llmwb::GenerationRequest& request);

signals:
    void modelLoading(const QString& path);
    void modelLoaded(const llmwb::ModelMetadata& metadata);
    void loadFailed(const QString& message);
    void token(quint64 requestId, qint64 conversationId, const QString& textDelta);
    void finished(const llmwb::GenerationStats& stats);
    void failed(quint64 requestId, qint64 conversationId, const QString& message);

private:
    struct Engine;
    bool takeCancelled(quint64 requestId);
    QString buildPrompt(const GenerationRequest& request, std::string* prompt,
                        bool* addSpecialTokens) const;

    int threads_;
    int tokenIntervalMs_ = 16;
    std::unique_ptr<Engine> engine_;
    QMutex mutex_;
    QSet<quint64> cancelled_;
    std::atomic<quint64> current_{0};
    std::atomic<bool> cancelCurrent_{false};
    std::atomic<bool> shuttingDown_{false};
};

}  // namespace llmwb
