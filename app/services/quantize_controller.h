// Model > Quantize...: runs quantize_model (engine/model/quantize.h) on a worker thread so the
// GUI thread never waits. Progress reaches the GUI thread coalesced (at most one update queued
// at a time, always the latest); Cancel sets the atomic quantize_model polls between and within
// tensors, so a cancelled run ends soon and leaves no output file behind. Destroying the
// controller while a run is going cancels it and joins the thread (bounded by that latency): an
// application that quits mid-run neither crashes nor leaves a half-written file.
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/model/quantize.h"

namespace llmwb {

class QuantizeController : public QObject {
    Q_OBJECT

  public:
    // The function that does the work (quantize_model, or a fake in tests). Called on the
    // worker thread; it must poll `cancel` and may call `progress` from that thread.
    using Runner = std::function<Result<QuantizeReport>(
        const QuantizeOptions&, const QuantizeProgressFn&, const std::atomic<bool>*)>;

    explicit QuantizeController(QObject* parent = nullptr); // runs quantize_model
    explicit QuantizeController(Runner runner, QObject* parent = nullptr);
    ~QuantizeController() override; // cancels a running quantization and joins its thread

    bool isRunning() const { return running_; }
    bool isCancelling() const { return running_ && cancel_; }
    QuantizeOptions options() const { return options_; } // of the current / last run

    // Starts a run; "" when it started, else why not (a run is going, no input, no output,
    // the output is the input). quantize_model checks the rest (its errors come as failed()).
    QString start(const QuantizeOptions& options);
    // Asks the run to stop; cancelled() follows (or finished()/failed() when it was done).
    void cancel();
    // Waits (blocking) up to `ms` for the worker to end and delivers its outcome: for tests
    // and shutdown, never on the GUI thread during normal use.
    bool waitForFinished(int ms);

  signals:
    void started();
    void progress(const llmwb::QuantizeProgress& progress);
    void finished(const llmwb::QuantizeReport& report); // the output file is complete
    void failed(const QString& message);                // the whole error message
    void cancelled();
    void runningChanged(bool running);

  private:
    struct Shared; // state the worker thread and the GUI thread both touch
    void deliverProgress();
    void deliverOutcome();
    void joinWorker();

    Runner runner_;
    QuantizeOptions options_;
    bool running_ = false;
    std::atomic<bool> cancel_{false};
    std::shared_ptr<Shared> shared_;
    std::thread worker_;
};

} // namespace llmwb

Q_DECLARE_METATYPE(llmwb::QuantizeProgress)
Q_DECLARE_METATYPE(llmwb::QuantizeReport)
