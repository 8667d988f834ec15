// The Engine dock's charts and memory panel and the Tuning dock, fed with synthetic values
// (offscreen): charts take points from a stream of EngineViews and keep only their window; the
// memory panel shows the plan's numbers; the tuning values persist in a settings file, Reset
// restores the defaults, and the disabled settings say why.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QValueAxis>
#include <QXYSeries>
#include <QtTest>

#include "app/services/app_settings.h"
#include "ui/charts_panel.h"
#include "ui/engine_panel.h"
#include "ui/memory_panel.h"
#include "ui/memory_plan_text.h"
#include "ui/tuning_panel.h"

using namespace llmwb;

namespace {

EngineView viewAt(qint64 ms, double tps, int running, double kv) {
    EngineView v;
    v.timeMs = ms;
    v.tokensPerSecond = tps;
    v.promptTokensPerSecond = tps * 2;
    v.snapshot.num_running = running;
    v.snapshot.num_waiting = running / 2;
    v.snapshot.kv_usage = kv;
    return v;
}

} // namespace

class TestUiEnginePanels : public QObject {
    Q_OBJECT

  private slots:
    void chartsTakePointsAndKeepTheirWindow() {
        ChartsPanel p;
        p.resize(800, 600);
        p.show();
        QVERIFY(QTest::qWaitForWindowExposed(&p));
        // 100 s of views at 30 per second, a first token every second.
        const int n = 3000;
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; i < n; ++i) {
            EngineView v = viewAt(i * 33, i % 97, i % 9, (i % 50) / 100.0);
            if (i % 30 == 0)
                v.ttfts.push_back({i, 10.0 + i % 7});
            p.addView(v);
        }
        qInfo("%d views into the visible charts in %lld ms", n, clock.elapsed());
        const double lastT = (n - 1) * 0.033;
        for (int s = 0; s < ChartsPanel::SeriesCount; ++s) {
            const auto series = ChartsPanel::Series(s);
            const QList<QPointF>& pts = p.points(series);
            QVERIFY(!pts.isEmpty());
            QVERIFY2(pts.first().x() >= lastT - ChartsPanel::kWindowSeconds - 1e-9,
                     qPrintable(QString::number(pts.first().x())));
            QCOMPARE(p.series(series)->count(), pts.size()); // pushed to the visible series
        }
        // 60 s at one point per 0.1 s: about 600 points, not the 3000 views received.
        QVERIFY2(p.pointCount(ChartsPanel::GenerationTps) <= 610,
                 qPrintable(QString::number(p.pointCount(ChartsPanel::GenerationTps))));
        QVERIFY(p.pointCount(ChartsPanel::GenerationTps) > 400); // one per 4 views here
        QVERIFY(p.pointCount(ChartsPanel::Ttft) <= 62);
        // The newest point holds the highest value of the views in its 0.1 s.
        const double x0 = p.points(ChartsPanel::GenerationTps).last().x();
        double tps = 0, running = 0, kv = 0;
        int merged = 0;
        for (int i = 0; i < n; ++i) {
            if (i * 0.033 < x0 - 1e-9)
                continue;
            ++merged;
            tps = std::max(tps, double(i % 97));
            running = std::max(running, double(i % 9));
            kv = std::max(kv, double(i % 50));
        }
        QVERIFY(merged >= 1 && merged <= 4);
        QCOMPARE(p.points(ChartsPanel::GenerationTps).last().y(), tps);
        QCOMPARE(p.points(ChartsPanel::PromptTps).last().y(), 2.0 * tps);
        QCOMPARE(p.points(ChartsPanel::Running).last().y(), running);
        QCOMPARE(p.points(ChartsPanel::KvUsage).last().y(), kv);
        // The series are relative to the latest view: the newest point at x = 0 (its bucket
        // starts at most one resolution step before).
        const double newestX = p.series(ChartsPanel::GenerationTps)->points().last().x();
        QVERIFY(newestX <= 0.0 && newestX > -ChartsPanel::kResolutionSeconds);
        QVERIFY(p.series(ChartsPanel::GenerationTps)->points().first().x() >=
                -ChartsPanel::kWindowSeconds);
        QCOMPARE(p.xAxis(ChartsPanel::Throughput)->min(), -ChartsPanel::kWindowSeconds);
        QCOMPARE(p.xAxis(ChartsPanel::Throughput)->max(), 0.0);
        QVERIFY(p.yAxis(ChartsPanel::Throughput)->max() >= 2.0 * 96);
        QCOMPARE(p.yAxis(ChartsPanel::Kv)->max(), 100.0);

