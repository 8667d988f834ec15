// Model > Quantize...: choose a float model (the loaded model's file or folder by default), a
// target (a single type or a preset mix, from quantize_targets()), the output file (suggested
// next to the input: foo-F16.gguf -> foo-Q4_K_M.gguf), and optionally an importance matrix or a
// calibration text. Start runs the QuantizeController (a worker thread); the dialog shows
// tensors done / total and MB/s, Cancel, then the report (types, bits per weight, fallbacks,
// seconds) or the whole error, and offers to load the new model. Not modal: the chat goes on
// while a model is quantized. Closing it while a run is going asks whether to stop the run.
#pragma once

#include <QDialog>

#include <functional>

#include "app/services/quantize_controller.h"

class QCloseEvent;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace llmwb {

class QuantizeDialog : public QDialog {
    Q_OBJECT

  public:
    // controller: the one to drive (not owned; tests pass one with a fake runner); nullptr: the
    // dialog makes its own, which runs quantize_model.
    explicit QuantizeDialog(QuantizeController* controller = nullptr, QWidget* parent = nullptr);

    QuantizeController* controller() const { return controller_; }
    bool isRunning() const { return controller_->isRunning(); }

    // The model to quantize; the output follows (unless the user typed one).
    void setInput(const QString& path);
    QString input() const;
    bool inputChosenByUser() const { return inputEdited_; }
    void setOutput(const QString& path); // counts as the user's choice
    QString output() const;
    void setTarget(const QString& name); // a name of quantize_targets()
    QString target() const;
    void setImatrix(const QString& path);
    void setCalibration(const QString& path);
    QString statusText() const;
    QString reportText() const;

    // The output a target suggests for an input: next to it, the input's name (a folder's name,
    // a file's without .gguf and without a trailing -F16/-F32/-BF16) + "-" + target + ".gguf".
    static QString suggestedOutput(const QString& input, const QString& target);
    // A target's description in the UI language.
    static QString targetDescription(const QuantTarget& target);

    // Asks a yes/no question (replace the output? stop the run?); a QMessageBox by default.
    void setQuestionHandler(std::function<bool(const QString& question)> ask) {
        ask_ = std::move(ask);
    }

  public slots:
    void start();
    void cancel();

  signals:
    // "Load the new model": the path of the file just written.
    void loadModelRequested(const QString& path);

  protected:
    void closeEvent(QCloseEvent* e) override;
    void reject() override; // Escape, Close: as closing the window
    void changeEvent(QEvent* e) override;

  private:
    void retranslate();
    void updateOutputSuggestion();
    void updateDescription();
    void setRunning(bool running);
    void onProgress(const QuantizeProgress& p);
    void onFinished(const QuantizeReport& r);
    void onFailed(const QString& message);
    void onCancelled();
    void showStatus(const QString& text, bool error = false);
    void ended(); // after finished / failed / cancelled
    bool ask(const QString& question);
    // True when nothing runs; otherwise asks whether to stop (then closes when it has stopped).
    bool mayClose();
    QString browseFile(const QString& title, const QString& filter, bool save);

    QuantizeController* controller_;
    std::function<bool(const QString&)> ask_;
    bool outputEdited_ = false;
    bool inputEdited_ = false;
    bool closeWhenStopped_ = false;
    QString written_; // the output of the last successful run
    QuantizeReport lastReport_;
    bool hasReport_ = false;

    QFormLayout* form_;
    QList<QLabel*> formLabels_;
    QLineEdit *input_, *output_, *imatrix_, *calibration_;
    QPushButton *inputFile_, *inputFolder_, *outputBrowse_, *imatrixBrowse_, *calibrationBrowse_;
    QComboBox* target_;
    QLabel* description_;
    QLabel* importanceNote_;
    QProgressBar* progress_;
    QLabel* status_;
    QPlainTextEdit* report_;
    QPushButton *start_, *cancel_, *load_, *close_;
    bool statusIsError_ = false;
    QString statusText_;
    // Re-rendered on a language change: the last progress and outcome.
    QuantizeProgress lastProgress_;
    double quantizeStartSeconds_ = 0; // QuantizeProgress::seconds when quantizing began
    enum class Outcome { None, Running, Finished, Failed, Cancelled } outcome_ = Outcome::None;
    QString failure_;
    void renderStatus();
    void renderReport();
};

} // namespace llmwb
