#include "ui/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScrollArea>
#include <QShowEvent>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>

#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "ui/benchmark_page.h"
#include "ui/chat_view.h"
#include "ui/conversation_list_model.h"
#include "ui/conversations_panel.h"
#include "ui/eliding_label.h"
#include "ui/engine_panel.h"
#include "ui/message_widget.h"
#include "ui/model_panel.h"
#include "ui/search_results_model.h"
#include "ui/storage_banner.h"
#include "ui/think_page.h"
#include "ui/tuning_panel.h"

namespace llmwb {

namespace {
constexpr int kLayoutVersion = 2; // 2: Engine above Tuning, Model below Conversations
} // namespace

MainWindow::MainWindow(ChatController& controller, AppSettings& settings, QWidget* parent)
    : QMainWindow(parent), controller_(controller), settings_(settings) {
    setObjectName(QStringLiteral("mainWindow"));
    setAcceptDrops(true);
    setDockNestingEnabled(true);
    setMinimumSize(960, 600);

    conversationModel_ = new ConversationListModel(controller_.store(), this);
    searchModel_ = new SearchResultsModel(controller_.store(), this);
    chat_ = new ChatView(controller_, this);
    setCentralWidget(chat_);
    // The conversation list could not be read (a damaged database): said above the chat.
    chat_->storageBanner()->setReadError(QStringLiteral("list"), conversationModel_->loadError());
    connect(conversationModel_, &ConversationListModel::loadErrorChanged, chat_->storageBanner(),
            [this](const QString& e) {
                chat_->storageBanner()->setReadError(QStringLiteral("list"), e);
            });
    createDocks();
    createActions();
    createQuantizeAction();
    createFirstRunAction();
    createMenus();

    // The model's line is elided (the whole text in its tooltip) so that a long name or error
    // never pushes into the messages on the left.
    statusModel_ = new ElidingLabel(this);
    statusModel_->setObjectName(QStringLiteral("statusModel"));
    statusModel_->setMaximumWidth(420);
    statusState_ = new QLabel(this);
    statusState_->setObjectName(QStringLiteral("statusState"));
    // Both permanent (right side): temporary messages (figures, errors) use the left side.
    // Undo of a deleted message: a button at the left of the permanent part (temporary
    // messages would hide a normal one) for kUndoSeconds.
    undoButton_ = new QPushButton(this);
    undoButton_->setObjectName(QStringLiteral("undoDeleteButton"));
    undoButton_->setFlat(true);
    undoButton_->setFocusPolicy(Qt::NoFocus);
    undoButton_->hide();
    statusBar()->addPermanentWidget(undoButton_);
    connect(undoButton_, &QPushButton::clicked, this, &MainWindow::undoDelete);
    undoTimer_ = new QTimer(this);
    undoTimer_->setSingleShot(true);
    undoTimer_->setInterval(kUndoSeconds * 1000);
    connect(undoTimer_, &QTimer::timeout, this, [this] {
        deleted_.reset();
        undoButton_->hide();
        undoDelete_->setEnabled(false);
    });
    connect(chat_, &ChatView::messageDeleted, this, [this](const ChatMessage& m) {
        deleted_ = m;
        undoButton_->show();
        undoDelete_->setEnabled(true);
        undoTimer_->start();
        statusBar()->showMessage(tr("Message deleted."), kUndoSeconds * 1000);
    });
    statusBar()->addPermanentWidget(statusModel_);
    statusBar()->addPermanentWidget(statusState_);

    connect(&controller_, &ChatController::conversationCreated, conversationModel_,
            &ConversationListModel::addConversation);
    connect(&controller_, &ChatController::conversationDeleted, conversationModel_,
            &ConversationListModel::removeConversation);
    connect(&controller_, &ChatController::conversationChanged, conversationModel_,
            &ConversationListModel::refreshConversation);
    connect(&controller_, &ChatController::messageAdded, this, [this](const ChatMessage& m) {
        conversationModel_->refreshConversation(m.conversationId);
    });
    connect(&controller_, &ChatController::generatingChanged, this, &MainWindow::updateStatus);
    connect(&controller_, &ChatController::generatingChanged, conversationModel_,
            &ConversationListModel::setGenerating);
    connect(&controller_, &ChatController::messageFinished, this, [this](const ChatMessage& m) {
        if (m.tokensPerSecond)
            statusBar()->showMessage(MessageWidget::figuresText(m), 8000);
    });
    connect(&controller_, &ChatController::errorOccurred, this, &MainWindow::showError);
    // Switching conversations (a click, Enter in the list, a search hit) puts the keyboard in
    // the message box, ready for the next message.
    connect(conversations_, &ConversationsPanel::conversationActivated, this,
            [this](qint64 conversationId) {
                openConversation(conversationId);
                chat_->focusInput();
            });
    connect(conversations_, &ConversationsPanel::searchHitActivated, this,
            [this](qint64 conversationId, qint64 messageId) {
                chat_->setConversation(conversationId);
                chat_->scrollToMessage(messageId);
                updateStatus();
                chat_->focusInput();
            });
    connect(conversations_, &ConversationsPanel::newConversationRequested, this,
            &MainWindow::newConversation);
    connect(conversations_, &ConversationsPanel::deleteConversationRequested, this,
            [this](qint64 id) {
                const auto answer =
                    QMessageBox::question(this, tr("Delete conversation"),
                                          tr("Delete this conversation and all its messages?"));
                if (answer == QMessageBox::Yes)
                    deleteConversation(id);
            });
    connect(conversationModel_, &ConversationListModel::renameRequested, this,
            &MainWindow::renameConversation);
    connect(conversations_, &ConversationsPanel::exportConversationRequested, this,
            [this](qint64 id) {
                openConversation(id);
                exportCurrent(QStringLiteral("md"));
            });
    connect(chat_, &ChatView::conversationNeeded, this, &MainWindow::newConversation);
    connect(model_, &ModelPanel::openRequested, this, &MainWindow::openModelRequested);
    connect(model_, &ModelPanel::removeRecentRequested, this,
            [this](const QString& path) { settings_.removeRecentModel(path); });
    connect(model_, &ModelPanel::cancelLoadRequested, this, &MainWindow::loadCancelRequested);
    connect(model_, &ModelPanel::deviceChosen, this, [this](const QString& preference) {
        settings_.setDevice(preference);
        emit deviceChosen(preference);
    });
    model_->setDevicePreference(settings_.device());
    connect(model_, &ModelPanel::weightDtypeChosen, this, [this](const QString& dtype) {
        settings_.setWeightDtype(dtype);
        emit weightDtypeChosen(dtype);
    });
    model_->setWeightDtype(settings_.weightDtype());
    connect(tuning_, &TuningPanel::tuningChanged, this, &MainWindow::tuningChanged);
    connect(tuning_, &TuningPanel::samplingChanged, this,
            [this](const SamplingSettings& s) { controller_.setDefaultSampling(s); });
    model_->setRecentModels(settings_.recentModels());

    retranslate();
    // Open the most recent conversation.
    if (conversationModel_->rowCount() > 0)
        openConversation(conversationModel_->idAt(0));
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks() {
    auto makeDock = [this](const char* name, QWidget* content, Qt::DockWidgetArea area) {
        auto* dock = new QDockWidget(this);
        dock->setObjectName(QLatin1String(name));
        dock->setWidget(content);
        dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                          QDockWidget::DockWidgetClosable);
        addDockWidget(area, dock);
        return dock;
    };
    conversations_ = new ConversationsPanel(*conversationModel_, *searchModel_, this);
    conversationsDock_ = makeDock("conversationsDock", conversations_, Qt::LeftDockWidgetArea);
    model_ = new ModelPanel(this);
    modelDock_ = makeDock("modelDock", model_, Qt::RightDockWidgetArea);
    engine_ = new EnginePanel(this);
    engineDock_ = makeDock("engineDock", engine_, Qt::RightDockWidgetArea);
    tuning_ = new TuningPanel(settings_);
    tuning_->setObjectName(QStringLiteral("tuningPanel"));
    auto* tuningScroll = new QScrollArea(this);
    tuningScroll->setWidgetResizable(true);
    tuningScroll->setFrameShape(QFrame::NoFrame);
    tuningScroll->setWidget(tuning_);
    // Scrolls vertically only; the dock is never narrower than the controls (see eventFilter).
    tuningScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    tuningScroll_ = tuningScroll;
    tuning_->installEventFilter(this);
    tuningDock_ = makeDock("tuningDock", tuningScroll, Qt::RightDockWidgetArea);
    // The default layout shows the Tuning controls and the Engine views at the same time (a
    // slider's effect on the block map is seen while it is dragged): Conversations above the
    // Model on the left, the Engine above the Tuning on the right, the chat in between.
    splitDockWidget(conversationsDock_, modelDock_, Qt::Vertical);
    splitDockWidget(engineDock_, tuningDock_, Qt::Vertical);
    resizeDocks({conversationsDock_, engineDock_}, {270, 400}, Qt::Horizontal);
    resizeDocks({conversationsDock_, modelDock_}, {380, 320}, Qt::Vertical);
    resizeDocks({engineDock_, tuningDock_}, {420, 300}, Qt::Vertical);
}

void MainWindow::createActions() {
    auto make = [this](const char* name, const QKeySequence& key = {}) {
        auto* a = new QAction(this);
        a->setObjectName(QLatin1String(name));
        if (!key.isEmpty())
            a->setShortcut(key);
        addAction(a); // shortcuts work wherever the focus is in the window
        return a;
    };
    newChat_ = make("newChatAction", QKeySequence(Qt::CTRL | Qt::Key_N));
    openModel_ = make("openModelAction", QKeySequence(Qt::CTRL | Qt::Key_O));
    openFolder_ = make("openModelFolderAction", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    rename_ = make("renameConversationAction", QKeySequence(Qt::Key_F2));
    undoDelete_ = make("undoDeleteAction", QKeySequence::Undo);
    undoDelete_->setEnabled(false);
    exportMd_ = make("exportMarkdownAction");
    exportJson_ = make("exportJsonAction");
    quit_ = make("quitAction", QKeySequence(Qt::CTRL | Qt::Key_Q));
    find_ = make("findAction", QKeySequence(Qt::CTRL | Qt::Key_F));
    send_ = make("sendAction", QKeySequence(Qt::CTRL | Qt::Key_Return));
    stop_ = make("stopAction", QKeySequence(Qt::Key_Escape));
    regenerate_ = make("regenerateAction", QKeySequence(Qt::CTRL | Qt::Key_R));
    conversationSettings_ = make("conversationSettingsAction");
    about_ = make("aboutAction");
    loadTest_ = make("loadTestAction");
    quit_->setMenuRole(QAction::QuitRole);

    auto* themes = new QActionGroup(this);
    themeSystem_ = make("themeSystemAction");
    themeLight_ = make("themeLightAction");
    themeDark_ = make("themeDarkAction");
    for (QAction* a : {themeSystem_, themeLight_, themeDark_}) {
        a->setCheckable(true);
        themes->addAction(a);
    }
    const ThemeChoice theme = settings_.theme();
    (theme == ThemeChoice::Light  ? themeLight_
     : theme == ThemeChoice::Dark ? themeDark_
                                  : themeSystem_)
        ->setChecked(true);
    auto chooseTheme = [this](ThemeChoice t) {
        settings_.setTheme(t);
        emit themeChosen(t);
    };
    connect(themeSystem_, &QAction::triggered, this, [=] { chooseTheme(ThemeChoice::System); });
    connect(themeLight_, &QAction::triggered, this, [=] { chooseTheme(ThemeChoice::Light); });
    connect(themeDark_, &QAction::triggered, this, [=] { chooseTheme(ThemeChoice::Dark); });

    auto* languages = new QActionGroup(this);
    langSystem_ = make("languageSystemAction");
    langEn_ = make("languageEnglishAction");
    langZh_ = make("languageChineseAction");
    for (QAction* a : {langSystem_, langEn_, langZh_}) {
        a->setCheckable(true);
        languages->addAction(a);
    }
    const QString lang = settings_.language();
    (lang == QLatin1String("en")      ? langEn_
     : lang == QLatin1String("zh_CN") ? langZh_
                                      : langSystem_)
        ->setChecked(true);
    auto chooseLanguage = [this](const QString& code) {
        settings_.setLanguage(code);
        emit languageChosen(code);
    };
    connect(langSystem_, &QAction::triggered, this, [=] { chooseLanguage(QString()); });
    connect(langEn_, &QAction::triggered, this, [=] { chooseLanguage(QStringLiteral("en")); });
    connect(langZh_, &QAction::triggered, this, [=] { chooseLanguage(QStringLiteral("zh_CN")); });

    connect(newChat_, &QAction::triggered, this, &MainWindow::newConversation);
    // A GGUF file, or a Hugging Face folder given by its config.json (the dialog's filter
    // offers both) or chosen as a folder (Open model folder).
    connect(openModel_, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open a model"), QString(),
                                                          ModelPanel::openDialogFilter());
        const QString model = ModelPanel::modelPathForFile(path);
        if (!model.isEmpty())
            emit openModelRequested(model);
    });
    connect(openFolder_, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getExistingDirectory(
            this, tr("Open a Hugging Face model folder"), QString());
        if (!path.isEmpty())
            emit openModelRequested(path);
    });
    connect(undoDelete_, &QAction::triggered, this, &MainWindow::undoDelete);
    connect(rename_, &QAction::triggered, this, [this] {
        if (chat_->conversationId() == 0)
            return;
        conversationsDock_->show();
        conversationsDock_->raise();
        conversations_->selectConversation(chat_->conversationId());
        conversations_->renameSelected();
    });
    connect(exportMd_, &QAction::triggered, this, [this] { exportCurrent(QStringLiteral("md")); });
    connect(exportJson_, &QAction::triggered, this,
            [this] { exportCurrent(QStringLiteral("json")); });
    connect(quit_, &QAction::triggered, this, &QWidget::close);
    connect(find_, &QAction::triggered, this, [this] {
        conversationsDock_->show();
        conversationsDock_->raise();
        conversations_->focusSearch();
    });
    connect(send_, &QAction::triggered, chat_, &ChatView::send);
    connect(stop_, &QAction::triggered, chat_, &ChatView::stop);
    connect(regenerate_, &QAction::triggered, chat_, &ChatView::regenerateLast);
    connect(conversationSettings_, &QAction::triggered, chat_, &ChatView::editSettings);
    connect(loadTest_, &QAction::triggered, this, [this] {
        engineDock_->show();
        engineDock_->raise();
        emit loadTestRequested();
    });
    connect(about_, &QAction::triggered, this, &MainWindow::showAbout);
}

