// The Benchmark page with a real BenchController and BenchStore (a SQLite file) and a scripted
// worker that answers each plan with made-up runs: the form's plan, presets, refusals shown on
// the page, progress and ETA, the runs list with the cost column, the summary of a run, the
// comparison (differences in %, the sweep chart), a cancelled run kept, and the main window's
// tab, menu items and load-test preset.
#include <QAction>
#include <QChart>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "app/services/app_settings.h"
#include "app/services/bench_controller.h"
#include "app/services/bench_store.h"
#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "ui/bench_compare_view.h"
#include "ui/bench_runs_model.h"
#include "ui/benchmark_page.h"
#include "ui/main_window.h"

using namespace llmwb;

namespace {

// A run as the worker would report it: throughput tps, mean TTFT ttft.
BenchRun madeRun(const std::string& name, const std::string& policy, double tps, double ttft,
                 const std::string& sweep = {}, double sweepValue = 0) {
    BenchRun r;
    r.name = name;
    r.policy = policy;
    r.date = "20261201-120000";
    r.model_id = "tiny";
    r.sweep_setting = sweep;
    r.sweep_value = sweepValue;
    r.settings["workload"] = {{"num_prompts", 4}};
    r.settings["engine"] = {{"max_num_seqs", 8}};
    BenchResult& f = r.figures;
    f.completed = 4;
    f.duration_s = 2.0;
    f.total_input_tokens = 40;
    f.total_output_tokens = int64_t(tps * 2.0);
    f.request_throughput = 2.0;
    f.output_throughput = tps;
    f.total_token_throughput = tps + 20;
    f.request_rate = std::numeric_limits<double>::infinity();
    f.ttft_ms.mean = f.ttft_ms.median = ttft;
    f.ttft_ms.percentiles = {{99, ttft * 2}};
    f.tpot_ms.mean = f.tpot_ms.median = 10;
    f.tpot_ms.percentiles = {{99, 12}};
    f.itl_ms.percentiles = {{99, 12}};
    f.e2el_ms.percentiles = {{99, 500}};
    for (int i = 0; i < 4; ++i) {
        BenchRequestRow q;
        q.index = i;
        q.arrival_s = 0;
        q.first_token_s = ttft / 1000.0;
        q.finish_s = 1.5;
        q.input_tokens = 10;
        q.output_tokens = int32_t(tps / 2);
        r.requests.push_back(q);
    }
    for (int s = 0; s < 20; ++s) {
        BenchStepRow st;
        st.time_s = 0.1 * s;
        st.decode_tokens = 4;
        st.running = 4;
        st.kv_usage = 0.1;
        r.steps.push_back(st);
    }
    return r;
}

} // namespace

