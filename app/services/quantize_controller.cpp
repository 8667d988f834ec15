#include "app/services/quantize_controller.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QFileInfo>
#include <QThread>

#include <exception>
#include <optional>

namespace llmwb {

namespace {

Result<QuantizeReport> run_quantize_model(const QuantizeOptions& o, const QuantizeProgressFn& p,
                                          const std::atomic<bool>* cancel) {
#ifdef LLMWB_HAVE_QUANTIZE_MODEL
    return quantize_model(o, p, cancel);
#else
    (void)o;
    (void)p;
    (void)cancel;
    return make_error("quantization is not built into this version (quantize_model is missing)");
#endif
}

} // namespace

struct QuantizeController::Shared {
    std::mutex mu;
    QuantizeProgress latest;
    bool progressQueued = false;                   // a deliverProgress() is on its way
    std::optional<Result<QuantizeReport>> outcome; // set once, when the runner returned
};

QuantizeController::QuantizeController(QObject* parent)
    : QuantizeController(Runner(run_quantize_model), parent) {}

QuantizeController::QuantizeController(Runner runner, QObject* parent)
    : QObject(parent), runner_(std::move(runner)) {
    qRegisterMetaType<QuantizeProgress>();
    qRegisterMetaType<QuantizeReport>();
}

QuantizeController::~QuantizeController() {
    cancel_ = true;
    joinWorker(); // queued deliveries to this object are dropped with it
}

void QuantizeController::joinWorker() {
    if (worker_.joinable())
        worker_.join();
}

QString QuantizeController::start(const QuantizeOptions& options) {
    if (running_)
        return tr("A quantization is already running.");
    if (options.input.empty())
        return tr("Choose the model to quantize.");
    if (options.output.empty())
        return tr("Choose where to write the quantized model.");
    const QFileInfo in(QString::fromStdString(options.input));
    const QFileInfo out(QString::fromStdString(options.output));
    if (in.absoluteFilePath() == out.absoluteFilePath() ||
        (out.exists() && in.exists() && in.canonicalFilePath() == out.canonicalFilePath()))
        return tr("The output must be another file than the input.");
    joinWorker(); // the previous run's thread has delivered its outcome; it is ending
    options_ = options;
    cancel_ = false;
    running_ = true;
    auto shared = std::make_shared<Shared>();
    shared_ = shared;
    emit runningChanged(true);
    emit started();
    worker_ = std::thread([this, shared, runner = runner_, opts = options] {
        QuantizeProgressFn onProgress = [this, shared](const QuantizeProgress& p) {
            std::lock_guard lock(shared->mu);
            shared->latest = p;
            if (!shared->progressQueued) {
                shared->progressQueued = true;
                QMetaObject::invokeMethod(
                    this, [this] { deliverProgress(); }, Qt::QueuedConnection);
            }
        };
        std::optional<Result<QuantizeReport>> r;
        try {
            r.emplace(runner(opts, onProgress, &cancel_));
        } catch (const std::exception& e) {
            r.emplace(make_error(std::string("quantize: ") + e.what()));
        }
        {
            std::lock_guard lock(shared->mu);
            shared->outcome = std::move(r);
        }
        QMetaObject::invokeMethod(
            this, [this] { deliverOutcome(); }, Qt::QueuedConnection);
    });
    return {};
}

void QuantizeController::cancel() {
    if (running_)
        cancel_ = true;
}

void QuantizeController::deliverProgress() {
    QuantizeProgress p;
    {
        std::lock_guard lock(shared_->mu);
        p = shared_->latest;
        shared_->progressQueued = false;
    }
    if (running_)
        emit progress(p);
}

void QuantizeController::deliverOutcome() {
    std::optional<Result<QuantizeReport>> r;
    {
        std::lock_guard lock(shared_->mu);
        if (!shared_->outcome)
            return;
        r = std::move(shared_->outcome);
        shared_->outcome.reset();
    }
    joinWorker();
    running_ = false;
    const bool wasCancelled = cancel_;
    emit runningChanged(false);
    if (r->ok())
        emit finished(r->value());
    else if (wasCancelled)
        emit cancelled();
    else
        emit failed(QString::fromStdString(r->message()));
}

bool QuantizeController::waitForFinished(int ms) {
    QDeadlineTimer deadline(ms);
    while (running_ && !deadline.hasExpired()) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
        if (running_)
            QThread::msleep(1);
    }
    return !running_;
}

} // namespace llmwb