void MainWindow::createMenus() {
    fileMenu_ = menuBar()->addMenu(QString());
    fileMenu_->addAction(newChat_);
    fileMenu_->addAction(openModel_);
    fileMenu_->addAction(openFolder_);
    fileMenu_->addSeparator();
    fileMenu_->addAction(exportMd_);
    fileMenu_->addAction(exportJson_);
    fileMenu_->addSeparator();
    fileMenu_->addAction(quit_);
    editMenu_ = menuBar()->addMenu(QString());
    editMenu_->addAction(undoDelete_);
    editMenu_->addSeparator();
    editMenu_->addAction(find_);
    editMenu_->addAction(rename_);
    chatMenu_ = menuBar()->addMenu(QString());
    chatMenu_->addAction(send_);
    chatMenu_->addAction(stop_);
    chatMenu_->addAction(regenerate_);
    chatMenu_->addSeparator();
    chatMenu_->addAction(conversationSettings_);
    modelMenu_ = menuBar()->addMenu(QString());
    modelMenu_->addAction(openModel_);
    modelMenu_->addAction(openFolder_);
    modelMenu_->addSeparator();
    modelMenu_->addAction(quantize_);
    viewMenu_ = menuBar()->addMenu(QString());
    viewMenu_->setObjectName(QStringLiteral("viewMenu"));
    for (QDockWidget* d : {conversationsDock_, modelDock_, engineDock_, tuningDock_})
        viewMenu_->addAction(d->toggleViewAction());
    viewMenu_->addSeparator();
    themeMenu_ = viewMenu_->addMenu(QString());
    themeMenu_->addAction(themeSystem_);
    themeMenu_->addAction(themeLight_);
    themeMenu_->addAction(themeDark_);
    engineMenu_ = menuBar()->addMenu(QString());
    engineMenu_->addAction(loadTest_);
    settingsMenu_ = menuBar()->addMenu(QString());
    languageMenu_ = settingsMenu_->addMenu(QString());
    languageMenu_->addAction(langSystem_);
    languageMenu_->addAction(langEn_);
    languageMenu_->addAction(langZh_);
    helpMenu_ = menuBar()->addMenu(QString());
    helpMenu_->addAction(firstRun_);
    helpMenu_->addAction(about_);
}

