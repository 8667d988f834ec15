// The main window's Help > Find models… (the first-run panel) and Help > About (with this
// machine's facts).
#include <QAction>
#include <QApplication>
#include <QMessageBox>

#include "ui/first_run_dialog.h"
#include "ui/main_window.h"

namespace llmwb {

void MainWindow::createFirstRunAction() {
    firstRun_ = new QAction(this);
    firstRun_->setObjectName(QStringLiteral("firstRunAction"));
    addAction(firstRun_);
    connect(firstRun_, &QAction::triggered, this, &MainWindow::showFirstRun);
}

void MainWindow::retranslateFirstRun() {
    firstRun_->setText(tr("&Find models and check what fits…"));
    firstRun_->setToolTip(tr("This machine, the models it already has (LM Studio, GPT4All, "
                             "Ollama, Hugging Face) and whether they fit its memory"));
}

void MainWindow::showFirstRun() {
    delete firstRunDialog_;
    QStringList folders = settings_.modelFolders();
    firstRunDialog_ = new FirstRunDialog(probe_machine_with_cuda(),
                                         discovery_roots_from_environment({}), folders, this);
    connect(firstRunDialog_, &FirstRunDialog::openModelRequested, this,
            &MainWindow::openModelRequested);
    connect(firstRunDialog_, &FirstRunDialog::foldersChanged, this,
            [this](const QStringList& f) { settings_.setModelFolders(f); });
    settings_.setFirstRunDone(true);
    firstRunDialog_->show();
    firstRunDialog_->raise();
    firstRunDialog_->activateWindow();
}

void MainWindow::showAbout() {
    QMessageBox::about(this, tr("About LLM Workbench"),
                       tr("<b>LLM Workbench</b> %1<br>Chat with local language models and "
                          "watch the inference engine work.")
                               .arg(QApplication::applicationVersion()) +
                           QStringLiteral("<br><br>") +
                           FirstRunDialog::machineHtml(probe_machine_with_cuda()));
}

} // namespace llmwb
