// The main window's Think harder parts: the page as a tab after the Chat (and the Benchmark),
// Engine > Think harder, and its report export.
#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>

#include "app/services/think_controller.h"
#include "ui/main_window.h"
#include "ui/think_page.h"

namespace llmwb {

void MainWindow::attachThink(ThinkController& think) {
    if (thinkPage_)
        return;
    thinkPage_ = new ThinkPage(think, this);
    thinkPage_->setObjectName(QStringLiteral("thinkPage"));
    if (!centralTabs_) {
        QWidget* chat = takeCentralWidget();
        centralTabs_ = new QTabWidget(this);
        centralTabs_->setObjectName(QStringLiteral("centralTabs"));
        centralTabs_->setDocumentMode(true);
        centralTabs_->addTab(chat, QString());
        setCentralWidget(centralTabs_);
    }
    centralTabs_->addTab(thinkPage_, QString());
    thinkPage_->setModel(modelLoaded_, modelLoaded_ && modelMeta_.hasThinkTokens);
    thinkAction_ = new QAction(this);
    thinkAction_->setObjectName(QStringLiteral("thinkAction"));
    addAction(thinkAction_);
    connect(thinkAction_, &QAction::triggered, this, &MainWindow::showThink);
    connect(thinkPage_, &ThinkPage::exportRequested, this, &MainWindow::exportThinkReport);
    engineMenu_->addAction(thinkAction_);
    retranslateThink();
}

void MainWindow::showThink() {
    if (centralTabs_ && thinkPage_)
        centralTabs_->setCurrentWidget(thinkPage_);
}

void MainWindow::retranslateThink() {
    if (!thinkPage_)
        return;
    centralTabs_->setTabText(0, tr("Chat"));
    centralTabs_->setTabText(centralTabs_->indexOf(thinkPage_), tr("Think harder"));
    thinkAction_->setText(tr("&Think harder…"));
}

void MainWindow::exportThinkReport() {
    if (!thinkPage_)
        return;
    if (thinkPage_->runsToExport().isEmpty()) {
        QMessageBox::information(this, tr("Export Think harder report"),
                                 tr("Check the runs to export in the Runs tab."));
        return;
    }
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export Think harder report"), QDir::home().filePath(QStringLiteral("think.zip")),
        tr("Reports (*.zip)"));
    if (path.isEmpty())
        return;
    if (const QString error = thinkPage_->exportRuns(path); !error.isEmpty()) {
        QMessageBox::warning(this, tr("Export Think harder report"),
                             tr("The report could not be written:\n%1").arg(error));
        return;
    }
    statusBar()->showMessage(tr("Exported to %1").arg(QDir::toNativeSeparators(path)), 8000);
}

} // namespace llmwb