void MainWindow::retranslate() {
    setWindowTitle(tr("LLM Workbench"));
    conversationsDock_->setWindowTitle(tr("Conversations"));
    modelDock_->setWindowTitle(tr("Model"));
    engineDock_->setWindowTitle(tr("Engine"));
    tuningDock_->setWindowTitle(tr("Tuning"));
    fileMenu_->setTitle(tr("&File"));
    editMenu_->setTitle(tr("&Edit"));
    chatMenu_->setTitle(tr("&Chat"));
    viewMenu_->setTitle(tr("&View"));
    themeMenu_->setTitle(tr("&Theme"));
    engineMenu_->setTitle(tr("E&ngine"));
    loadTest_->setText(tr("Run a &load test (%1 concurrent requests)").arg(16));
    loadTest_->setToolTip(tr("Sends synthetic requests through the engine to watch batching; "
                             "their answers are not saved."));
    settingsMenu_->setTitle(tr("&Settings"));
    languageMenu_->setTitle(tr("&Language"));
    helpMenu_->setTitle(tr("&Help"));
    newChat_->setText(tr("&New chat"));
    openModel_->setText(tr("&Open model…"));
    openModel_->setToolTip(tr("Open a GGUF file, or a Hugging Face folder by its config.json"));
    openFolder_->setText(tr("Open Hugging Face &folder…"));
    openFolder_->setToolTip(tr("Open a folder with config.json and safetensors"));
    rename_->setText(tr("&Rename conversation"));
    undoDelete_->setText(tr("&Undo delete message"));
    undoButton_->setText(tr("Undo"));
    undoButton_->setToolTip(tr("Put the deleted message back (Ctrl+Z)"));
    exportMd_->setText(tr("Export conversation as &Markdown…"));
    exportJson_->setText(tr("Export conversation as &JSON…"));
    quit_->setText(tr("&Quit"));
    find_->setText(tr("&Find in conversations"));
    send_->setText(tr("&Send"));
    stop_->setText(tr("S&top generating"));
    regenerate_->setText(tr("&Regenerate last answer"));
    conversationSettings_->setText(tr("Conversation &settings…"));
    themeSystem_->setText(tr("Follow the &system"));
    themeLight_->setText(tr("&Light"));
    themeDark_->setText(tr("&Dark"));
    langSystem_->setText(tr("Follow the &system"));
    langEn_->setText(QStringLiteral("English"));
    langZh_->setText(QStringLiteral("简体中文"));
    about_->setText(tr("&About LLM Workbench"));
    retranslateBenchmark();
    retranslateThink();
    retranslateQuantize();
    retranslateFirstRun();
    updateStatus();
}

