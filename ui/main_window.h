// The main window: Chat in the centre; Conversations, Model, Engine and Tuning as docks whose
// layout is saved and restored; menus with the keyboard shortcuts; theme and language menus;
// model files dropped on the window are opened. Owns the item models of the docks.
#pragma once

#include <QMainWindow>

#include <optional>

#include "app/services/app_settings.h"
#include "app/services/chat_types.h"
#include "app/services/engine_view.h"
#include "app/services/generation_types.h"

class QActionGroup;
class QDockWidget;
class QLabel;
class QMenu;
class QMimeData;
class QPushButton;
class QScrollArea;
class QTabWidget;
class QTimer;

namespace llmwb {

class BenchController;
class ThinkController;
class ThinkPage;
class ChatBackendBox;
class RemoteBackend;
class BenchmarkPage;
class ChatController;
class ChatView;
class ElidingLabel;
class ConversationListModel;
class ConversationsPanel;
class EnginePanel;
class ModelPanel;
class FirstRunDialog;
class QuantizeDialog;
class SearchResultsModel;
class TuningPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT

  public:
    static constexpr int kUndoSeconds = 10;

    MainWindow(ChatController& controller, AppSettings& settings, QWidget* parent = nullptr);
    ~MainWindow() override;

    ChatView* chatView() const { return chat_; }
    ConversationsPanel* conversationsPanel() const { return conversations_; }
    ModelPanel* modelPanel() const { return model_; }
    EnginePanel* enginePanel() const { return engine_; }
    TuningPanel* tuningPanel() const { return tuning_; }
    ConversationListModel* conversationModel() const { return conversationModel_; }
    QDockWidget* dock(const QString& objectName) const;
    QAction* action(const QString& objectName) const;
    // The Benchmark page as a tab beside the Chat, File > Import/Export benchmark report, and
    // Engine > Benchmark; the load test becomes the page's preset (main_window_bench.cpp).
    void attachBenchmark(BenchController& bench);
    BenchmarkPage* benchmarkPage() const { return benchPage_; }
    // The Think harder page as a tab after the Benchmark, Engine > Think harder
    // (main_window_think.cpp).
    void attachThink(ThinkController& think);
    ThinkPage* thinkPage() const { return thinkPage_; }
    void showThink();
    // Remote OpenAI-compatible endpoints (main_window_remote.cpp): the chat backend box at the
    // top of the Model dock, Model > Remote endpoints…, the Engine dock fed from the chosen
    // endpoint's /metrics, the status bar naming the endpoint that answers.
    void attachRemote(RemoteBackend& remote);
    ChatBackendBox* backendBox() const { return backendBox_; }
    // The endpoints dialog (modal); OK stores the list.
    void showRemoteEndpoints();
    QTabWidget* centralTabs() const { return centralTabs_; }
    void showBenchmark();
    // File dialogs for the page's Export / Import (tests call the page directly).
    void exportBenchmarkReport();
    void importBenchmarkReport();
    // Model > Quantize...: the dialog (made on first use; its input is the loaded model's file
    // until the user picks another), shown without blocking the window (main_window_quantize.cpp).
    void showQuantizeDialog();
    QuantizeDialog* quantizeDialog() const { return quantizeDialog_; }
    // Help > Find models…: the first-run panel (machine, models found, fit), made on each call
    // with the machine probed anew; shown without blocking the window (main_window_first_run.cpp).
    // Marks the first run done in the settings.
    void showFirstRun();
    FirstRunDialog* firstRunDialog() const { return firstRunDialog_; }
    // Help > About: the version and this machine's facts.
    void showAbout();
    QString statusModelText() const; // the model's part of the status bar
    QString statusStateText() const; // "idle", "● generating", "● load test", …

    void restoreLayout(); // geometry + dock state from the settings (or the default layout)
    void saveLayout();
    // Writes the conversation as Markdown ("md") or JSON ("json"); false + message box on error.
    bool exportConversation(qint64 conversationId, const QString& path, const QString& format);
    // The suggested file name of an export: the title without characters file systems refuse
    // and without dots or spaces at its ends ("Why?." -> "Why_.md", never "..md").
    static QString exportFileName(const QString& title, const QString& format);

