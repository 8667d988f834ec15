// The main window's Benchmark parts: the page as a tab beside the Chat, the report menu items,
// and the load test as the page's preset.
#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>

#include "app/services/bench_controller.h"
#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "ui/bench_runs_model.h"
#include "ui/benchmark_page.h"
#include "ui/chat_view.h"
#include "ui/main_window.h"

namespace llmwb {

void MainWindow::attachBenchmark(BenchController& bench) {
    if (benchPage_)
        return;
    benchPage_ = new BenchmarkPage(bench, settings_, this);
    benchPage_->setObjectName(QStringLiteral("benchmarkPage"));
    // The Chat and the Benchmark share the centre as two tabs.
    QWidget* chat = takeCentralWidget();
    centralTabs_ = new QTabWidget(this);
    centralTabs_->setObjectName(QStringLiteral("centralTabs"));
    centralTabs_->setDocumentMode(true);
    centralTabs_->addTab(chat, QString());
    centralTabs_->addTab(benchPage_, QString());
    setCentralWidget(centralTabs_);

    auto make = [this](const char* name) {
        auto* a = new QAction(this);
        a->setObjectName(QLatin1String(name));
        addAction(a);
        return a;
    };
    benchmarkAction_ = make("benchmarkAction");
    benchmarkAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    importReport_ = make("importReportAction");
    exportReport_ = make("exportReportAction");
    connect(benchmarkAction_, &QAction::triggered, this, &MainWindow::showBenchmark);
    connect(importReport_, &QAction::triggered, this, &MainWindow::importBenchmarkReport);
    connect(exportReport_, &QAction::triggered, this, &MainWindow::exportBenchmarkReport);
    connect(benchPage_, &BenchmarkPage::importRequested, this, &MainWindow::importBenchmarkReport);
    connect(benchPage_, &BenchmarkPage::exportRequested, this, &MainWindow::exportBenchmarkReport);
    // The load test is now a benchmark preset: it shows progress, its figures, and is stored.
    disconnect(loadTest_, &QAction::triggered, nullptr, nullptr);
    connect(loadTest_, &QAction::triggered, this, [this] {
        showBenchmark();
        benchPage_->applyPreset(BenchmarkPage::LoadTest);
        benchPage_->run();
    });
    // The "My conversations" source: the user's messages, read when the page is shown.
    connect(centralTabs_, &QTabWidget::currentChanged, this, [this](int index) {
        if (centralTabs_->widget(index) != benchPage_)
            return;
        QStringList prompts;
        for (const Conversation& c : controller_.store().conversations())
            for (const ChatMessage& m : controller_.store().messages(c.id))
                if (m.role == QLatin1String("user") && !m.content.trimmed().isEmpty())
                    prompts << m.content;
        benchPage_->setConversationPrompts(prompts);
    });
    fileMenu_->insertActions(quit_, {importReport_, exportReport_});
    fileMenu_->insertSeparator(quit_);
    engineMenu_->insertAction(loadTest_, benchmarkAction_);
    retranslateBenchmark();
}

void MainWindow::showBenchmark() {
    if (!centralTabs_)
        return;
    centralTabs_->setCurrentWidget(benchPage_);
}

void MainWindow::retranslateBenchmark() {
    if (!benchPage_)
        return;
    centralTabs_->setTabText(0, tr("Chat"));
    centralTabs_->setTabText(1, tr("Benchmark"));
    benchmarkAction_->setText(tr("&Benchmark…"));
    importReport_->setText(tr("&Import benchmark report…"));
    exportReport_->setText(tr("E&xport benchmark report…"));
    loadTest_->setText(tr("Run a &load test (%1 requests at once)").arg(16));
    loadTest_->setToolTip(tr("A benchmark preset: 16 synthetic requests at once, with progress, "
                             "figures, and the run kept in the Benchmark page."));
}

void MainWindow::exportBenchmarkReport() {
    if (!benchPage_)
        return;
    QList<qint64> ids = benchPage_->runsModel()->checkedIds();
    if (ids.isEmpty()) { // the selected run
        const QModelIndex cur = benchPage_->runsView()->currentIndex();
        if (cur.isValid())
            ids << benchPage_->runsModel()->entry(cur.row()).id;
    }
    if (ids.isEmpty()) {
        showBenchmark();
        QMessageBox::information(this, tr("Export benchmark report"),
                                 tr("Check the runs to export in the Benchmark page's Runs tab."));
        return;
    }
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export benchmark report"), QDir::home().filePath(QStringLiteral("benchmark.zip")),
        tr("Benchmark reports (*.zip)"));
    if (path.isEmpty())
        return;
    const QString error = benchPage_->exportRuns(ids, path);
    if (!error.isEmpty()) {
        QMessageBox::warning(this, tr("Export benchmark report"),
                             tr("The report could not be written:\n%1").arg(error));
        return;
    }
    statusBar()->showMessage(tr("Exported %n run(s) to %1", nullptr, int(ids.size()))
                                 .arg(QDir::toNativeSeparators(path)),
                             8000);
}

void MainWindow::importBenchmarkReport() {
    if (!benchPage_)
        return;
    const QString path = QFileDialog::getOpenFileName(this, tr("Import benchmark report"), {},
                                                      tr("Benchmark reports (*.zip)"));
    if (path.isEmpty())
        return;
    showBenchmark();
    const QString error = benchPage_->importReport(path);
    if (!error.isEmpty()) {
        QMessageBox::warning(this, tr("Import benchmark report"),
                             tr("The report could not be imported:\n%1").arg(error));
        return;
    }
    statusBar()->showMessage(tr("Imported %1").arg(QFileInfo(path).fileName()), 8000);
}

} // namespace llmwb