void MainWindow::showEvent(QShowEvent* e) {
    QMainWindow::showEvent(e);
    // The window opens ready to type: the message box has the keyboard focus.
    if (!e->spontaneous() && !shownOnce_) {
        shownOnce_ = true;
        chat_->focusInput();
    }
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (watched == tuning_ && event->type() == QEvent::LayoutRequest) {
        const int bar =
            tuningScroll_->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, tuningScroll_);
        tuningScroll_->setMinimumWidth(tuning_->minimumSizeHint().width() + bar);
    }
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    QMainWindow::changeEvent(e);
}

QDockWidget* MainWindow::dock(const QString& objectName) const {
    return findChild<QDockWidget*>(objectName);
}

QAction* MainWindow::action(const QString& objectName) const {
    return findChild<QAction*>(objectName);
}

QString MainWindow::statusModelText() const {
    return statusModel_->text();
}

QString MainWindow::statusStateText() const {
    return statusState_->text();
}

void MainWindow::updateStatus() {
    const QString failedName = QFileInfo(loadingPath_).fileName();
    if (modelLoaded_ && !modelError_.isEmpty()) {
        // A load failed while the previous model stays loaded and answering.
        statusModel_->setText(tr("Model: %1 (loading %2 failed)").arg(modelMeta_.name, failedName));
        statusModel_->setToolTip(
            tr("Could not load %1: %2\n%3 is still loaded and answers.")
                .arg(QDir::toNativeSeparators(loadingPath_), modelError_, modelMeta_.name));
    } else if (modelLoaded_) {
        statusModel_->setText(tr("Model: %1").arg(modelMeta_.name));
        statusModel_->setToolTip(QDir::toNativeSeparators(modelMeta_.path));
    } else if (!modelError_.isEmpty()) {
        statusModel_->setText(failedName.isEmpty()
                                  ? tr("No model: loading failed")
                                  : tr("No model: loading %1 failed").arg(failedName));
        statusModel_->setToolTip(modelError_);
    } else {
        statusModel_->setText(
            hasModel_
                ? tr("Loading %1… (%2 stays until it is ready)").arg(failedName, modelMeta_.name)
                : tr("Loading the model…"));
        statusModel_->setToolTip(QDir::toNativeSeparators(loadingPath_));
    }
    const bool remoteAnswers = applyRemoteStatus();
    statusState_->setText(engineBenchmark_ && engineHeldChats_ > 0
                              ? tr("● benchmark (%n chat(s) wait)", nullptr, engineHeldChats_)
                          : engineBenchmark_            ? tr("● benchmark")
                          : controller_.anyGenerating() ? tr("● generating")
                          : engineLoadTest_             ? tr("● load test")
                          : engineBusy_                 ? tr("● busy")
                                                        : tr("idle"));
    chat_->setNotice(!remoteAnswers && modelLoaded_ && modelMeta_.randomWeights
                         ? tr("The demo model is a bigram model of this project's own sentences, "
                              "not a trained model: its answers are silly. Open a real model "
                              "(File > Open model, or drop a .gguf file here) to chat.")
                         : QString());
    const bool generating =
        chat_->conversationId() != 0 && controller_.isGenerating(chat_->conversationId());
    stop_->setEnabled(generating);
    send_->setEnabled(!generating);
    const bool haveConversation = chat_->conversationId() != 0;
    exportMd_->setEnabled(haveConversation);
    exportJson_->setEnabled(haveConversation);
    conversationSettings_->setEnabled(haveConversation);
}

