// The Engine dock's views fed with synthetic snapshots: block-map geometry at several sizes
// (tens of thousands of blocks included), hover lookup, tooltips, stable request colours,
// legend highlighting; the batch timeline's column window and hover; the panel's figures.
#include <QElapsedTimer>
#include <QLabel>
#include <QtTest>

#include "ui/batch_timeline_view.h"
#include "ui/engine_panel.h"
#include "ui/kv_block_map_view.h"
#include "ui/request_colors.h"

using namespace llmwb;

namespace {

// n blocks; request r (0..owners-1) holds blocks [r*per, r*per+per); block 1 shared by two;
// the last two blocks cached-free; the rest free.
EngineSnapshot makeSnapshot(int n, int owners, int per) {
    EngineSnapshot s;
    s.block_size = 16;
    s.blocks.resize(size_t(n));
    for (int r = 0; r < owners; ++r) {
        SnapshotRequest req;
        req.id = 100 + r;
        req.status = RequestStatus::Running;
        s.requests.push_back(req);
        SnapshotScheduled sch;
        sch.id = req.id;
        sch.num_computed = per * 16 - 5; // last block holds 11 tokens
        for (int i = 0; i < per; ++i) {
            const int b = r * per + i;
            s.blocks[size_t(b)] = {BlockState::Used, 1, req.id,
                                   uint64_t(0xabcdef0123456789ull + b)};
            sch.blocks.push_back(b);
        }
        s.scheduled.push_back(sch);
    }
    s.blocks[1].ref_count = 2;
    s.blocks[size_t(n - 1)] = {BlockState::CachedFree, 0, -1, 0x1234};
    s.blocks[size_t(n - 2)] = {BlockState::CachedFree, 0, -1, 0x5678};
    s.num_used_blocks = owners * per;
    s.num_cached_free_blocks = 2;
    s.num_free_blocks = n - owners * per - 2;
    s.num_running = owners;
    s.kv_usage = double(owners * per) / n;
    return s;
}

} // namespace

class TestUiEngineViews : public QObject {
    Q_OBJECT

  private slots:
    void cellGeometry_data() {
        QTest::addColumn<int>("w");
        QTest::addColumn<int>("h");
        QTest::addColumn<int>("blocks");
        QTest::newRow("small pool, big widget") << 600 << 400 << 64;
        QTest::newRow("512 blocks") << 400 << 300 << 512;
        QTest::newRow("4096 blocks") << 420 << 260 << 4096;
        QTest::newRow("40000 blocks") << 500 << 320 << 40000;
        QTest::newRow("narrow") << 130 << 500 << 1000;
    }
    void cellGeometry() {
        QFETCH(int, w);
        QFETCH(int, h);
        QFETCH(int, blocks);
        KvBlockMapView v;
        v.resize(w, h);
        v.setSnapshot(makeSnapshot(blocks, 3, 4));
        const QRect grid = v.gridRect();
        const int s = v.cellSize();
        QVERIFY(s >= 1);
        // Everything fits the grid, and the cells are as large as possible: one pixel more
        // would not fit (unless capped).
        QVERIFY2(
            grid.contains(v.cellRect(blocks - 1)),
            qPrintable(
                QStringLiteral("cell %1 grid %2x%3").arg(s).arg(grid.width()).arg(grid.height())));
        const int cells = v.cellCount();
        const int per = v.blocksPerCell();
        QCOMPARE(cells, (blocks + per - 1) / per);
        // Cells never get smaller than kMinCell: a larger pool aggregates blocks instead.
        QVERIFY2(s >= KvBlockMapView::kMinCell || per == 1, qPrintable(QString::number(s)));
        if (per > 1)
            QVERIFY(int64_t(grid.width() / KvBlockMapView::kMinCell) *
                        (grid.height() / KvBlockMapView::kMinCell) * per >=
                    blocks);
        const int colsBigger = grid.width() / (s + 1);
        if (s < 22)
            QVERIFY(colsBigger == 0 ||
                    int64_t((cells + colsBigger - 1) / colsBigger) * (s + 1) > grid.height());
        // Row-major order, adjacent cells do not overlap.
        QCOMPARE(v.cellRect(per).left() - v.cellRect(0).left(), s);
        QVERIFY(!v.cellRect(0).intersects(v.cellRect(per)));
        // Hover lookup maps every sampled cell back to its (first) block.
        for (int b : {0, 1, blocks / 3, blocks / 2, blocks - 2, blocks - 1})
            QCOMPARE(v.blockAt(v.cellRect(b).center()), b / per * per);
        QCOMPARE(v.blockAt(QPoint(grid.right() + 2, grid.bottom() + 2)), -1);
    }

