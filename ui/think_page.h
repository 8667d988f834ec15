// The "Think harder" page (issue 20): a task set (the project's generated arithmetic or logic
// questions, or the user's JSONL file of question/answer pairs) and a ladder of budgets (n
// samples with a self-consistency vote, thinking budgets on models with <think>, beam widths),
// run on the loaded model by the engine worker. It plots accuracy against tokens spent per
// question (or wall time, or cost at the user's price per hour), and shows per question the
// samples, their answers, the vote, the expected answer and where the samples disagreed. Runs
// are stored with the benchmark runs and exported in the same report zip.
#pragma once

#include <QWidget>

#include <nlohmann/json.hpp>

#include "app/services/think_types.h"

class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTabWidget;

namespace llmwb {

class ThinkController;

class ThinkPage : public QWidget {
    Q_OBJECT

  public:
    explicit ThinkPage(ThinkController& controller, QWidget* parent = nullptr);

    // The loaded model: thinking budgets are offered only on a model with <think> tokens.
    void setModel(bool loaded, bool hasThinkTokens);
    // The plan the form describes.
    ThinkPlan plan() const;
    // Starts the form's plan ("" or why not; the reason is shown too).
    QString run();
    void cancel();
    // Shows a run (its curve and its questions).
    void showRun(const nlohmann::ordered_json& run);
    // The checked runs (or the selected one) as a report zip ("" or the error).
    QString exportRuns(const QString& path);
    QList<qint64> runsToExport() const;
    void refreshRuns();

    // For tests and the main window.
    QChart* chart() const { return chart_; }
    QTableWidget* questionTable() const { return questions_; }
    QProgressBar* progressBar() const { return progress_; }
    QListWidget* runsList() const { return runs_; }
    QComboBox* xAxisBox() const { return xAxis_; }
    QComboBox* rungBox() const { return rungBox_; }
    QPlainTextEdit* samplesView() const { return samples_; }
    QComboBox* taskSetBox() const { return taskSet_; }
    QLineEdit* taskFileEdit() const { return taskFile_; }
    QSpinBox* countBox() const { return count_; }
    QSpinBox* maxTokensBox() const { return maxTokens_; }
    QCheckBox* thinkingCheck() const { return thinkOn_; }
    QCheckBox* beamCheck() const { return beamOn_; }
    QLineEdit* beamEdit() const { return beams_; }
    QList<QCheckBox*> sampleChecks() const { return sampleChecks_; }
    QLabel* statusLabel() const { return status_; }

  signals:
    void exportRequested();

  protected:
    void changeEvent(QEvent* e) override;

  private:
    QWidget* buildForm();
    void retranslate();
    void updateWidgets();
    void onProgress(const ThinkProgress& p);
    void onFinished(const nlohmann::ordered_json& run, qint64 storedId);
    void plot(const nlohmann::ordered_json& rungs, double pricePerHour);
    void showQuestions();
    void showSamples();
    void setRunning(bool running);

    ThinkController& controller_;
    nlohmann::ordered_json shown_ = nlohmann::ordered_json::object(); // the run on display
    bool modelLoaded_ = false, hasThink_ = false, running_ = false;

    QGroupBox *tasksBox_ = nullptr, *ladderBox_ = nullptr, *samplingBox_ = nullptr;
    QLabel *taskSetLabel_ = nullptr, *levelLabel_ = nullptr, *countLabel_ = nullptr,
           *seedLabel_ = nullptr, *fileLabel_ = nullptr, *samplesLabel_ = nullptr,
           *maxTokensLabel_ = nullptr, *temperatureLabel_ = nullptr, *sampleSeedLabel_ = nullptr,
           *priceLabel_ = nullptr, *thinkReason_ = nullptr, *xAxisLabel_ = nullptr,
           *rungLabel_ = nullptr, *status_ = nullptr;
    QComboBox *taskSet_ = nullptr, *xAxis_ = nullptr, *rungBox_ = nullptr;
    QSpinBox *level_ = nullptr, *count_ = nullptr, *taskSeed_ = nullptr, *maxTokens_ = nullptr,
             *sampleSeed_ = nullptr;
    QDoubleSpinBox *temperature_ = nullptr, *price_ = nullptr;
    QLineEdit *taskFile_ = nullptr, *budgets_ = nullptr, *beams_ = nullptr;
    QPushButton *browse_ = nullptr, *start_ = nullptr, *cancel_ = nullptr, *export_ = nullptr,
                *delete_ = nullptr;
    QList<QCheckBox*> sampleChecks_;
    QCheckBox *thinkOn_ = nullptr, *beamOn_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QChart* chart_ = nullptr;
    QChartView* chartView_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QTableWidget* questions_ = nullptr;
    QPlainTextEdit* samples_ = nullptr;
    QListWidget* runs_ = nullptr;
};

} // namespace llmwb