void MainWindow::newConversation() {
    if (const auto c = controller_.newConversation()) {
        openConversation(c->id);
        chat_->focusInput();
    }
}

bool MainWindow::deleteConversation(qint64 conversationId) {
    const bool shown = chat_->conversationId() == conversationId;
    if (!controller_.deleteConversation(conversationId))
        return false;
    // The list has moved its selection to a neighbour: the chat shows that one (or, with
    // nothing selected, the newest), ready to type.
    if (shown) {
        qint64 next = conversations_->selectedConversation();
        if (next == 0 && conversationModel_->rowCount() > 0)
            next = conversationModel_->idAt(0);
        if (next != 0) {
            openConversation(next);
            chat_->focusInput();
        }
    }
    updateStatus();
    return true;
}

bool MainWindow::undoDelete() {
    if (!deleted_)
        return false;
    const ChatMessage m = *deleted_;
    deleted_.reset();
    undoTimer_->stop();
    undoButton_->hide();
    undoDelete_->setEnabled(false);
    if (!chat_->restoreMessage(m)) {
        showError(tr("Could not restore the message: %1").arg(controller_.store().errorString()));
        return false;
    }
    conversationModel_->refreshConversation(m.conversationId);
    statusBar()->showMessage(tr("Message restored."), 4000);
    return true;
}

