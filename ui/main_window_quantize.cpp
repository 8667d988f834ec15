// The main window's Model > Quantize... entry: the action, the dialog (made on first use) and
// "Load the new model", which opens the written file as File > Open model does.
#include <QAction>
#include <QMenu>
#include <QMessageBox>

#include "ui/main_window.h"
#include "ui/quantize_dialog.h"

namespace llmwb {

void MainWindow::createQuantizeAction() {
    quantize_ = new QAction(this);
    quantize_->setObjectName(QStringLiteral("quantizeModelAction"));
    addAction(quantize_);
    connect(quantize_, &QAction::triggered, this, &MainWindow::showQuantizeDialog);
}

void MainWindow::retranslateQuantize() {
    modelMenu_->setTitle(tr("&Model"));
    quantize_->setText(tr("&Quantize…"));
    quantize_->setToolTip(tr("Write a quantized GGUF (Q8_0, Q4_K_M, …) of a float model"));
}

void MainWindow::showQuantizeDialog() {
    if (!quantizeDialog_) {
        quantizeDialog_ = new QuantizeDialog(nullptr, this);
        connect(quantizeDialog_, &QuantizeDialog::loadModelRequested, this,
                &MainWindow::openModelRequested);
    }
    // The loaded model is the default input until the user picks another one.
    if (!quantizeDialog_->isRunning() && !quantizeDialog_->inputChosenByUser() && hasModel_)
        quantizeDialog_->setInput(modelMeta_.path);
    quantizeDialog_->show();
    quantizeDialog_->raise();
    quantizeDialog_->activateWindow();
}

bool MainWindow::mayQuitWhileQuantizing() {
    if (!quantizeDialog_ || !quantizeDialog_->isRunning())
        return true;
    return QMessageBox::question(this, windowTitle(),
                                 tr("A model is being quantized. Quit and stop it? (No "
                                    "half-written file is left behind.)")) == QMessageBox::Yes;
}

} // namespace llmwb