  public slots:
    void newConversation();
    void openConversation(qint64 conversationId);
    // Deletes without asking; when it was shown, the chat shows the conversation the list
    // selects next.
    bool deleteConversation(qint64 conversationId);
    // A new title (trimmed; empty or unchanged: nothing happens).
    bool renameConversation(qint64 conversationId, const QString& title);
    // Puts the last deleted message back (Edit > Undo, Ctrl+Z, the status bar's Undo) for
    // kUndoSeconds after the deletion.
    bool undoDelete();
    void onModelLoading(const QString& path);
    void onModelLoaded(const llmwb::ModelMetadata& m);
    void onModelLoadFailed(const QString& message);
    void showError(const QString& message);
    void onEngineView(const llmwb::EngineView& view);
    void onLoadProgress(int percent, const QString& stage);
    void onLoadCancelled(const QString& path);
    // From EngineWorker::deviceAvailability: the Model panel's CUDA entry and its reason.
    void onDeviceAvailability(bool cudaAvailable, const QString& reason);

  signals:
    void openModelRequested(const QString& path);
    void themeChosen(llmwb::ThemeChoice theme);
    void languageChosen(const QString& code); // "", "en", "zh_CN"
    void loadTestRequested();
    void tuningChanged(const llmwb::EngineTuning& tuning);
    // The Model panel's device ("auto", "cpu", "cuda"); already saved in the settings.
    void deviceChosen(const QString& preference);
    void weightDtypeChosen(const QString& dtype);
    void loadCancelRequested();

  protected:
    void closeEvent(QCloseEvent* e) override;
    void showEvent(QShowEvent* e) override;
    void changeEvent(QEvent* e) override;
    bool eventFilter(QObject* watched, QEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

  private:
    void createActions();
    void createMenus();
    void createDocks();
    void retranslate();
    void updateStatus();
    void exportCurrent(const QString& format);
    QString droppedModelPath(const QMimeData* mime) const;

    ChatController& controller_;
    AppSettings& settings_;
    ConversationListModel* conversationModel_;
    SearchResultsModel* searchModel_;
    ChatView* chat_;
    ConversationsPanel* conversations_;
    ModelPanel* model_;
    EnginePanel* engine_;
    TuningPanel* tuning_;
    QScrollArea* tuningScroll_;
    QDockWidget *conversationsDock_, *modelDock_, *engineDock_, *tuningDock_;
    QMenu *fileMenu_, *editMenu_, *chatMenu_, *viewMenu_, *engineMenu_, *themeMenu_, *settingsMenu_,
        *languageMenu_, *helpMenu_;
    QAction *newChat_, *openModel_, *openFolder_, *rename_, *undoDelete_, *exportMd_, *exportJson_,
        *quit_, *find_, *send_, *stop_, *regenerate_, *conversationSettings_, *themeSystem_,
        *themeLight_, *themeDark_, *langSystem_, *langEn_, *langZh_, *about_, *loadTest_;
    ElidingLabel* statusModel_;
    QLabel* statusState_;
    ModelMetadata modelMeta_;
    bool modelLoaded_ = false;
    bool hasModel_ = false;  // a model is loaded (possibly while another one loads)
    bool shownOnce_ = false; // the first show puts the focus in the message box
    QString modelError_;
    std::optional<ChatMessage> deleted_; // the last deleted message, while it can be undone
    QTimer* undoTimer_;
    QPushButton* undoButton_;
    QString loadingPath_;          // the model being loaded, or the last one that was
    bool engineBusy_ = false;      // the engine has requests (the chat's or a load test's)
    bool engineLoadTest_ = false;  // ... of a load test
    bool engineBenchmark_ = false; // a benchmark run has the engine
    int engineHeldChats_ = 0;      // chats waiting for it
    BenchmarkPage* benchPage_ = nullptr;
    QTabWidget* centralTabs_ = nullptr;
    QAction *benchmarkAction_ = nullptr, *importReport_ = nullptr, *exportReport_ = nullptr;
    void retranslateBenchmark();
    ThinkPage* thinkPage_ = nullptr;
    QAction* thinkAction_ = nullptr;
    void retranslateThink();
    void exportThinkReport();
    QMenu* modelMenu_ = nullptr;
    QAction* quantize_ = nullptr;
    QuantizeDialog* quantizeDialog_ = nullptr;
    void createQuantizeAction();
    QAction* firstRun_ = nullptr;
    FirstRunDialog* firstRunDialog_ = nullptr;
    void createFirstRunAction();
    void retranslateFirstRun();
    void retranslateQuantize();
    // Quitting while a model is being quantized asks first; true: quit (the run is cancelled
    // when the dialog goes, and leaves no file behind).
    bool mayQuitWhileQuantizing();
    RemoteBackend* remote_ = nullptr;
    ChatBackendBox* backendBox_ = nullptr;
    QAction* remoteEndpoints_ = nullptr;
    void onBackendChanged(const QString& endpointName);
    // The status bar and the chat's notice while a remote endpoint answers (true: it does).
    bool applyRemoteStatus();
};

} // namespace llmwb