bool MainWindow::renameConversation(qint64 conversationId, const QString& title) {
    auto c = controller_.store().conversation(conversationId);
    const QString t = title.simplified();
    if (!c || t.isEmpty() || t == c->title)
        return false;
    c->title = t;
    return controller_.updateConversation(*c);
}

void MainWindow::openConversation(qint64 conversationId) {
    chat_->setConversation(conversationId);
    conversations_->selectConversation(conversationId);
    updateStatus();
}

void MainWindow::onModelLoading(const QString& path) {
    modelLoaded_ = false;
    modelError_.clear();
    loadingPath_ = path;
    model_->setLoading(path);
    updateStatus();
}

void MainWindow::onModelLoaded(const ModelMetadata& m) {
    modelMeta_ = m;
    modelLoaded_ = true;
    hasModel_ = true;
    engine_->setModel(m);
    modelError_.clear();
    model_->setModel(m);
    if (thinkPage_)
        thinkPage_->setModel(true, m.hasThinkTokens);
    if (!m.randomWeights) {
        settings_.addRecentModel(m.path);
        model_->setRecentModels(settings_.recentModels());
    }
    updateStatus();
}

void MainWindow::onModelLoadFailed(const QString& message) {
    modelError_ = message;
    modelLoaded_ = hasModel_; // the previous model (if any) is still loaded and answering
    model_->setLoadFailed(message);
    updateStatus();
    showError(tr("Could not load the model: %1").arg(message));
}