    void paintsManyBlocksQuickly() {
        KvBlockMapView v;
        v.resize(500, 320);
        v.setSnapshot(makeSnapshot(40000, 16, 500));
        QElapsedTimer t;
        t.start();
        const QImage img = v.grab().toImage();
        const qint64 ms = t.elapsed();
        qInfo("40000 blocks painted in %lld ms", ms);
        QVERIFY2(ms < 1000, qPrintable(QString::number(ms)));
        // The first cell has its owner's colour (request 100).
        const QRect c = v.cellRect(0);
        QCOMPARE(img.pixelColor(c.topLeft() * img.devicePixelRatio()).rgb(),
                 requestColor(100).rgb());
    }

    // A pool of 30,708 blocks (half the RAM of a desktop) holding one chat of 20 blocks: the
    // cells aggregate blocks, and the chat's cells are coloured, not a 1-pixel line.
    void bigPoolAggregatesSoAChatIsVisible() {
        KvBlockMapView v;
        v.resize(420, 260);
        EngineSnapshot s = makeSnapshot(30708, 1, 20);
        v.setSnapshot(s);
        const int per = v.blocksPerCell();
        QVERIFY2(per > 1, qPrintable(QString::number(per)));
        QVERIFY(v.cellSize() >= KvBlockMapView::kMinCell);
        // The chat's first cell: all its blocks in use by request 100, so its full colour.
        QCOMPARE(v.cellColor(0).rgb(), requestColor(100).rgb());
        // The cell with the chat's last block(s) and free ones: coloured, but lighter.
        const int lastCell = v.cellOf(19);
        if (19 % per != per - 1) {
            const QColor mixed = v.cellColor(19);
            QVERIFY(mixed.rgb() != requestColor(100).rgb());
            QVERIFY(mixed.rgb() != v.cellColor(1000).rgb()); // differs from a free cell
        }
        QCOMPARE(v.cellColor(1000).rgb(), v.palette().color(QPalette::AlternateBase).rgb());
        // The painted pixels: the chat covers at least one cell of kMinCell pixels or more.
        const QImage img = v.grab().toImage();
        const qreal dpr = img.devicePixelRatio();
        QCOMPARE(img.pixelColor(v.cellRect(0).center() * dpr).rgb(), requestColor(100).rgb());
        QVERIFY(v.cellRect(0).width() >= KvBlockMapView::kMinCell - 1);
        // The tooltip counts the mix of a cell.
        const QString tip = v.cellToolTip(lastCell * per);
        QVERIFY2(tip.contains(QStringLiteral("1 cell = %1 blocks").arg(per)), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("In use: %1").arg(std::min(per, 20 - lastCell * per))),
                 qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("#100")), qPrintable(tip));
        // A small pool is not aggregated: one cell per block, the block's own tooltip.
        v.setSnapshot(makeSnapshot(256, 3, 4));
        QCOMPARE(v.blocksPerCell(), 1);
        QCOMPARE(v.cellToolTip(1), v.blockToolTip(1));
    }

    // The map zooms to the used start of a mostly free pool: one chat of 20 blocks in 8,192
    // gets cells of many pixels, the caption says what is shown, and it grows in steps as
    // blocks further in the pool are taken.
    void zoomsToTheUsedStartOfThePool() {
        KvBlockMapView v;
        v.resize(420, 260);
        EngineSnapshot s = makeSnapshot(8192, 1, 20);
        s.blocks[8191] = s.blocks[8190] = SnapshotBlock{}; // no cached blocks at the end
        v.setSnapshot(s);
        QCOMPARE(v.blockCount(), 8192);
        QCOMPARE(v.shownCount(), KvBlockMapView::kMinShownBlocks);
        QCOMPARE(v.blocksPerCell(), 1);
        QVERIFY2(v.cellSize() >= 12, qPrintable(QString::number(v.cellSize())));
        QVERIFY2(v.captionText().contains(QStringLiteral("0–255 of 8,192")) ||
                     v.captionText().contains(QStringLiteral("0–255 of 8192")),
                 qPrintable(v.captionText()));
        QVERIFY(v.gridRect().contains(v.cellRect(255)));
        QCOMPARE(v.blockAt(v.cellRect(19).center()), 19);
        QCOMPARE(v.cellColor(19).rgb(), requestColor(100).rgb());
        // A block far into the pool in use: the map shows up to it (and a quarter more).
        s.blocks[3000] = {BlockState::Used, 1, 100, 0};
        v.setSnapshot(s);
        QVERIFY(v.shownCount() > 3000 && v.shownCount() <= 8192);
        QCOMPARE(v.shownCount() % KvBlockMapView::kMinShownBlocks, 0);
        QVERIFY(v.gridRect().contains(v.cellRect(3000)));
        QCOMPARE(v.blockAt(v.cellRect(3000).center()),
                 3000 / v.blocksPerCell() * v.blocksPerCell());
    }

    void tooltipAndTokens() {
        KvBlockMapView v;
        v.resize(400, 300);
        v.setSnapshot(makeSnapshot(256, 3, 4));
        QCOMPARE(v.tokensHeld(0), 16);
        QCOMPARE(v.tokensHeld(3), 11);   // request 100's last block
        QCOMPARE(v.tokensHeld(200), 0);  // free
        QCOMPARE(v.tokensHeld(255), 16); // cached (hashed) block
        const int b = v.blockAt(v.cellRect(1).center());
        QCOMPARE(b, 1);
        const QString tip = v.blockToolTip(b);
        QVERIFY2(tip.contains("Block 1"), qPrintable(tip));
        QVERIFY2(tip.contains("Ref count: 2"), qPrintable(tip));
        QVERIFY2(tip.contains("Tokens: 16 / 16"), qPrintable(tip));
        QVERIFY2(tip.contains("#100"), qPrintable(tip));
        QVERIFY2(tip.contains("abcdef01"), qPrintable(tip));
        QVERIFY(v.blockToolTip(254).contains("cached"));
        QVERIFY(v.blockToolTip(9999).isEmpty());
    }

    void coloursAreStablePerRequest() {
        QCOMPARE(requestColor(7), requestColor(7));
        QSet<QRgb> distinct;
        for (int id = 0; id < 16; ++id)
            distinct.insert(requestColor(id).rgb());
        QCOMPARE(distinct.size(), 16);
        KvBlockMapView v;
        v.resize(400, 300);
        v.setSnapshot(makeSnapshot(256, 3, 4));
        QCOMPARE(v.cellColor(4), requestColor(101));
        // A later snapshot in which request 101 owns other blocks: same colour.
        EngineSnapshot s = makeSnapshot(256, 3, 4);
        std::swap(s.blocks[4], s.blocks[50]);
        v.setSnapshot(s);
        QCOMPARE(v.cellColor(50), requestColor(101));
        QVERIFY(v.cellColor(4) != requestColor(101));
        QVERIFY(v.cellColor(255) != v.cellColor(200)); // cached-free differs from free
    }

    void legendClickHighlights() {
        KvBlockMapView v;
        v.resize(400, 300);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        v.setSnapshot(makeSnapshot(256, 3, 4));
        QCOMPARE(v.legendRequests(), (QVector<qint64>{100, 101, 102}));
        QSignalSpy changed(&v, &KvBlockMapView::highlightChanged);
        QTest::mouseClick(&v, Qt::LeftButton, {}, v.legendRect(1).center());
        QCOMPARE(v.highlighted(), qint64(101));
        QCOMPARE(changed.size(), 1);
        // Highlighted blocks keep full colour; the others are dimmed.
        const QImage img = v.grab().toImage();
        const qreal dpr = img.devicePixelRatio();
        QCOMPARE(img.pixelColor(v.cellRect(4).center() * dpr).rgb(), requestColor(101).rgb());
        QVERIFY(img.pixelColor(v.cellRect(0).center() * dpr).rgb() != requestColor(100).rgb());
        QTest::mouseClick(&v, Qt::LeftButton, {}, v.legendRect(1).center());
        QCOMPARE(v.highlighted(), qint64(-1));
        // A highlighted request that finishes clears the highlight.
        v.setHighlighted(102);
        v.setSnapshot(makeSnapshot(256, 2, 4));
        QCOMPARE(v.highlighted(), qint64(-1));
    }

    void timelineKeepsTheLastSteps() {
        BatchTimelineView t;
        t.resize(600, 150);
        QVector<StepRecord> steps;
        for (int i = 0; i < 500; ++i) {
            StepRecord r;
            r.step = i;
            r.ms = 2.5;
            r.segments = {{1, i % 7 == 0 ? 64 : 1, i % 7 == 0}, {2, 1, false}};
            r.prefillTokens = i % 7 == 0 ? 64 : 0;
            r.decodeTokens = i % 7 == 0 ? 1 : 2;
            r.preempted = i == 450 ? 1 : 0;
            steps.push_back(r);
        }
        t.addSteps(steps.mid(0, 100));
        QCOMPARE(t.stepCount(), 100);
        // Latest at the right edge.
        QVERIFY(std::abs(t.columnRect(99).right() - t.plotRect().right()) <= 1);
        t.addSteps(steps.mid(100));
        QCOMPARE(t.stepCount(), BatchTimelineView::kMaxSteps);
        QCOMPARE(t.stepAtIndex(0).step, qint64(200));
        QCOMPARE(t.stepAtIndex(299).step, qint64(499));
        QCOMPARE(t.columnRect(0).left(), t.plotRect().left());
        QCOMPARE(t.maxTokens(), 65);
        for (int i : {0, 1, 150, 250, 299})
            QCOMPARE(t.indexAt(t.columnRect(i).center()), i);
        const QString tip = t.stepToolTip(250); // step 450: a preemption
        QVERIFY2(tip.contains("Step 450"), qPrintable(tip));
        QVERIFY2(tip.contains("Preempted: 1"), qPrintable(tip));
        QVERIFY2(t.stepToolTip(0).contains("Prefill: 0 tokens, decode: 2 tokens"),
                 qPrintable(t.stepToolTip(0)));
        // Prefill drawn solid in the request's colour, decode lighter.
        const QImage img = t.grab().toImage();
        const qreal dpr = img.devicePixelRatio();
        const QRect prefillCol = t.columnRect(3); // step 203 = 7 * 29: a prefill step
        QCOMPARE(t.stepAtIndex(3).prefillTokens, 64);
        QCOMPARE(img.pixelColor(QPoint(prefillCol.left(), prefillCol.bottom() - 2) * dpr).rgb(),
                 requestColor(1).rgb());
        const QRect decodeCol = t.columnRect(4);
        QVERIFY(img.pixelColor(QPoint(decodeCol.left(), decodeCol.bottom()) * dpr).rgb() !=
                requestColor(1).rgb());
    }

    void panelShowsFigures() {
        EnginePanel p;
        p.resize(500, 600);
        EngineView v;
        v.snapshot = makeSnapshot(512, 3, 4);
        v.snapshot.num_waiting = 5;
        v.snapshot.step_index = 42;
        v.tokensPerSecond = 123;
        v.steps.resize(3);
        p.setView(v);
        const QString text = p.figures()->text();
        QVERIFY2(text.contains("2.3%"), qPrintable(text)); // 12 of 512 blocks
        QVERIFY2(text.contains("3 running / 5 waiting"), qPrintable(text));
        QVERIFY2(text.contains("123 tokens/s"), qPrintable(text));
        QCOMPARE(p.blockMap()->blockCount(), 512);
        QCOMPARE(p.timeline()->stepCount(), 3);
    }
};

QTEST_MAIN(TestUiEngineViews)
#include "tst_ui_engine_views.moc"
