// The Benchmark page (a tab beside the Chat). Four tabs over a run bar (Run, Cancel, progress,
// the current run and the time left): Setup — a workload (synthetic prompts as vLLM's random
// dataset, a JSONL file, or the user's own messages), the policies to compare, an optional sweep
// over one engine setting, percentiles and a price per hour; Run / Cancel with a progress bar,
// the current run and the time left; live charts while it runs (the Engine dock's charts, fed by
// the same views); the stored runs (Runs tab: check runs to compare, export or delete; Import a
// report), the selected run's figures, and a side-by-side comparison (Compare tab). Each tab
// gets the page's whole width (at 1280x800 with the docks open it is about 680 px).
#pragma once

#include <QList>
#include <QWidget>

#include "app/services/bench_types.h"
#include "app/services/engine_view.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;
class QTabWidget;

namespace llmwb {

class AppSettings;
class BenchCompareView;
class BenchController;
class BenchRunsModel;
class ChartsPanel;

class BenchmarkPage : public QWidget {
    Q_OBJECT

  public:
    enum Preset { Custom, LoadTest, PolicyComparison, MaxNumSeqsSweep };
    enum Tab { SetupTab, LiveTab, RunsTab, CompareTab };

    BenchmarkPage(BenchController& controller, AppSettings& settings, QWidget* parent = nullptr);

    // The plan the form describes (not validated).
    BenchPlan plan() const;
    void applyPreset(Preset preset);
    // Starts the form's plan; "" or why not (also shown on the page).
    QString run();
    void cancel();
    // The user's own messages, for the "My conversations" source (set by the main window).
    void setConversationPrompts(const QStringList& prompts);
    // Compares these stored runs (the Compare tab).
    void compare(const QList<qint64>& ids);
    // Writes the checked runs (or `ids`) as a report zip; "" or the error.
    QString exportRuns(const QList<qint64>& ids, const QString& path);
    QString importReport(const QString& path); // "" or the error

    QTabWidget* tabs() const { return tabs_; }
    BenchRunsModel* runsModel() const { return runsModel_; }
    QTableView* runsView() const { return runsView_; }
    BenchCompareView* compareView() const { return compareView_; }
    ChartsPanel* liveCharts() const { return live_; }
    QProgressBar* progressBar() const { return progress_; }
    QLabel* statusLabel() const { return status_; }
    QPushButton* runButton() const { return runButton_; }
    QPushButton* cancelButton() const { return cancelButton_; }
    QPlainTextEdit* summary() const { return summary_; }

  public slots:
    void onEngineView(const llmwb::EngineView& view);
    void refreshRuns();

  signals:
    // Export / Import asked from the page's buttons (the main window shows the file dialogs).
    void exportRequested();
    void importRequested();

  protected:
    void changeEvent(QEvent* e) override;

  private:
    void buildForm(QWidget* form);
    void retranslate();
    void onProgress(const BenchProgress& p);
    void onRunStored(qint64 id);
    void onFinished(const QString& message);
    void showSummary(qint64 id);
    void updateSourceWidgets();
    void setRunning(bool running);
    void savePrice();

    BenchController& controller_;
    AppSettings& settings_;
    QStringList conversationPrompts_;
    bool running_ = false;

    QComboBox* preset_;
    QLineEdit* name_;
    QGroupBox *workloadBox_, *policyBox_, *sweepBox_, *costBox_;
    QComboBox* source_;
    QLineEdit* datasetPath_;
    QPushButton* browse_;
    QSpinBox *numPrompts_, *inputLen_, *outputLen_, *prefixLen_, *maxConcurrency_, *seed_;
    QDoubleSpinBox *rangeRatio_, *requestRate_, *burstiness_;
    QCheckBox *continuous_, *static_, *sequential_;
    QComboBox* sweepSetting_;
    QLineEdit* sweepValues_;
    QLineEdit* percentiles_;
    QDoubleSpinBox* price_;
    QLineEdit* currency_;
    QPushButton *runButton_, *cancelButton_;
    QProgressBar* progress_;
    QLabel* status_;
    QLabel* hint_;
    QList<QLabel*> labels_; // the form's row labels, by row (retranslate)

    QTabWidget* tabs_;
    ChartsPanel* live_;
    BenchRunsModel* runsModel_;
    QTableView* runsView_;
    QPlainTextEdit* summary_;
    QPushButton *compareButton_, *exportButton_, *importButton_, *deleteButton_;
    BenchCompareView* compareView_;
};

} // namespace llmwb