void MainWindow::showError(const QString& message) {
    statusBar()->showMessage(message, 10000);
}

bool MainWindow::exportConversation(qint64 conversationId, const QString& path,
                                    const QString& format) {
    const QByteArray bytes = format == QLatin1String("json")
                                 ? controller_.store().exportJson(conversationId)
                                 : controller_.store().exportMarkdown(conversationId).toUtf8();
    QSaveFile f(path);
    if (bytes.isEmpty() || !f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() ||
        !f.commit()) {
        showError(tr("Could not export to %1: %2").arg(path, f.errorString()));
        return false;
    }
    statusBar()->showMessage(tr("Exported to %1").arg(path), 5000);
    return true;
}

QString MainWindow::exportFileName(const QString& title, const QString& format) {
    QString base = title;
    base.replace(QRegularExpression(QStringLiteral("[\\\\/:*?\"<>|\\x00-\\x1f]")),
                 QStringLiteral("_"));
    // "What is 2+2?" or "Explain this." must not give "Explain this..md": the dots and spaces
    // at the ends go (a name of only dots would also be hidden or special).
    static const QRegularExpression ends(QStringLiteral("^[\\s.]+|[\\s.]+$"));
    base.remove(ends);
    if (base.size() > 120)
        base = base.left(120).trimmed();
    if (base.isEmpty())
        base = tr("conversation");
    return base +
           (format == QLatin1String("json") ? QStringLiteral(".json") : QStringLiteral(".md"));
}

void MainWindow::exportCurrent(const QString& format) {
    const qint64 id = chat_->conversationId();
    if (id == 0)
        return;
    const auto c = controller_.store().conversation(id);
    const bool json = format == QLatin1String("json");
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export conversation"), exportFileName(c ? c->title : QString(), format),
        json ? tr("JSON (*.json)") : tr("Markdown (*.md)"));
    if (!path.isEmpty())
        exportConversation(id, path, format);
}

