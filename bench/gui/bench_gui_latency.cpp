// llmwb-bench-gui-latency: how late the GUI thread's event loop runs while the engine works.
//
// Starts the real MainWindow (offscreen unless QT_QPA_PLATFORM says otherwise) with the
// ChatController and an EngineWorker in its own thread, wired as main() wires them, on the
// built-in demo model. Then streams one long chat answer into the Chat panel and, while it runs,
// fires the load test (16 concurrent requests) so the Engine views update under load. Two
// probes run on the GUI thread for the whole run:
//   - a 5 ms precise QTimer: lateness = time between two ticks minus 5 ms;
//   - posted events: every 10 ms a queued call carries its posting time; delay = when it runs.
//   - the GUI thread's own work: the thread CPU time of each top-level event it dispatches
//     (QApplication::notify), which the other processes on a loaded machine do not inflate.
// Prints max / p99 / p50 of each in ms, the number of samples, the event that cost the most,
// and the run's duration.
// No pass/fail: the target is a worst case under 50 ms.
//
// Usage: llmwb-bench-gui-latency [--tokens N] [--load-test N] [--threads N]
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

#include "app/services/app_settings.h"
#include "app/services/chat_controller.h"
#include "app/services/chat_wiring.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "app/services/engine_worker.h"
#include "ui/main_window.h"

using namespace llmwb;

namespace {

struct Summary {
    double max = 0, p99 = 0, p50 = 0;
    size_t n = 0;
};

Summary summarize(std::vector<double> v) {
    Summary s;
    s.n = v.size();
    if (v.empty())
        return s;
    std::sort(v.begin(), v.end());
    auto at = [&](double q) { return v[std::min(v.size() - 1, size_t(q * double(v.size())))]; };
    s.max = v.back();
    s.p99 = at(0.99);
    s.p50 = at(0.50);
    return s;
}

void print(const char* name, const Summary& s) {
    std::printf("%-28s max %7.2f ms   p99 %7.2f ms   p50 %7.2f ms   (%zu samples)\n", name, s.max,
                s.p99, s.p50, s.n);
}

double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// Times every top-level event the GUI thread dispatches (nested sendEvent calls count in the
// event that made them).
class TimingApp : public QApplication {
  public:
    using QApplication::QApplication;
    bool measuring = false;
    std::vector<double> eventCpuMs;
    double worstMs = 0;
    QString worstWhat;

    bool notify(QObject* receiver, QEvent* event) override {
        if (QThread::currentThread() != thread()) // the engine thread's events
            return QApplication::notify(receiver, event);
        if (!measuring || depth_ > 0) {
            ++depth_;
            const bool r = QApplication::notify(receiver, event);
            --depth_;
            return r;
        }
        const int type = int(event->type()); // the event may be gone after dispatch
        const char* cls = receiver->metaObject()->className();
        ++depth_;
        const double t0 = threadCpuMs();
        const bool r = QApplication::notify(receiver, event);
        const double dt = threadCpuMs() - t0;
        --depth_;
        eventCpuMs.push_back(dt);
        if (dt > worstMs) {
            worstMs = dt;
            worstWhat = QStringLiteral("event type %1 to %2").arg(type).arg(QLatin1String(cls));
        }
        return r;
    }

