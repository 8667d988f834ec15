// llm-workbench: the composition root of the desktop app. Builds the services and the window
// and passes references; the engine worker lives in its own QThread.
#include <QApplication>
#include <QByteArray>
#include <QCommandLineParser>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <memory>

#include "app/gui/database_startup.h"
#include "app/gui/screenshot_runner.h"
#include "app/gui/translation_loader.h"
#include "app/services/app_settings.h"
#include "app/services/bench_controller.h"
#include "app/services/bench_store.h"
#include "app/services/chat_controller.h"
#include "app/services/chat_wiring.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "app/services/engine_worker.h"
#include "app/services/local_server.h"
#include "app/services/think_controller.h"
#include "app/services/think_store.h"
#ifdef LLMWB_HAVE_REMOTE
#include "app/gui/remote_screenshot_runner.h"
#include "app/services/remote_backend.h"
#endif
#include "ui/chat_view.h"
#include "ui/local_server_panel.h"
#include "ui/main_window.h"
#include "ui/theme.h"

using namespace llmwb;

namespace {

// The command line, the same for the display-less --help/--version pass and the real run.
struct Options {
    QCommandLineOption dataDir{
        QStringLiteral("data-dir"),
        QStringLiteral("Folder for the chat database, settings and the demo model (default: the "
                       "user's application data folder)."),
        QStringLiteral("DIR")};
    QCommandLineOption screenshot{
        QStringLiteral("screenshot"),
        QStringLiteral("Render the main window states to PNG files in DIR and quit (uses a "
                       "fresh temporary data folder unless --data-dir is given)."),
        QStringLiteral("DIR")};
    QCommandLineOption remoteScreenshots{
        QStringLiteral("remote-screenshots"),
        QStringLiteral("Chat through the remote endpoint chosen in the settings, render the "
                       "remote views to PNG files in DIR and quit."),
        QStringLiteral("DIR")};
    QCommandLineOption model{QStringLiteral("model"),
                             QStringLiteral("Open this .gguf file or model folder."),
                             QStringLiteral("PATH")};

    void addTo(QCommandLineParser& parser) const {
        parser.setApplicationDescription(QStringLiteral(
            "LLM Workbench: chat with local models (GGUF files, Hugging Face safetensors "
            "folders) and watch the inference engine work.\n"
            "Qt options such as -platform and -style are accepted too."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addOption(dataDir);
        parser.addOption(screenshot);
        parser.addOption(remoteScreenshots);
        parser.addOption(model);
        // The .desktop file's Exec=llm-workbench %F: a double-clicked .gguf arrives here.
        parser.addPositionalArgument(QStringLiteral("file"),
                                     QStringLiteral("A .gguf file or model folder to open (the "
                                                    "same as --model)."),
                                     QStringLiteral("[FILE]"));
    }
};

void setApplicationNames() {
    QCoreApplication::setOrganizationName(QStringLiteral("llmwb"));
    QCoreApplication::setApplicationName(QStringLiteral("llm-workbench"));
    QCoreApplication::setApplicationVersion(QStringLiteral(LLMWB_VERSION));
}

// --help and --version need no display: they are answered by a QCoreApplication before the
// QApplication (which would abort without an X server or Wayland compositor) is created.
bool asksForHelpOrVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "--")
            break;
        if (a == "-h" || a == "--help" || a == "-?" || a == "--help-all" || a == "-v" ||
            a == "--version")
            return true;
    }
    return false;
}

} // namespace

