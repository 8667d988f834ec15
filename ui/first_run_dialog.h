// The first-run panel: this machine (CPU, cores, SIMD, RAM, GPUs), the models it already has
// (app/discovery/model_discovery.h: LM Studio, GPT4All, Ollama, the Hugging Face cache and the
// user's folders, read by their headers only) and whether each fits at a chosen context and
// number of sequences (fit_calculator.h), coloured with the reason. "Add folder…" adds a folder
// to the search (kept in the settings); a double-click loads the model (openModelRequested).
// Shown on the first start of a fresh profile (app/gui/main.cpp) and from Help.
#pragma once

#include <QDialog>
#include <QStringList>

#include <vector>

#include "app/discovery/model_discovery.h"
#include "app/report/machine_probe.h"

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace llmwb {

class FirstRunDialog : public QDialog {
    Q_OBJECT

  public:
    // The fit comes right after the name: it is what the panel is for.
    enum Column { ColName, ColFit, ColSource, ColArch, ColSize, ColTypes, ColContext, ColCount };

    // `roots` without the user folders; `folders` are the user's (from the settings).
    FirstRunDialog(const MachineFacts& machine, const DiscoveryRoots& roots,
                   const QStringList& folders, QWidget* parent = nullptr);

    // The machine's facts as rich text (also Help -> About).
    static QString machineHtml(const MachineFacts& machine);

    QTableWidget* table() const { return table_; }
    QSpinBox* contextBox() const { return context_; }
    QSpinBox* seqsBox() const { return seqs_; }
    const std::vector<DiscoveredModel>& models() const { return models_; }
    QStringList folders() const { return folders_; }

  public slots:
    void rescan();
    void addFolder(const QString& dir); // adds and rescans; emits foldersChanged
    void updateFit();                   // the Fits column for the chosen context and sequences

  signals:
    void openModelRequested(const QString& path);
    void foldersChanged(const QStringList& folders);

  protected:
    void changeEvent(QEvent* e) override;

  private:
    void retranslate();
    void fillRows();

    MachineFacts machine_;
    DiscoveryRoots roots_;
    QStringList folders_;
    std::vector<DiscoveredModel> models_;
    QLabel *machineLabel_, *modelsLabel_, *contextLabel_, *seqsLabel_, *deviceLabel_;
    QTableWidget* table_;
    QSpinBox *context_, *seqs_;
    QPushButton *addFolder_, *rescan_, *close_;
};

} // namespace llmwb