  private:
    int depth_ = 0; // GUI thread only
};

} // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    TimingApp app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("llmwb-bench-gui-latency"));
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("GUI event-loop latency while a long generation and a load test run"));
    parser.addHelpOption();
    QCommandLineOption tokensOpt(QStringLiteral("tokens"),
                                 QStringLiteral("Tokens of the long chat answer (default 4000)."),
                                 QStringLiteral("N"), QStringLiteral("4000"));
    QCommandLineOption loadOpt(QStringLiteral("load-test"),
                               QStringLiteral("Requests of the load test (default 16)."),
                               QStringLiteral("N"), QStringLiteral("16"));
    QCommandLineOption threadsOpt(QStringLiteral("threads"),
                                  QStringLiteral("Engine threads (default: all cores)."),
                                  QStringLiteral("N"), QStringLiteral("0"));
    parser.addOptions({tokensOpt, loadOpt, threadsOpt});
    parser.process(app);
    const int tokens = std::max(1, parser.value(tokensOpt).toInt());
    const int loadRequests = std::max(0, parser.value(loadOpt).toInt());

    QTemporaryDir dir;
    if (!dir.isValid()) {
        std::fprintf(stderr, "cannot create a temporary folder\n");
        return 1;
    }
    Database db(dir.filePath(QStringLiteral("bench.sqlite")));
    if (!db.open()) {
        std::fprintf(stderr, "database: %s\n", qPrintable(db.errorString()));
        return 1;
    }
    ConversationStore store(db);
    ChatController controller(store);
    AppSettings settings(dir.filePath(QStringLiteral("settings.ini")));

    QThread engineThread;
    auto* worker = new EngineWorker(parser.value(threadsOpt).toInt());
    worker->moveToThread(&engineThread);
    QObject::connect(&engineThread, &QThread::finished, worker, &QObject::deleteLater);
    engineThread.start();

    MainWindow window(controller, settings);
    connectChatToWorker(controller, worker);
    QObject::connect(worker, &EngineWorker::modelLoaded, &window, &MainWindow::onModelLoaded);
    QObject::connect(worker, &EngineWorker::modelLoaded, &controller,
                     [&controller](const ModelMetadata& m) { controller.setModelName(m.name); });
    QObject::connect(worker, &EngineWorker::engineView, &window, &MainWindow::onEngineView);
    window.resize(1600, 900);
    window.show();

    // The probes.
    std::vector<double> timerLate, postDelay;
    QElapsedTimer clock;
    bool measuring = false;
    qint64 lastTickNs = 0;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    tick.setInterval(5);
    QObject::connect(&tick, &QTimer::timeout, &app, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (measuring && lastTickNs > 0)
            timerLate.push_back(std::max(0.0, double(now - lastTickNs) / 1e6 - 5.0));
        lastTickNs = now;
    });
    QTimer poster;
    poster.setInterval(10);
    QObject::connect(&poster, &QTimer::timeout, &app, [&] {
        const qint64 posted = clock.nsecsElapsed();
        QMetaObject::invokeMethod(
            &app,
            [&, posted] {
                if (measuring)
                    postDelay.push_back(double(clock.nsecsElapsed() - posted) / 1e6);
            },
            Qt::QueuedConnection);
    });

    bool failed = false;
    bool answerDone = false, loadDone = loadRequests == 0;
    qint64 runStartNs = 0, runEndNs = 0;
    int completedLoad = 0;
    auto maybeFinish = [&] {
        if (answerDone && loadDone && measuring) {
            measuring = false;
            app.measuring = false;
            runEndNs = clock.nsecsElapsed();
            app.quit();
        }
    };
    QObject::connect(worker, &EngineWorker::loadFailed, &app, [&](const QString& m) {
        std::fprintf(stderr, "the demo model did not load: %s\n", qPrintable(m));
        failed = true;
        app.quit();
    });
    QObject::connect(&controller, &ChatController::errorOccurred, &app, [&](const QString& m) {
        std::fprintf(stderr, "chat error: %s\n", qPrintable(m));
    });
    QObject::connect(&controller, &ChatController::messageFinished, &app,
                     [&](const ChatMessage& m) {
                         std::printf("long answer: %lld tokens, %.1f tokens/s\n",
                                     static_cast<long long>(m.completionTokens.value_or(0)),
                                     m.tokensPerSecond.value_or(0));
                         answerDone = true;
                         maybeFinish();
                     });
    QObject::connect(worker, &EngineWorker::loadTestFinished, &app, [&](int completed) {
        completedLoad = completed;
        loadDone = true;
        maybeFinish();
    });
    bool loadTestStarted = false;
    QObject::connect(&controller, &ChatController::messageTextChanged, &app, [&] {
        // The load test joins once the long answer streams, so both run together.
        if (!loadTestStarted && loadRequests > 0) {
            loadTestStarted = true;
            QMetaObject::invokeMethod(worker, "runLoadTest", Qt::QueuedConnection,
                                      Q_ARG(int, loadRequests));
        }
    });
    QObject::connect(worker, &EngineWorker::modelLoaded, &app, [&](const ModelMetadata& m) {
        std::printf("model: %s (%s), %d layers, hidden %d\n", qPrintable(m.name),
                    qPrintable(m.architecture), m.layers, m.hiddenSize);
        SamplingSettings s;
        s.temperature = 0.8;
        s.seed = 1;
        s.maxTokens = tokens;
        controller.setDefaultSampling(s);
        const auto conv = controller.newConversation(QStringLiteral("latency benchmark"));
        if (!conv) {
            failed = true;
            app.quit();
            return;
        }
        window.openConversation(conv->id);
        measuring = true;
        app.measuring = true;
        runStartNs = clock.nsecsElapsed();
        controller.send(conv->id, QStringLiteral("Write a long story about a lighthouse keeper."));
    });

    clock.start();
    tick.start();
    poster.start();
    QMetaObject::invokeMethod(worker, "loadDemoModel", Qt::QueuedConnection,
                              Q_ARG(QString, dir.path()));
    QTimer::singleShot(10 * 60 * 1000, &app, [&] {
        std::fprintf(stderr, "gave up after 10 minutes\n");
        failed = true;
        app.quit();
    });
    app.exec();

    tick.stop();
    poster.stop();
    worker->stopAll();
    engineThread.quit();
    engineThread.wait();
    controller.shutdown();
    if (failed)
        return 1;
    std::printf("load test: %d of %d requests completed\n", completedLoad, loadRequests);
    std::printf("run: %.2f s (long answer of up to %d tokens + load test of %d requests)\n",
                double(runEndNs - runStartNs) / 1e9, tokens, loadRequests);
    print("5 ms timer lateness", summarize(timerLate));
    print("posted event delay", summarize(postDelay));
    print("GUI thread CPU per event", summarize(app.eventCpuMs));
    std::printf("costliest event: %s\n", qPrintable(app.worstWhat));
    const double worst = std::max(summarize(timerLate).max, summarize(postDelay).max);
    std::printf("worst GUI event-loop latency: %.2f ms (target < 50 ms; on a loaded machine it\n"
                "includes time the GUI thread waited for a CPU)\n",
                worst);
    return 0;
}