int main(int argc, char** argv) {
    if (asksForHelpOrVersion(argc, argv)) {
        QCoreApplication core(argc, argv);
        setApplicationNames();
        QCommandLineParser parser;
        const Options options;
        options.addTo(parser);
        parser.process(core); // prints the help or the version and exits 0
        return 0;
    }

    QApplication app(argc, argv);
    setApplicationNames();
    QApplication::setApplicationDisplayName(QStringLiteral("LLM Workbench"));
    registerGenerationTypes();

    QCommandLineParser parser;
    const Options options;
    options.addTo(parser);
    const QCommandLineOption& dataDirOpt = options.dataDir;
    const QCommandLineOption& screenshotOpt = options.screenshot;
    const QCommandLineOption& modelOpt = options.model;
    parser.process(app);

    const bool screenshots = parser.isSet(screenshotOpt);
    std::unique_ptr<QTemporaryDir> tempData;
    QString dataDir = parser.value(dataDirOpt);
    if (dataDir.isEmpty() && screenshots) {
        tempData = std::make_unique<QTemporaryDir>();
        dataDir = tempData->path();
    }
    if (dataDir.isEmpty())
        dataDir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    QDir().mkpath(dataDir);

    AppSettings settings(parser.isSet(dataDirOpt) || screenshots
                             ? QDir(dataDir).filePath(QStringLiteral("settings.ini"))
                             : QString());
    TranslationLoader translations(app);
    translations.apply(screenshots ? QStringLiteral("en") : settings.language());
    ThemeController theme(app);
    theme.apply(screenshots ? ThemeChoice::Light : settings.theme());

    // The chat database: one instance per data folder; a read-only, damaged or unusable file
    // is explained and the user chooses (see ChatDatabaseStartup).
    ChatDatabaseStartup chatDb = ChatDatabaseStartup::open(dataDir);
    if (chatDb.quit)
        return chatDb.exitCode;
    Database* activeDb = chatDb.db.get();
    ConversationStore store(*activeDb);
    store.recoverInterruptedMessages();

    ChatController controller(store);
    controller.setDefaultSampling(settings.defaultSampling());
    controller.setReadOnlyReason(chatDb.readOnlyReason);

    QThread engineThread;
    engineThread.setObjectName(QStringLiteral("engine"));
    auto* worker = new EngineWorker();
    worker->moveToThread(&engineThread);
    QObject::connect(&engineThread, &QThread::finished, worker, &QObject::deleteLater);
    engineThread.start();

    MainWindow window(controller, settings);
    window.chatView()->setReadOnlyReason(chatDb.readOnlyReason);
    chatDb.listenForActivation(&window);
#ifdef LLMWB_HAVE_REMOTE
    // The chat goes to the local engine or to a remote endpoint (Model dock: Chat backend).
    RemoteBackend remote(controller, worker, settings.raw());
    window.attachRemote(remote);
    QObject::connect(worker, &EngineWorker::modelLoaded, &remote,
                     [&remote](const ModelMetadata& m) { remote.setLocalModelName(m.name); });
    std::unique_ptr<RemoteScreenshotRunner> remoteShots;
    if (parser.isSet(options.remoteScreenshots)) {
        remoteShots = std::make_unique<RemoteScreenshotRunner>(
            window, controller, remote, translations, parser.value(options.remoteScreenshots));
        QTimer::singleShot(1500, remoteShots.get(), &RemoteScreenshotRunner::start);
    }
#else
    connectChatToWorker(controller, worker);
    QObject::connect(worker, &EngineWorker::modelLoaded, &controller,
                     [&controller](const ModelMetadata& m) { controller.setModelName(m.name); });
#endif
    QObject::connect(worker, &EngineWorker::modelLoading, &window, &MainWindow::onModelLoading);
    QObject::connect(worker, &EngineWorker::modelLoaded, &window, &MainWindow::onModelLoaded);
    QObject::connect(worker, &EngineWorker::loadFailed, &window, &MainWindow::onModelLoadFailed);
    QObject::connect(worker, &EngineWorker::loadProgress, &window, &MainWindow::onLoadProgress);
    QObject::connect(worker, &EngineWorker::loadCancelled, &window, &MainWindow::onLoadCancelled);
    QObject::connect(
        &window, &MainWindow::loadCancelRequested, worker, [worker] { worker->cancelLoad(); },
        Qt::DirectConnection);
    // Tuning applies live: queued to the worker (the GUI never waits on the engine).
    QObject::connect(&window, &MainWindow::tuningChanged, worker, &EngineWorker::setTuning,
                     Qt::QueuedConnection);
    QMetaObject::invokeMethod(worker, "setTuning", Qt::QueuedConnection,
                              Q_ARG(llmwb::EngineTuning, settings.engineTuning()));
    QObject::connect(worker, &EngineWorker::engineView, &window, &MainWindow::onEngineView);
    // The device (Model panel, saved in the settings) applies before the first load.
    QObject::connect(&window, &MainWindow::deviceChosen, worker, &EngineWorker::setDevice,
                     Qt::QueuedConnection);
    QObject::connect(worker, &EngineWorker::deviceAvailability, &window,
                     &MainWindow::onDeviceAvailability);
    QMetaObject::invokeMethod(worker, "setDevice", Qt::QueuedConnection,
                              Q_ARG(QString, settings.device()));
    QObject::connect(&window, &MainWindow::weightDtypeChosen, worker, &EngineWorker::setWeightDtype,
                     Qt::QueuedConnection);
    QMetaObject::invokeMethod(worker, "setWeightDtype", Qt::QueuedConnection,
                              Q_ARG(QString, settings.weightDtype()));
    QMetaObject::invokeMethod(worker, "probeDevices", Qt::QueuedConnection);
    // Benchmarks: runs stored in the same database as the chats; the load test is a preset.
    BenchStore benchStore(*activeDb);
    BenchController bench(benchStore);
    window.attachBenchmark(bench);
    QObject::connect(&bench, &BenchController::startRequested, worker, &EngineWorker::runBenchmark,
                     Qt::QueuedConnection);
    QObject::connect(
        &bench, &BenchController::cancelRequested, worker, [worker] { worker->cancelBenchmark(); },
        Qt::DirectConnection);
    QObject::connect(worker, &EngineWorker::benchProgress, &bench, &BenchController::onProgress);
    QObject::connect(worker, &EngineWorker::benchRunFinished, &bench,
                     &BenchController::onRunFinished);
    QObject::connect(worker, &EngineWorker::benchFinished, &bench, &BenchController::onFinished);
    // Think harder: ladders on the loaded model, stored beside the benchmark runs.
    ThinkStore thinkStore(*activeDb);
    ThinkController think(thinkStore, &benchStore);
    window.attachThink(think);
    QObject::connect(&think, &ThinkController::startRequested, worker, &EngineWorker::runThink,
                     Qt::QueuedConnection);
    QObject::connect(
        &think, &ThinkController::cancelRequested, worker, [worker] { worker->cancelThink(); },
        Qt::DirectConnection);
    QObject::connect(worker, &EngineWorker::thinkProgress, &think, &ThinkController::onProgress);
    QObject::connect(worker, &EngineWorker::thinkFinished, &think, &ThinkController::onFinished);
    QObject::connect(&window, &MainWindow::openModelRequested, worker,
                     [worker](const QString& path) {
                         QMetaObject::invokeMethod(worker, "loadModel", Qt::QueuedConnection,
                                                   Q_ARG(QString, path));
                     });
    QObject::connect(&window, &MainWindow::themeChosen, &window,
                     [&theme](ThemeChoice t) { theme.apply(t); });
    QObject::connect(&window, &MainWindow::languageChosen, &window,
                     [&translations](const QString& code) { translations.apply(code); });

    // The Local server: OpenAI API requests join the chats' batch in the worker's engine.
    LocalServer localServer(worker->servingBackend());
    auto* serverDock = addLocalServerDock(window, localServer, settings);

    std::unique_ptr<ScreenshotRunner> runner;
    if (screenshots) {
        runner = std::make_unique<ScreenshotRunner>(window, controller, theme, translations,
                                                    parser.value(screenshotOpt));
        QObject::connect(worker, &EngineWorker::modelLoaded, runner.get(),
                         &ScreenshotRunner::onModelLoaded);
        QObject::connect(worker, &EngineWorker::loadFailed, runner.get(),
                         &ScreenshotRunner::onModelLoadFailed);
        window.resize(1600, 900);
    } else {
        window.restoreLayout();
        // Started as it was left (not in screenshot runs: no port is taken there).
        if (auto* panel = serverDock->findChild<LocalServerPanel*>())
            panel->restore();
        if (settings.localServer().enabled)
            serverDock->raise(); // a server left on shows its log
    }
    window.show();
    // A fresh profile starts with the first-run panel: this machine, the models it has, the fit.
    if (!screenshots && !settings.firstRunDone())
        window.showFirstRun();

    // Start on the requested model, the last one used, or the demo model.
    QString model = parser.value(modelOpt);
    if (model.isEmpty() && !parser.positionalArguments().isEmpty())
        model = parser.positionalArguments().constFirst();
    // A path given on the command line is loaded even when it is missing: the load error names
    // it (the last model used falls back to the demo model quietly).
    const bool modelGiven = !model.isEmpty();
    if (model.isEmpty() && !screenshots)
        model = settings.lastModel();
    if (modelGiven || (!model.isEmpty() && QFileInfo::exists(model))) {
        QMetaObject::invokeMethod(worker, "loadModel", Qt::QueuedConnection, Q_ARG(QString, model));
    } else {
        QMetaObject::invokeMethod(worker, "loadDemoModel", Qt::QueuedConnection,
                                  Q_ARG(QString, dataDir));
    }

    // Quitting during a generation: stop the engine, join its thread, save what streamed.
    QObject::connect(&app, &QCoreApplication::aboutToQuit, &app, [&] {
        localServer.stop(); // its streams end with "abort"; no HTTP thread waits on the engine
        worker->stopAll();
#ifdef LLMWB_HAVE_REMOTE
        remote.poller().stop();
        remote.chatWorker().stopAll();
#endif
        engineThread.quit();
        engineThread.wait();
        controller.shutdown();
        settings.sync();
    });
    return app.exec();
}
