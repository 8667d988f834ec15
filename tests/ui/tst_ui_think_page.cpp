// The Think harder page with its controller over a real SQLite file, the engine worker replaced
// by the test (it answers the controller's startRequested with progress and a finished run):
// Start sends the form's plan, progress moves the bar and plots the rungs done, the finished run
// is stored and listed, its curve has one series per kind of rung, the x axis switches to wall
// time and cost, and the per-question table shows the votes and where the samples disagreed.
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QLineSeries>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "app/services/database.h"
#include "app/services/think_controller.h"
#include "app/services/think_store.h"
#include "ui/think_page.h"

using namespace llmwb;
using tj = nlohmann::ordered_json;

namespace {

tj rungJson(const char* kind, int value, int correct, int tokens, double ms,
            const std::vector<std::vector<const char*>>& answers) {
    tj r;
    r["rung"] = std::string(kind) + "=" + std::to_string(value);
    r["kind"] = kind;
    r["value"] = value;
    r["accuracy"] = correct / 2.0;
    r["correct"] = correct;
    r["tasks"] = 2;
    r["tokens"] = tokens;
    r["tokens_per_task"] = tokens / 2.0;
    r["wall_ms"] = ms * 2;
    r["ms_per_task"] = ms;
    r["ties"] = 0;
    r["no_answer"] = 0;
    tj qs = tj::array();
    for (size_t q = 0; q < answers.size(); ++q) {
        tj jq;
        jq["task"] = q;
        jq["correct"] = q < size_t(correct);
        jq["tokens"] = tokens / 2;
        jq["vote"] = answers[q][0] ? tj(answers[q][0]) : tj(nullptr);
        jq["votes"] = 1;
        jq["tie"] = false;
        tj ss = tj::array();
        for (const char* a : answers[q])
            ss.push_back({{"text", std::string("so the answer is ") + (a ? a : "?")},
                          {"tokens", 5},
                          {"answer", a ? tj(a) : tj(nullptr)}});
        jq["samples"] = ss;
        qs.push_back(jq);
    }
    r["questions"] = qs;
    return r;
}

} // namespace

class TestUiThinkPage : public QObject {
    Q_OBJECT