        // A burst of views within one resolution step adds one point; first tokens keep one
        // point each, up to the bound.
        const int before = p.pointCount(ChartsPanel::Running);
        for (int i = 0; i < 500; ++i) {
            EngineView v = viewAt((n + 1) * 33, 1, 1, 0.1);
            for (int k = 0; k < 5; ++k)
                v.ttfts.push_back({k, 20.0});
            p.addView(v);
        }
        QCOMPARE(p.pointCount(ChartsPanel::Running), before + 1);
        QCOMPARE(p.points(ChartsPanel::Running).last().y(), 1.0);
        QCOMPARE(p.pointCount(ChartsPanel::Ttft), ChartsPanel::kMaxPoints);

        // No first tokens for a minute: the scatter empties.
        p.addView(viewAt((n + 1) * 33 + 61000, 0, 0, 0));
        QCOMPARE(p.pointCount(ChartsPanel::Ttft), 0);

        // A hidden panel keeps its points and shows them when shown again.
        p.hide();
        p.addView(viewAt((n + 1) * 33 + 62000, 5, 1, 0));
        QVERIFY(p.series(ChartsPanel::GenerationTps)->count() !=
                p.pointCount(ChartsPanel::GenerationTps));
        p.show();
        QCOMPARE(p.series(ChartsPanel::GenerationTps)->count(),
                 p.pointCount(ChartsPanel::GenerationTps));
        p.clear();
        QCOMPARE(p.pointCount(ChartsPanel::GenerationTps), 0);
    }

    void memoryPanelShowsThePlan() {
        MemoryPanel p;
        p.resize(500, 600);
        p.show();
        QVERIFY(QTest::qWaitForWindowExposed(&p));
        QVERIFY(!p.hasPlan());
        EngineView v;
        MemoryPlan& m = v.snapshot.memory;
        m.device_bytes = qint64(16) << 30;
        m.weight_bytes = qint64(12) << 20;
        m.workspace_bytes = qint64(5) << 20;
        m.bytes_per_block = 64 << 10;
        m.block_size = 16;
        m.num_blocks = 4000;
        m.kv_bytes = qint64(m.num_blocks) * m.bytes_per_block;
        m.free_bytes = m.device_bytes - m.weight_bytes - m.workspace_bytes - m.kv_bytes;
        m.kv_elem_bytes = 4;
        m.limit = KvPoolLimit::Context;
        m.cap_blocks = 4000;
        m.utilization = 0.25;
        m.base_bytes = qint64(16) << 30;
        m.budget_bytes = qint64(4) << 30;
        v.device = DeviceKind::Cpu;
        v.deviceName = QStringLiteral("CPU");
        v.kvDtype = KvDtype::F32;
        v.tuning.maxNumSeqs = 16;
        v.tuning.gpuMemoryUtilization = 0.25;
        p.setView(v);
        const QLocale loc = p.locale();
        QVERIFY(p.hasPlan());
        QVERIFY(p.fieldText("memoryBlocks").contains(loc.toString(4000)));
        QVERIFY(p.fieldText("memoryCapacity").contains(loc.toString(64000)));
        QCOMPARE(p.fieldText("memoryLimit"), MemoryPlanText::limit(m, 16));
        QVERIFY(p.fieldText("memoryLimit").contains(QStringLiteral("Capped")));
        QVERIFY(p.fieldText("memoryLimit").contains(loc.toString(4000)));
        QVERIFY(p.fieldText("memoryKv").contains(loc.formattedDataSize(m.kv_bytes, 1)));
        QVERIFY(p.fieldText("memoryWeights").contains(loc.formattedDataSize(m.weight_bytes, 1)));
        QVERIFY(p.fieldText("memoryFree").contains(loc.formattedDataSize(m.free_bytes, 1)));
        QVERIFY(p.fieldText("memoryDevice").startsWith(QStringLiteral("CPU ·")));
        QVERIFY(p.fieldText("memoryDevice").contains(QStringLiteral("RAM")));
        QCOMPARE(p.fieldText("memoryKvDtype"), QStringLiteral("fp32"));
        QVERIFY(p.fieldText("memoryNote").contains(QStringLiteral("CPU backend")));
        QVERIFY(p.fieldText("memoryNote").contains(QStringLiteral("fp32")));
        // The plan's own budget and what utilization multiplies on the CPU, said on the panel.
        QVERIFY(p.fieldText("memoryBudget").contains(loc.formattedDataSize(qint64(4) << 30, 1)));
        QVERIFY(p.fieldText("memoryBudget").contains(loc.toString(0.25, 'g', 4)));
        QVERIFY(p.fieldText("memoryBudget").contains(QStringLiteral("RAM available")));
        QVERIFY(
            p.fieldText("memoryNote").contains(QStringLiteral("share of the memory available")));
        // The slider's value in a later view does not change the budget of the plan in force.
        v.tuning.gpuMemoryUtilization = 0.0005;
        p.setView(v);
        QVERIFY(p.fieldText("memoryBudget").contains(loc.formattedDataSize(qint64(4) << 30, 1)));
        QVERIFY(!p.fieldText("memoryBudget").contains(QStringLiteral("0.0005")));
        // The bar: four parts in plan order, each visible, KV wider than the weights.
        MemoryBar* bar = p.bar();
        QCOMPARE(bar->parts().size(), 4);
        QCOMPARE(bar->parts().at(1).bytes, m.kv_bytes);
        for (int i = 0; i < 4; ++i) {
            const auto [x0, x1] = bar->segment(i);
            QVERIFY2(x1 - x0 >= 3,
                     qPrintable(QStringLiteral("part %1: %2..%3").arg(i).arg(x0).arg(x1)));
        }
        QVERIFY(bar->segment(1).second - bar->segment(1).first >
                bar->segment(0).second - bar->segment(0).first);
        QCOMPARE(bar->segment(3).second, bar->width() - 1); // the parts fill the bar

        // Uncapped: the utilization decided; and the model's dtypes.
        m.limit = KvPoolLimit::Utilization;
        m.num_blocks = 1234;
        p.setView(v);
        QVERIFY(!p.fieldText("memoryLimit").contains(QStringLiteral("Capped")));
        QVERIFY(p.fieldText("memoryLimit").contains(QStringLiteral("gpu_memory_utilization")));
        QVERIFY(p.fieldText("memoryBlocks").contains(loc.toString(1234)));
        ModelMetadata meta;
        meta.dtypeSummary = {QStringLiteral("attention: q4_0 ×8"), QStringLiteral("mlp: q8_0 ×6")};
        p.setModel(meta);
        QVERIFY(p.fieldText("memoryDtypes").contains(QStringLiteral("attention: q4_0 ×8")));
        QVERIFY(p.fieldText("memoryDtypes").contains(QStringLiteral("mlp: q8_0 ×6")));

        // The bf16 weight cache (issue 17): none on the CPU; on CUDA its size and N of M
        // matrices, and a fifth part of the bar before Free.
        QVERIFY(p.fieldText("memoryWeightCache").contains(QStringLiteral("CUDA backend only")));
        QCOMPARE(p.bar()->parts().size(), 4);
        // The CPU's weight layout (issue 22): as stored, then the panels the runtime made.
        QVERIFY(p.fieldText("memoryWeightLayout").contains(QStringLiteral("rows, as stored")));
        m.panel_matrices = 169;
        m.panel_bytes = qint64(500) << 20;
        p.setView(v);
        QVERIFY(p.fieldText("memoryWeightLayout").contains(QStringLiteral("panels: 169 matrices")));
        QVERIFY(
            p.fieldText("memoryWeightLayout").contains(loc.formattedDataSize(m.panel_bytes, 1)));
        QCOMPARE(p.bar()->parts().size(), 4); // not a part of its own: the weights' bytes
        m.panel_matrices = 0;
        m.panel_bytes = 0;
        v.device = DeviceKind::Cuda;
        m.weight_cache_candidates = 15;
        m.weight_cache_matrices = 9;
        m.weight_cache_bytes = qint64(300) << 20;
        p.setView(v);
        QVERIFY(p.fieldText("memoryWeightCache").contains(QStringLiteral("9 of 15 matrices")));
        QVERIFY(p.fieldText("memoryWeightCache")
                    .contains(loc.formattedDataSize(m.weight_cache_bytes, 1)));
        QCOMPARE(p.bar()->parts().size(), 5);
        QCOMPARE(p.bar()->parts().at(3).bytes, m.weight_cache_bytes);
    }

    // On CUDA the executor stores the KV cache in fp16: the Memory panel says so (and nothing
    // says fp32 or RAM), and the Tuning panel's KV-cache dtype follows the backend.
    void kvDtypeFollowsTheBackend() {
        QCOMPARE(MemoryPlanText::kvDtype(KvDtype::F32), QStringLiteral("fp32"));
        QCOMPARE(MemoryPlanText::kvDtype(KvDtype::F16), QStringLiteral("fp16"));
        QCOMPARE(MemoryPlanText::device(DeviceKind::Cpu, QStringLiteral("CPU")),
                 QStringLiteral("CPU"));
        QCOMPARE(MemoryPlanText::device(DeviceKind::Cuda, QStringLiteral("NVIDIA H200")),
                 QStringLiteral("CUDA: NVIDIA H200"));

        EngineView v;
        MemoryPlan& m = v.snapshot.memory;
        m.device_bytes = qint64(141) << 30;
        m.weight_bytes = qint64(15) << 30;
        m.workspace_bytes = qint64(1) << 30;
        m.block_size = 16;
        m.kv_elem_bytes = 2;
        m.bytes_per_block = 32 << 10;
        m.num_blocks = 100000;
        m.kv_bytes = qint64(m.num_blocks) * m.bytes_per_block;
        m.limit = KvPoolLimit::Utilization;
        m.device = DeviceKind::Cuda;
        m.utilization = 0.9;
        m.base_bytes = m.device_bytes; // on CUDA utilization multiplies the GPU's memory
        m.budget_bytes = qint64(0.9 * double(m.device_bytes));
        v.device = DeviceKind::Cuda;
        v.deviceName = QStringLiteral("NVIDIA H200");
        v.kvDtype = KvDtype::F16;
        v.tuning.gpuMemoryUtilization = 0.9;

        MemoryPanel memory;
        memory.setView(v);
        QCOMPARE(memory.fieldText("memoryKvDtype"), QStringLiteral("fp16"));
        const QString device = memory.fieldText("memoryDevice");
        QVERIFY2(device.startsWith(QStringLiteral("CUDA: NVIDIA H200")), qPrintable(device));
        QVERIFY2(device.contains(QStringLiteral("GPU memory")), qPrintable(device));
        QVERIFY(!device.contains(QStringLiteral("RAM")));
        const QString note = memory.fieldText("memoryNote");
        QVERIFY2(note.contains(QStringLiteral("CUDA backend")), qPrintable(note));
        QVERIFY2(note.contains(QStringLiteral("fp16")), qPrintable(note));
        QVERIFY2(!note.contains(QStringLiteral("fp32")), qPrintable(note));

        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        TuningPanel tuning(settings);
        v.autoKvDtype = KvDtype::F16;
        v.pendingKvDtype = KvDtype::F16;
        v.supportedKvDtypes = {KvDtype::F16}; // the CUDA runner's type is fixed at load
        tuning.setView(v);
        // auto (the backend's fp16) and fp16: only the types the executor stores.
        QCOMPARE(tuning.kvDtypeCombo()->count(), 2);
        QCOMPARE(tuning.kvDtypeCombo()->currentText(), QStringLiteral("auto (fp16)"));
        QCOMPARE(tuning.kvDtypeCombo()->itemData(1).toString(), QStringLiteral("f16"));
        QVERIFY(tuning.kvDtypeCombo()->isEnabled());
        QVERIFY2(tuning.kvDtypeCombo()->toolTip().contains(QStringLiteral("CUDA backend")),
                 qPrintable(tuning.kvDtypeCombo()->toolTip()));
        QVERIFY2(tuning.kvDtypeCombo()->toolTip().contains(QStringLiteral("stored in fp16")),
                 qPrintable(tuning.kvDtypeCombo()->toolTip()));
        QVERIFY(tuning.findChild<QLabel*>(QStringLiteral("utilizationBudget"))
                    ->text()
                    .contains(QStringLiteral("GPU memory")));
        // The same panel back on the CPU backend.
        v.device = DeviceKind::Cpu;
        v.deviceName = QStringLiteral("CPU");
        v.kvDtype = v.autoKvDtype = v.pendingKvDtype = KvDtype::F32;
        v.supportedKvDtypes = QVector<KvDtype>(std::begin(kAllKvDtypes), std::end(kAllKvDtypes));
        tuning.setView(v);
        QCOMPARE(tuning.kvDtypeCombo()->currentText(), QStringLiteral("auto (fp32)"));
        QCOMPARE(tuning.kvDtypeCombo()->count(), 7);
        QVERIFY(tuning.kvDtypeCombo()->toolTip().contains(QStringLiteral("CPU backend")));
        QVERIFY(tuning.findChild<QLabel*>(QStringLiteral("utilizationBudget"))
                    ->text()
                    .contains(QStringLiteral("RAM available")));
        QVERIFY(tuning.utilizationSlider()->toolTip().contains(QStringLiteral("on the CPU")));
        memory.setView(v);
        QCOMPARE(memory.fieldText("memoryKvDtype"), QStringLiteral("fp32"));
        QVERIFY(memory.fieldText("memoryNote").contains(QStringLiteral("fp32")));
    }

    // The KV-cache dtype: every type named, each with what it costs; a choice is emitted and
    // saved; a refused one goes back to the type in force with the reason under the box; the
    // Memory panel shows the pool before and after a switch (and a pending one).
    void kvDtypeSwitchShowsBeforeAndAfter() {
        QStringList names;
        for (KvDtype t : kAllKvDtypes) {
            names << MemoryPlanText::kvDtype(t);
            QVERIFY(!MemoryPlanText::kvDtypeCost(t).isEmpty());
        }
        QCOMPARE(names, (QStringList{"fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8"}));
        QVERIFY(MemoryPlanText::kvDtypeCost(KvDtype::Int8).contains("scale per token"));
        QVERIFY(MemoryPlanText::kvDtypeCost(KvDtype::Fp8E4M3).contains("calibrated"));
        QVERIFY(MemoryPlanText::kvDtypeCost(KvDtype::Fp8E5M2).contains("calibrated"));
        QVERIFY(MemoryPlanText::kvDtypeCost(KvDtype::BF16).startsWith("2 bytes"));

        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        EngineView v;
        MemoryPlan& m = v.snapshot.memory;
        m.block_size = 16;
        m.bytes_per_block = 36 << 10;
        m.num_blocks = 289;
        m.kv_bytes = qint64(m.num_blocks) * m.bytes_per_block;
        m.device_bytes = qint64(8) << 30;
        m.limit = KvPoolLimit::Utilization;
        v.device = DeviceKind::Cpu;
        v.supportedKvDtypes = QVector<KvDtype>(std::begin(kAllKvDtypes), std::end(kAllKvDtypes));
        {
            TuningPanel p(settings);
            p.setView(v);
            QComboBox* c = p.kvDtypeCombo();
            QCOMPARE(c->count(), 7);
            QCOMPARE(c->itemData(0).toString(), QStringLiteral("auto"));
            for (int i = 1; i < c->count(); ++i) {
                QCOMPARE(c->itemText(i), names[i - 1]);
                QCOMPARE(c->itemData(i, Qt::ToolTipRole).toString(),
                         MemoryPlanText::kvDtypeCost(kAllKvDtypes[i - 1]));
            }
            QSignalSpy engine(&p, &TuningPanel::tuningChanged);
            c->setCurrentIndex(c->findData(QStringLiteral("int8")));
            QCOMPARE(engine.size(), 1);
            QCOMPARE(engine.first().first().value<EngineTuning>().kvCacheDtype,
                     QStringLiteral("int8"));
            QVERIFY(c->toolTip().contains(MemoryPlanText::kvDtypeCost(KvDtype::Int8)));
            // Pending until the engine's next step: the note says so.
            v.pendingKvDtype = KvDtype::Int8;
            p.setView(v);
            QVERIFY2(p.kvDtypeNote()->text().contains(QStringLiteral("Switching to int8")),
                     qPrintable(p.kvDtypeNote()->text()));
        }
        {
            TuningPanel p(settings); // saved
            QCOMPARE(p.kvDtypeCombo()->currentData().toString(), QStringLiteral("int8"));
            QCOMPARE(p.tuning().kvCacheDtype, QStringLiteral("int8"));
            // Refused: back to the type in force, the reason under the box, saved so.
            v.pendingKvDtype = KvDtype::F32;
            v.tuning.kvCacheDtype = QStringLiteral("auto");
            v.refusedKvDtype = QStringLiteral("int8");
            v.kvDtypeError = QStringLiteral("The KV cache stays f32: no room");
            p.setView(v);
            QCOMPARE(p.kvDtypeCombo()->currentData().toString(), QStringLiteral("auto"));
            QVERIFY(p.kvDtypeNote()->text().contains(v.kvDtypeError));
            QCOMPARE(settings.engineTuning().kvCacheDtype, QStringLiteral("auto"));
        }

        MemoryPanel memory;
        memory.setView(v);
        QVERIFY(memory.fieldText("memoryNote").contains(v.kvDtypeError));
        QVERIFY(memory.fieldText("memoryKvSwitch").startsWith(QStringLiteral("none")));
        const QLocale loc = memory.locale();
        v.kvDtypeError.clear();
        v.refusedKvDtype.clear();
        v.pendingKvDtype = KvDtype::Int8;
        memory.setView(v);
        QVERIFY2(memory.fieldText("memoryKvSwitch").startsWith(QStringLiteral("switching to int8")),
                 qPrintable(memory.fieldText("memoryKvSwitch")));
        // After the switch: int8 1,088 blocks (17,408 tokens), was fp32 289 blocks (4,624).
        v.kvDtype = KvDtype::Int8;
        m.kv_dtype = KvDtype::Int8;
        m.bytes_per_block = 9 << 10;
        m.num_blocks = 1088;
        m.kv_bytes = qint64(m.num_blocks) * m.bytes_per_block;
        v.kvSwitch = {true, KvDtype::F32, 289, 16, qint64(36) << 10};
        memory.setView(v);
        const QString sw = memory.fieldText("memoryKvSwitch");
        const QString expected =
            QStringLiteral("int8: %1 blocks × 16 tokens = %2 tokens (%3 per block), was fp32: "
                           "%4 blocks × 16 tokens = %5 tokens (%6 per block)")
                .arg(loc.toString(1088), loc.toString(17408), loc.formattedDataSize(9 << 10, 1),
                     loc.toString(289), loc.toString(4624), loc.formattedDataSize(36 << 10, 1));
        QCOMPARE(sw, expected);
        QCOMPARE(memory.fieldText("memoryKvDtype"), QStringLiteral("int8"));
        QCOMPARE(memory.findChild<QLabel*>(QStringLiteral("memoryKvDtype"))->toolTip(),
                 MemoryPlanText::kvDtypeCost(KvDtype::Int8));
        QVERIFY(memory.fieldText("memoryBlocks").contains(loc.toString(1088)));
        QVERIFY(memory.fieldText("memoryCapacity").contains(loc.toString(17408)));
        // fp8: how its scales were found is on the panel.
        v.kvDtype = v.pendingKvDtype = KvDtype::Fp8E4M3;
        v.kvCalibration = QStringLiteral("fp8 scales calibrated per layer");
        memory.setView(v);
        QVERIFY(memory.fieldText("memoryNote").contains(v.kvCalibration));
    }

    // What decided the pool's size, in words: each limit has its own sentence, the fallback
    // carries the plan's reason, and both panels show it.
    void planLimitIsExplained() {
        MemoryPlan m;
        m.num_blocks = 64;
        m.block_size = 16;
        m.cap_blocks = 512;
        m.kv_bytes = 64 << 16;
        QSet<QString> texts;
        for (KvPoolLimit l : {KvPoolLimit::Blocks, KvPoolLimit::KvBytes, KvPoolLimit::Utilization,
                              KvPoolLimit::Available, KvPoolLimit::Need, KvPoolLimit::Context,
                              KvPoolLimit::Fallback, KvPoolLimit::Live}) {
            m.limit = l;
            const QString t = MemoryPlanText::limit(m, 8);
            QVERIFY2(!t.isEmpty(), kv_pool_limit_name(l));
            texts.insert(t);
        }
        QCOMPARE(texts.size(), 8);
        m.limit = KvPoolLimit::Context;
        QCOMPARE(MemoryPlanText::limit(m, 8),
                 QStringLiteral("Capped: 8 sequences of the full context never use more than "
                                "512 blocks."));
        m.limit = KvPoolLimit::Available;
        QVERIFY(MemoryPlanText::limit(m, 8).contains(QStringLiteral("free")));

        EngineView v;
        v.snapshot.memory = m;
        v.snapshot.memory.limit = KvPoolLimit::Fallback;
        v.snapshot.memory.note = "memory plan: 0.5 x 0 MiB leaves 0 MiB for the KV cache";
        v.tuning.maxNumSeqs = 8;
        MemoryPanel memory;
        memory.setView(v);
        QVERIFY(memory.fieldText("memoryLimit").contains(QStringLiteral("small pool")));
        QVERIFY(memory.fieldText("memoryLimit").contains(QStringLiteral("leaves 0 MiB")));
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        TuningPanel tuning(settings);
        tuning.setView(v);
        QVERIFY2(tuning.planLabel()->text().contains(QStringLiteral("leaves 0 MiB")),
                 qPrintable(tuning.planLabel()->text()));
        // A failed re-plan is said apart from the limit.
        v.replanError = QStringLiteral("engine: KV cache of 9 blocks: out of memory");
        memory.setView(v);
        tuning.setView(v);
        QVERIFY(memory.fieldText("memoryNote").contains(v.replanError));
        QVERIFY(tuning.planLabel()->text().contains(v.replanError));
    }

    void enginePanelFeedsItsTabs() {
        EnginePanel p;
        p.resize(700, 600);
        p.show();
        p.showTab(EnginePanel::ChartsTab);
        QVERIFY(QTest::qWaitForWindowExposed(&p));
        EngineView v = viewAt(1000, 42, 3, 0.5);
        v.snapshot.memory.num_blocks = 77;
        v.snapshot.memory.block_size = 16;
        v.snapshot.memory.device_bytes = 1 << 30;
        p.setView(v);
        QCOMPARE(p.charts()->pointCount(ChartsPanel::GenerationTps), 1);
        QCOMPARE(p.charts()->series(ChartsPanel::GenerationTps)->count(), 1);
        QVERIFY(p.memory()->fieldText("memoryBlocks").contains(QStringLiteral("77")));
    }

    void sliderMapping() {
        QCOMPARE(TuningPanel::sliderPosition(1.0), TuningPanel::kSliderSteps);
        QCOMPARE(TuningPanel::sliderPosition(EngineTuning::kMinUtilization), 0);
        int last = -1;
        for (double u : {0.0005, 0.001, 0.002, 0.01, 0.02, 0.1, 0.5, 0.9, 1.0}) {
            const int pos = TuningPanel::sliderPosition(u);
            QVERIFY(pos > last);
            last = pos;
            QVERIFY(std::abs(TuningPanel::utilizationAt(pos) - u) <= u * 0.02 + 0.0005);
        }
    }

    void tuningPersistsAndResets() {
        QTemporaryDir dir;
        const QString ini = dir.filePath("settings.ini");
        {
            AppSettings settings(ini);
            TuningPanel p(settings);
            QCOMPARE(p.tuning(), EngineTuning{});
            QSignalSpy engine(&p, &TuningPanel::tuningChanged);
            QSignalSpy sampling(&p, &TuningPanel::samplingChanged);
            p.utilizationSpin()->setValue(0.05);
            QCOMPARE(p.utilizationSlider()->value(), TuningPanel::sliderPosition(0.05));
            p.maxNumSeqsSpin()->setValue(8);
            p.maxBatchedTokensSpin()->setValue(1024);
            p.blockSizeCombo()->setCurrentIndex(p.blockSizeCombo()->findData(32));
            p.temperatureSpin()->setValue(1.3);
            p.topKSpin()->setValue(7);
            p.minPSpin()->setValue(0.05);
            p.frequencySpin()->setValue(0.5);
            QCOMPARE(engine.size(), 4);
            QCOMPARE(sampling.size(), 4);
            const auto last = engine.last().first().value<EngineTuning>();
            QCOMPARE(last.gpuMemoryUtilization, 0.05);
            QCOMPARE(last.blockSize, 32);
            // Moving the slider moves the spin box and emits the new value.
            p.utilizationSlider()->setValue(TuningPanel::sliderPosition(0.2));
            QCOMPARE(p.utilizationSpin()->value(),
                     TuningPanel::utilizationAt(TuningPanel::sliderPosition(0.2)));
            p.utilizationSpin()->setValue(0.05);
            settings.sync();
        }
        {
            AppSettings settings(ini); // a new instance reads the file
            TuningPanel p(settings);
            QCOMPARE(p.tuning().gpuMemoryUtilization, 0.05);
            QCOMPARE(p.tuning().maxNumSeqs, 8);
            QCOMPARE(p.tuning().maxNumBatchedTokens, 1024);
            QCOMPARE(p.tuning().blockSize, 32);
            QCOMPARE(p.maxNumSeqsSpin()->value(), 8);
            QCOMPARE(p.blockSizeCombo()->currentData().toInt(), 32);
            QCOMPARE(p.temperatureSpin()->value(), 1.3);
            QCOMPARE(settings.defaultSampling().topK, 7);
            QCOMPARE(settings.defaultSampling().minP, 0.05);
            QCOMPARE(settings.defaultSampling().frequencyPenalty, 0.5);

            QSignalSpy engine(&p, &TuningPanel::tuningChanged);
            p.resetButton()->click();
            QCOMPARE(engine.size(), 1);
            QCOMPARE(p.tuning(), EngineTuning{});
            QCOMPARE(p.sampling(), SamplingSettings{});
            QCOMPARE(p.maxNumSeqsSpin()->value(), EngineTuning{}.maxNumSeqs);
            QCOMPARE(p.temperatureSpin()->value(), SamplingSettings{}.temperature);
            settings.sync();
        }
        AppSettings settings(ini);
        QCOMPARE(settings.engineTuning(), EngineTuning{});
        QCOMPARE(settings.defaultSampling(), SamplingSettings{});
    }

    // Speculative tokens: 0 (off) .. 16, applied through tuningChanged and saved; the note shows
    // the acceptance the engine reports.
    void speculativeTokens() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        TuningPanel p(settings);
        QSpinBox* k = p.speculativeSpin();
        QVERIFY(k->isEnabled());
        QCOMPARE(k->minimum(), 0);
        QCOMPARE(k->maximum(), int(kMaxSpeculativeTokens));
        QCOMPARE(k->value(), 0);
        QCOMPARE(k->text(), QStringLiteral("off"));
        QVERIFY(p.speculativeNote()->text().startsWith(QStringLiteral("Off")));
        QSignalSpy engine(&p, &TuningPanel::tuningChanged);
        k->setValue(4);
        QCOMPARE(engine.size(), 1);
        QCOMPARE(engine.first().first().value<EngineTuning>().numSpeculativeTokens, 4);
        QCOMPARE(settings.engineTuning().numSpeculativeTokens, 4);
        EngineView v;
        v.snapshot.speculative.num_drafts = 10;
        v.snapshot.speculative.num_draft_tokens = 40;
        v.snapshot.speculative.num_accepted_tokens = 30;
        p.setView(v);
        const QString note = p.speculativeNote()->text();
        QVERIFY2(note.contains(QStringLiteral("30 of 40")) &&
                     note.contains(QStringLiteral("75%")) && note.contains(QStringLiteral("4.00")),
                 qPrintable(note));
        TuningPanel again(settings); // the saved value comes back
        QCOMPARE(again.speculativeSpin()->value(), 4);
    }

    // The engine refuses a utilization: the slider and the spin box go back to the value in
    // force (and the settings keep it), the refusal with the smallest working value is shown,
    // and the budget text is the plan's, never the slider's.
    void refusedUtilizationPutsTheSliderBack() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        TuningPanel p(settings);
        EngineView v;
        v.device = DeviceKind::Cpu;
        v.tuning.gpuMemoryUtilization = 0.5;
        v.snapshot.memory.num_blocks = 366;
        v.snapshot.memory.block_size = 16;
        v.snapshot.memory.utilization = 0.5;
        v.snapshot.memory.base_bytes = qint64(20) << 30;
        v.snapshot.memory.budget_bytes = qint64(10) << 30;
        v.snapshot.memory.limit = KvPoolLimit::Utilization;
        p.setView(v);
        QVERIFY2(p.findChild<QLabel*>("utilizationBudget")->text().contains("0.5 ×"),
                 qPrintable(p.findChild<QLabel*>("utilizationBudget")->text()));
        QSignalSpy engine(&p, &TuningPanel::tuningChanged);
        p.utilizationSlider()->setValue(0); // 0.0005
        QCOMPARE(engine.size(), 1);
        QCOMPARE(p.utilizationSpin()->value(), 0.0005);
        // The slider's value is not the budget until the engine plans with it.
        QVERIFY(p.findChild<QLabel*>("utilizationBudget")->text().contains("0.5 ×"));
        v.utilizationRefusal = QStringLiteral(
            "GPU memory utilization 0.0005 is refused: the running requests need 20 KV "
            "block(s) (7.5 MiB). The smallest value that works now is 0.0234.");
        v.refusedUtilization = 0.0005;
        p.setView(v);
        QCOMPARE(p.utilizationSpin()->value(), 0.5);
        QCOMPARE(p.utilizationSlider()->value(), TuningPanel::sliderPosition(0.5));
        QCOMPARE(p.tuning().gpuMemoryUtilization, 0.5);
        QCOMPARE(settings.engineTuning().gpuMemoryUtilization, 0.5);
        QCOMPARE(engine.size(), 1); // putting it back is not a new change
        QVERIFY(p.planLabel()->text().contains(QStringLiteral("smallest value that works now is "
                                                              "0.0234")));
        // A later view with the same refusal after the user moved on does not move it back.
        p.utilizationSpin()->setValue(0.3);
        p.setView(v);
        QCOMPARE(p.utilizationSpin()->value(), 0.3);
    }

    void disabledSettingsSayWhy() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        TuningPanel p(settings);
        // Before a model: auto and every type (the choice applies at load).
        QVERIFY(p.kvDtypeCombo()->isEnabled());
        QCOMPARE(p.kvDtypeCombo()->count(), 1 + int(std::size(kAllKvDtypes)));
        QVERIFY(!p.kvDtypeCombo()->toolTip().isEmpty());
        QVERIFY(p.kvDtypeNote()->text().contains(QStringLiteral("model is loaded")));
        // The block sizes are the engine's.
        QCOMPARE(p.blockSizeCombo()->count(), int(kKvBlockSizes.size()));
        for (int i = 0; i < p.blockSizeCombo()->count(); ++i)
            QCOMPARE(p.blockSizeCombo()->itemData(i).toInt(), kKvBlockSizes[size_t(i)]);
        QVERIFY(p.blockSizeCombo()->isEnabled());
        EngineView busy;
        busy.snapshot.num_running = 2;
        busy.snapshot.memory.num_blocks = 100;
        busy.snapshot.memory.block_size = 16;
        busy.snapshot.memory.limit = KvPoolLimit::Context;
        busy.snapshot.memory.cap_blocks = 100;
        p.setView(busy);
        QVERIFY(!p.blockSizeCombo()->isEnabled());
        QVERIFY(p.blockSizeCombo()->toolTip().contains(QStringLiteral("idle")));
        QVERIFY(p.planLabel()->text().contains(QStringLiteral("Capped")));
        busy.snapshot.num_running = 0;
        p.setView(busy);
        QVERIFY(p.blockSizeCombo()->isEnabled());

        // Dragging the utilization slider: the spin box follows, the engine gets the value once
        // the slider is released.
        QSignalSpy engine(&p, &TuningPanel::tuningChanged);
        const int pos = TuningPanel::sliderPosition(0.3);
        p.utilizationSlider()->setSliderDown(true);
        p.utilizationSlider()->setSliderPosition(pos - 40);
        p.utilizationSlider()->setSliderPosition(pos);
        QCOMPARE(p.utilizationSpin()->value(), TuningPanel::utilizationAt(pos));
        QCOMPARE(engine.size(), 0);
        p.utilizationSlider()->setSliderDown(false);
        QCOMPARE(engine.size(), 1);
        QCOMPARE(engine.first().first().value<EngineTuning>().gpuMemoryUtilization,
                 TuningPanel::utilizationAt(pos));
    }
};

QTEST_MAIN(TestUiEnginePanels)
#include "tst_ui_engine_panels.moc"