void MainWindow::restoreLayout() {
    const QByteArray geometry = settings_.windowGeometry();
    if (geometry.isEmpty() || !restoreGeometry(geometry))
        resize(1280, 800);
    // A layout saved by an older version (Engine and Tuning tabbed) gives way to the new
    // default: restoreState refuses a state of another version.
    const QByteArray state = settings_.windowState();
    if (!state.isEmpty())
        restoreState(state, kLayoutVersion);
}

void MainWindow::saveLayout() {
    settings_.setWindowLayout(saveGeometry(), saveState(kLayoutVersion));
    settings_.sync();
}

void MainWindow::closeEvent(QCloseEvent* e) {
    // Answers that could not be saved (a full disk) exist only in memory: quitting loses them,
    // so ask (after one more try).
    while (controller_.unsavedCount() > 0 && !controller_.retrySaving()) {
        QMessageBox box(QMessageBox::Warning, windowTitle(),
                        tr("%n answer(s) could not be saved in the chat database: %1\n\nIf you "
                           "quit now, their text is lost. Make room (or copy the text) and choose "
                           "Retry saving.",
                           nullptr, controller_.unsavedCount())
                            .arg(controller_.saveError()));
        QPushButton* retry = box.addButton(tr("Retry saving"), QMessageBox::AcceptRole);
        QPushButton* quit = box.addButton(tr("Quit and lose them"), QMessageBox::DestructiveRole);
        box.addButton(QMessageBox::Cancel);
        box.setDefaultButton(retry);
        box.exec();
        if (box.clickedButton() == quit)
            break;
        if (box.clickedButton() != retry) {
            e->ignore();
            return;
        }
    }
    if (!mayQuitWhileQuantizing()) {
        e->ignore();
        return;
    }
    saveLayout();
    QMainWindow::closeEvent(e);
}

QString MainWindow::droppedModelPath(const QMimeData* mime) const {
    return ModelPanel::modelPathFromMime(mime);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    if (!droppedModelPath(e->mimeData()).isEmpty())
        e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
    const QString path = droppedModelPath(e->mimeData());
    if (path.isEmpty())
        return;
    e->acceptProposedAction();
    emit openModelRequested(path);
}

} // namespace llmwb

namespace llmwb {

void MainWindow::onEngineView(const llmwb::EngineView& view) {
    engine_->setView(view);
    tuning_->setView(view);
    // Requests that are not the chat's (a load test) keep the engine busy: not "idle".
    const bool busy = view.snapshot.num_running + view.snapshot.num_waiting > 0;
    const bool loadTest = busy && !view.loadTestRequests.isEmpty();
    if (busy != engineBusy_ || loadTest != engineLoadTest_ ||
        view.benchmarking != engineBenchmark_ || view.heldChats != engineHeldChats_) {
        engineBusy_ = busy;
        engineLoadTest_ = loadTest;
        engineBenchmark_ = view.benchmarking;
        engineHeldChats_ = view.heldChats;
        updateStatus();
    }
    if (benchPage_)
        benchPage_->onEngineView(view);
}

void MainWindow::onLoadProgress(int percent, const QString& stage) {
    model_->setLoadProgress(percent, stage);
}

// The load was cancelled between two stages: the previous model (if any) is still loaded.
void MainWindow::onDeviceAvailability(bool cudaAvailable, const QString& reason) {
    model_->setCudaAvailability(cudaAvailable, reason);
}

void MainWindow::onLoadCancelled(const QString& path) {
    if (hasModel_) {
        modelLoaded_ = true;
        model_->setModel(modelMeta_);
    } else {
        modelError_ = tr("Loading was cancelled.");
        model_->setLoadFailed(modelError_);
    }
    updateStatus();
    statusBar()->showMessage(tr("Cancelled loading %1").arg(path), 5000);
}

} // namespace llmwb