  private slots:
    void startProgressChartAndQuestions() {
        QTemporaryDir dir;
        Database db(dir.filePath("t.sqlite"));
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        ThinkStore store(db);
        ThinkController controller(store);
        ThinkPage page(controller);
        page.resize(1280, 800);
        page.show();

        // No model: nothing starts; a model without <think>: budgets greyed out.
        page.setModel(true, false);
        QVERIFY(!page.thinkingCheck()->isEnabled());
        QVERIFY(!page.thinkingCheck()->isChecked());
        page.setModel(true, true);
        QVERIFY(page.thinkingCheck()->isEnabled());
        page.setModel(true, false);

        QSignalSpy started(&controller, &ThinkController::startRequested);
        page.beamCheck()->setChecked(true);
        page.beamEdit()->setText(QStringLiteral("2"));
        page.maxTokensBox()->setValue(16);
        QCOMPARE(page.run(), QString());
        QCOMPARE(started.size(), 1);
        const ThinkPlan plan = started.first().at(0).value<ThinkPlan>();
        QCOMPARE(plan.ladder, QStringLiteral("n=1,2,4,8;beam=2"));
        QCOMPARE(plan.maxTokens, 16);
        QCOMPARE(plan.taskKind, QStringLiteral("arith"));
        QVERIFY(controller.isRunning());
        // A second start is refused while it runs.
        QVERIFY(!page.run().isEmpty());

        // Progress: two rungs of five done, the third half-way.
        ThinkProgress p;
        p.planId = plan.id;
        p.rungs = 5;
        p.rung = 2;
        p.rungLabel = QStringLiteral("n=4");
        p.questions = 2;
        p.questionsDone = 1;
        p.done = tj::array({rungJson("n", 1, 0, 10, 100, {}), rungJson("n", 2, 1, 20, 150, {})});
        controller.onProgress(p);
        QCOMPARE(page.progressBar()->value(), 50); // (2 + 0.5) / 5
        QCOMPARE(page.chart()->series().size(), 1);
        auto* live = qobject_cast<QLineSeries*>(page.chart()->series().first());
        QVERIFY(live);
        QCOMPARE(live->count(), 2);
        QVERIFY(page.statusLabel()->text().contains(QStringLiteral("n=4")));

        // The end: three sample rungs and a beam rung.
        ThinkRunOutcome out;
        out.planId = plan.id;
        tj run;
        run["name"] = "arith:2";
        run["model"] = "tiny";
        run["task_set"] = "arith:2";
        run["ladder"] = "n=1,2,4;beam=2";
        run["price_per_hour"] = 3.6;
        run["status"] = "completed";
        run["error"] = "";
        run["wall_s"] = 1.5;
        run["tasks"] = tj::array({{{"question", "Compute 2 + 3."}, {"answer", "5"}},
                                  {{"question", "Compute 4 * 4."}, {"answer", "16"}}});
        run["rungs"] = tj::array(
            {rungJson("n", 1, 0, 10, 100, {{"4"}, {"15"}}),
             rungJson("n", 2, 1, 20, 150, {{"5", "5"}, {"15", "16"}}),
             rungJson("n", 4, 2, 40, 300, {{"5", "5", "5", "5"}, {"16", "16", "15", nullptr}}),
             rungJson("beam", 2, 1, 30, 200, {{"5"}, {"17"}})});
        out.run = run;
        controller.onFinished(out);
        QVERIFY(!controller.isRunning());
        QCOMPARE(page.progressBar()->value(), 100);
        QCOMPARE(page.chart()->series().size(), 2); // samples + vote, beam search
        auto* samples = qobject_cast<QLineSeries*>(page.chart()->series().at(0));
        QCOMPARE(samples->count(), 3);
        QCOMPARE(samples->at(2), QPointF(20, 100)); // 40 tokens / 2 tasks, 2 of 2 correct
        // Wall time and cost axes: ms per task / 1000; price x hours per task.
        page.xAxisBox()->setCurrentIndex(1);
        samples = qobject_cast<QLineSeries*>(page.chart()->series().at(0));
        QCOMPARE(samples->at(2).x(), 0.3);
        page.xAxisBox()->setCurrentIndex(2);
        samples = qobject_cast<QLineSeries*>(page.chart()->series().at(0));
        QCOMPARE(samples->at(2).x(), 3.6 * 300 / 3.6e6);

        // Stored and listed.
        QCOMPARE(store.runs().size(), 1);
        QCOMPARE(page.runsList()->count(), 1);

        // Questions of the last rung shown (beam=2); pick n=4.
        QCOMPARE(page.rungBox()->count(), 4);
        page.rungBox()->setCurrentIndex(2);
        QTableWidget* t = page.questionTable();
        QCOMPARE(t->rowCount(), 2);
        QCOMPARE(t->item(0, 1)->text(), QStringLiteral("Compute 2 + 3."));
        QCOMPARE(t->item(0, 2)->text(), QStringLiteral("5"));
        QCOMPARE(t->item(0, 6)->text(), QStringLiteral("unanimous"));
        QCOMPARE(t->item(1, 6)->text(), QStringLiteral("split"));
        QVERIFY(t->item(1, 5)->text().contains(QStringLiteral("16 ×2")));
        QVERIFY(t->item(1, 5)->text().contains(QStringLiteral("no answer ×1")));
        t->selectRow(1);
        QVERIFY(page.samplesView()->toPlainText().contains(QStringLiteral("Sample 4")));
    }

    void badLadderIsRefused() {
        QTemporaryDir dir;
        Database db(dir.filePath("t.sqlite"));
        QVERIFY(db.open());
        ThinkStore store(db);
        ThinkController controller(store);
        ThinkPage page(controller);
        page.setModel(true, false);
        page.beamCheck()->setChecked(true);
        page.beamEdit()->setText(QStringLiteral("2,999"));
        QSignalSpy started(&controller, &ThinkController::startRequested);
        const QString why = page.run();
        QVERIFY(why.contains(QStringLiteral("999")));
        QCOMPARE(started.size(), 0);
        QCOMPARE(page.statusLabel()->text(), why);
        // A task file that is not chosen.
        page.beamCheck()->setChecked(false);
        page.taskSetBox()->setCurrentIndex(2);
        QVERIFY(!page.run().isEmpty());
        QCOMPARE(started.size(), 0);
    }
};

QTEST_MAIN(TestUiThinkPage)
#include "tst_ui_think_page.moc"