class TestBenchmarkPage : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<Database> db_;
    std::unique_ptr<BenchStore> store_;
    std::unique_ptr<BenchController> controller_;
    std::unique_ptr<AppSettings> settings_;
    QList<BenchPlan> plans_; // what the page asked for
    bool answer_ = true;     // the scripted worker answers at once

    // The scripted worker: one completed run per (sweep value, policy), with throughput rising
    // with the sweep value.
    void answer(const BenchPlan& p) {
        BenchProgress pr;
        pr.planId = p.id;
        pr.runs = p.runCount();
        pr.runName = QStringLiteral("first");
        pr.total = 10;
        pr.completed = 5;
        pr.elapsedS = 3;
        pr.etaS = 65;
        controller_->onProgress(pr);
        int index = 0;
        const QVector<double> values =
            p.sweepSetting.isEmpty() ? QVector<double>{0} : p.sweepValues;
        for (double v : values)
            for (const QString& policy : p.policies) {
                BenchRunOutcome o;
                o.planId = p.id;
                o.index = index++;
                const std::string name =
                    p.sweepSetting.isEmpty()
                        ? policy.toStdString()
                        : p.sweepSetting.toStdString() + "=" + std::to_string(int(v));
                o.run = madeRun(name, policy.toStdString(), 100.0 * (index), 50.0 * index,
                                p.sweepSetting.toStdString(), v);
                o.environment = {{"llmwb_report_version", 1}, {"device", "CPU test"}};
                controller_->onRunFinished(o);
            }
        controller_->onFinished(p.id, QString());
    }

  private slots:
    void init() {
        QVERIFY(dir_.isValid());
        static int n = 0;
        db_ = std::make_unique<Database>(dir_.filePath(QStringLiteral("db%1.sqlite").arg(++n)));
        QVERIFY(db_->open());
        store_ = std::make_unique<BenchStore>(*db_);
        controller_ = std::make_unique<BenchController>(*store_);
        settings_ = std::make_unique<AppSettings>(dir_.filePath(QStringLiteral("s%1.ini").arg(n)));
        plans_.clear();
        answer_ = true;
        connect(controller_.get(), &BenchController::startRequested, this,
                [this](const BenchPlan& p) {
                    plans_ << p;
                    if (answer_)
                        answer(p);
                });
    }

    void cleanup() {
        controller_.reset();
        store_.reset();
        db_.reset();
    }

    void formMakesThePlan() {
        BenchmarkPage page(*controller_, *settings_);
        page.findChild<QSpinBox*>(QStringLiteral("benchNumPrompts"))->setValue(12);
        page.findChild<QSpinBox*>(QStringLiteral("benchInputLen"))->setValue(33);
        auto* sweep = page.findChild<QComboBox*>(QStringLiteral("benchSweepSetting"));
        sweep->setCurrentIndex(sweep->findData(QStringLiteral("block_size")));
        QCOMPARE(page.findChild<QLineEdit*>(QStringLiteral("benchSweepValues"))->text(),
                 QStringLiteral("8, 16, 32")); // an example for the setting
        const BenchPlan p = page.plan();
        QCOMPARE(p.workload.numPrompts, 12);
        QCOMPARE(p.workload.inputLen, 33);
        QCOMPARE(p.sweepSetting, QStringLiteral("block_size"));
        QCOMPARE(p.sweepValues, (QVector<double>{8, 16, 32}));
        QCOMPARE(p.metricPercentiles, (QVector<double>{50, 90, 99}));
        QCOMPARE(p.policies, QStringList{QStringLiteral("continuous")});
        QCOMPARE(p.runCount(), 3);
        QCOMPARE(p.validate(), QString());
    }

    void refusalsAreShownOnThePage() {
        BenchmarkPage page(*controller_, *settings_);
        page.findChild<QLineEdit*>(QStringLiteral("benchPercentiles"))->setText("50, lots");
        QVERIFY(!page.run().isEmpty());
        auto* hint = page.findChild<QLabel*>(QStringLiteral("benchHint"));
        QVERIFY(!hint->isHidden());
        QVERIFY(hint->text().contains(QStringLiteral("percentiles")));
        page.findChild<QLineEdit*>(QStringLiteral("benchPercentiles"))->setText("99");
        auto* sweep = page.findChild<QComboBox*>(QStringLiteral("benchSweepSetting"));
        sweep->setCurrentIndex(sweep->findData(QStringLiteral("block_size")));
        page.findChild<QLineEdit*>(QStringLiteral("benchSweepValues"))->setText("8, 12");
        const QString why = page.run();
        QVERIFY2(why.contains(QStringLiteral("8, 16 or 32")), qPrintable(why));
        QVERIFY(plans_.isEmpty()); // nothing was sent
    }

    void runShowsProgressThenTheRuns() {
        BenchmarkPage page(*controller_, *settings_);
        answer_ = false;
        page.applyPreset(BenchmarkPage::PolicyComparison);
        QCOMPARE(page.run(), QString());
        QCOMPARE(plans_.size(), 1);
        QCOMPARE(plans_[0].policies.size(), 3);
        QVERIFY(!page.runButton()->isEnabled());
        QVERIFY(page.cancelButton()->isEnabled());
        BenchProgress pr;
        pr.planId = plans_[0].id;
        pr.run = 1;
        pr.runs = 3;
        pr.runName = QStringLiteral("static");
        pr.completed = 8;
        pr.total = 16;
        pr.elapsedS = 20;
        pr.etaS = 40;
        controller_->onProgress(pr);
        QCOMPARE(page.progressBar()->value(), 500); // (1 + 8/16) of 3
        const QString status = page.statusLabel()->text();
        QVERIFY2(status.contains(QStringLiteral("Run 2 of 3: static")), qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("8 of 16")), qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("0:40 left")), qPrintable(status));
        answer(plans_[0]);
        QVERIFY(page.runButton()->isEnabled());
        QCOMPARE(page.runsModel()->rowCount(), 3);
        QVERIFY(page.statusLabel()->text().contains(QStringLiteral("3 run")));
        // Three runs: compared at once, differences against the first.
        QCOMPARE(page.tabs()->currentIndex(), int(BenchmarkPage::CompareTab));
        QTableWidget* t = page.compareView()->table();
        bool found = false;
        for (int r = 0; r < t->rowCount(); ++r)
            if (t->item(r, 0)->text().startsWith(QStringLiteral("output_throughput"))) {
                found = true;
                QVERIFY2(t->item(r, 2)->text().contains(QStringLiteral("+100.0%")),
                         qPrintable(t->item(r, 2)->text()));
                QVERIFY2(t->item(r, 3)->text().contains(QStringLiteral("+200.0%")),
                         qPrintable(t->item(r, 3)->text()));
            }
        QVERIFY(found);
        // A language change rebuilds the table: the same rows, none left empty.
        const int rows = t->rowCount();
        QEvent change(QEvent::LanguageChange);
        QApplication::sendEvent(page.compareView(), &change);
        QCOMPARE(t->rowCount(), rows);
        for (int r = 0; r < t->rowCount(); ++r)
            QVERIFY2(t->item(r, 1) && !t->item(r, 1)->text().isEmpty(),
                     qPrintable(QString::number(r)));
        QVERIFY(!page.compareView()->isSweepChart());
        QCOMPARE(page.compareView()->chart()->series().size(), 3); // tok/s over time, overlaid
    }

    void costAndSummary() {
        BenchmarkPage page(*controller_, *settings_);
        page.findChild<QDoubleSpinBox*>(QStringLiteral("benchPrice"))->setValue(3.6);
        QCOMPARE(page.run(), QString()); // one continuous run at 100 tok/s
        QCOMPARE(page.runsModel()->rowCount(), 1);
        // 3.6 / (100 x 3600) x 1e6 = 10
        const QString cost =
            page.runsModel()->index(0, BenchRunsModel::CostPerMillion).data().toString();
        QVERIFY2(cost.startsWith(QStringLiteral("$10")), qPrintable(cost));
        QCOMPARE(settings_->benchPricePerHour(), 3.6);
        QVERIFY(page.summary()->toPlainText().contains(QStringLiteral("Serving Benchmark Result")));
    }

    void sweepIsChartedAgainstTheSetting() {
        BenchmarkPage page(*controller_, *settings_);
        page.applyPreset(BenchmarkPage::MaxNumSeqsSweep);
        QCOMPARE(page.run(), QString());
        QCOMPARE(plans_[0].sweepValues, (QVector<double>{1, 2, 4, 8, 16}));
        QCOMPARE(page.runsModel()->rowCount(), 5);
        QVERIFY(page.compareView()->isSweepChart());
        QCOMPARE(page.compareView()->chart()->series().size(), 2); // one policy: tok/s and TTFT
    }

    void cancelledRunIsKept() {
        BenchmarkPage page(*controller_, *settings_);
        answer_ = false;
        QCOMPARE(page.run(), QString());
        QSignalSpy cancel(controller_.get(), &BenchController::cancelRequested);
        page.cancelButton()->click();
        QCOMPARE(cancel.size(), 1);
        BenchRunOutcome o;
        o.planId = plans_[0].id;
        o.run = madeRun("continuous", "continuous", 50, 20);
        o.run.status = BenchRunStatus::Cancelled;
        o.run.error = "Cancelled by the user.";
        o.run.figures.completed = 2;
        o.environment = {{"llmwb_report_version", 1}};
        controller_->onRunFinished(o);
        controller_->onFinished(plans_[0].id, QStringLiteral("Cancelled."));
        QCOMPARE(page.runsModel()->rowCount(), 1);
        QCOMPARE(page.runsModel()->index(0, BenchRunsModel::Status).data().toString(),
                 QStringLiteral("cancelled"));
        QVERIFY(page.statusLabel()->text().contains(QStringLiteral("Cancelled.")));
        QVERIFY(page.summary()->toPlainText().contains(QStringLiteral("Cancelled by the user.")));
        QVERIFY(page.runButton()->isEnabled());
    }

    void mainWindowHasTheTabAndTheLoadTestPreset() {
        Database chatDb(dir_.filePath(QStringLiteral("chat.sqlite")));
        QVERIFY(chatDb.open());
        ConversationStore conversations(chatDb);
        ChatController chat(conversations);
        MainWindow w(chat, *settings_);
        w.attachBenchmark(*controller_);
        QVERIFY(w.centralTabs());
        QCOMPARE(w.centralTabs()->count(), 2);
        QVERIFY(w.action(QStringLiteral("importReportAction")));
        QVERIFY(w.action(QStringLiteral("exportReportAction")));
        w.action(QStringLiteral("benchmarkAction"))->trigger();
        QCOMPARE(w.centralTabs()->currentWidget(), w.benchmarkPage());
        w.centralTabs()->setCurrentIndex(0);
        w.action(QStringLiteral("loadTestAction"))->trigger();
        QCOMPARE(w.centralTabs()->currentWidget(), w.benchmarkPage());
        QCOMPARE(plans_.size(), 1);
        QCOMPARE(plans_[0].workload.numPrompts, 16);
        QCOMPARE(plans_[0].workload.requestRate, 0.0); // all at once
        QCOMPARE(w.benchmarkPage()->runsModel()->rowCount(), 1);
    }
};

QTEST_MAIN(TestBenchmarkPage)
#include "tst_ui_benchmark_page.moc"
