// The Engine dock's Speculation tab: acceptance points only for views that verified drafts, the
// per-position bars as vLLM's per-position acceptance rate, the summary in words, a restart
// when the engine's counters go back to zero, and the tab in the Engine dock.
#include <QBarSet>
#include <QLabel>
#include <QTabWidget>
#include <QtTest>

#include "ui/batch_timeline_view.h"
#include "ui/engine_panel.h"
#include "ui/memory_panel.h"
#include "ui/speculation_panel.h"

using namespace llmwb;

class TestSpeculationPanel : public QObject {
    Q_OBJECT

    static EngineView view(qint64 ms, int64_t drafts, int64_t draftTokens, int64_t accepted,
                           std::vector<int64_t> perPos, int k = 4) {
        EngineView v;
        v.timeMs = ms;
        v.tuning.numSpeculativeTokens = k;
        v.snapshot.speculative.num_drafts = drafts;
        v.snapshot.speculative.num_draft_tokens = draftTokens;
        v.snapshot.speculative.num_accepted_tokens = accepted;
        v.snapshot.speculative.accepted_per_pos = std::move(perPos);
        return v;
    }

  private slots:
    void offThenOn() {
        SpeculationPanel p;
        p.addView(view(0, 0, 0, 0, {}, 0));
        QVERIFY(p.summary()->text().contains(QStringLiteral("off")));
        QCOMPARE(p.ratePoints().size(), 0);
        p.addView(view(100, 0, 0, 0, {}, 4));
        QVERIFY(p.summary()->text().contains(QStringLiteral("no drafts")));
    }

    void pointsOnlyWhenDrafted() {
        SpeculationPanel p;
        p.addView(view(1000, 10, 40, 30, {9, 8, 7, 6}));
        p.addView(view(1100, 10, 40, 30, {9, 8, 7, 6})); // nothing new: no point (a gap)
        p.addView(view(1200, 20, 80, 40, {15, 12, 8, 5}));
        QCOMPARE(p.ratePoints().size(), 2);
        QCOMPARE(p.ratePoints()[0].y(), 75.0);              // 30 of 40
        QCOMPARE(p.ratePoints()[1].y(), 25.0);              // 10 of the next 40
        QCOMPARE(p.lengthPoints()[0].y(), 1.0 + 30.0 / 10); // 1 + accepted / drafts
        QCOMPARE(p.lengthPoints()[1].y(), 1.0 + 10.0 / 10);
        QCOMPARE(p.positionBars()->count(), 4);
        QCOMPARE(p.positionBars()->at(0), 100.0 * 15 / 20);
        QCOMPARE(p.positionBars()->at(3), 100.0 * 5 / 20);
        const QString s = p.summary()->text();
        QVERIFY2(s.contains(QStringLiteral("40 of 80")), qPrintable(s));
        QVERIFY2(s.contains(QStringLiteral("50.0%")), qPrintable(s));
        QVERIFY2(s.contains(QStringLiteral("3.00")), qPrintable(s));
    }

    void restartsWithANewEngine() {
        SpeculationPanel p;
        p.addView(view(1000, 10, 40, 30, {9, 8, 7, 6}));
        p.addView(view(1100, 2, 8, 8, {2, 2})); // counters went back: a rebuilt engine
        QCOMPARE(p.ratePoints().size(), 1);
        QCOMPARE(p.ratePoints()[0].y(), 100.0);
        QCOMPARE(p.positionBars()->count(), 2);
    }

    void windowBoundsThePoints() {
        SpeculationPanel p;
        for (int i = 0; i < 200; ++i)
            p.addView(view(i * 1000, (i + 1) * 2, (i + 1) * 8, (i + 1) * 4, {1}));
        for (const QPointF& pt : p.ratePoints())
            QVERIFY(pt.x() >= 199.0 - SpeculationPanel::kWindowSeconds);
    }

    void tabInTheEngineDock() {
        EnginePanel e;
        QCOMPARE(e.tabs()->count(), 4);
        QCOMPARE(e.tabs()->tabText(EnginePanel::SpeculationTab), QStringLiteral("Speculation"));
        e.setView(view(500, 4, 16, 12, {4, 4, 3, 1}));
        QCOMPARE(e.speculation()->ratePoints().size(), 1);
    }

    // The batch timeline tells verified from accepted drafts (tooltip; rejected ones hatched).
    void timelineShowsDrafts() {
        BatchTimelineView t;
        StepRecord r;
        r.step = 7;
        r.decodeTokens = 10;
        r.segments = {{1, 5, false, 4, 1}, {2, 5, false, 4, 4}};
        t.addSteps({r});
        const QString tip = t.stepToolTip(0);
        QVERIFY2(tip.contains(QStringLiteral("8 verified, 5 accepted")), qPrintable(tip));
        t.resize(300, 120);
        QImage img(t.size(), QImage::Format_ARGB32);
        t.render(&img); // paints the hatch without crashing
    }

    // The Memory panel shows the self-q4 draft's memory (outside the KV plan).
    void draftMemoryOnTheMemoryPanel() {
        MemoryPanel m;
        EngineView v = view(0, 0, 0, 0, {});
        v.snapshot.memory.num_blocks = 10;
        v.snapshot.memory.block_size = 16;
        m.setView(v);
        QVERIFY(m.fieldText("memoryDraft").contains(QStringLiteral("none")));
        v.draftWeightBytes = 280 << 20;
        v.draftKvBytes = 64 << 20;
        m.setView(v);
        const QString t = m.fieldText("memoryDraft");
        QVERIFY2(t.contains(QStringLiteral("self-q4")) && t.contains(QStringLiteral("280")),
                 qPrintable(t));
    }
};

QTEST_MAIN(TestSpeculationPanel)
#include "tst_ui_speculation_panel.moc"
