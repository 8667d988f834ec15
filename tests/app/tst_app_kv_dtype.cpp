// The KV-cache element type in the engine worker (EngineTuning::kvCacheDtype): the CPU's auto
// is f16; switched live while several chat requests run (f32 -> int8 -> fp8_e4m3), every request
// finishes with its full output and keeps the text it streamed before the switch; the views show
// the new type, bytes per block and block count (same budget, more blocks) and the pool before the
// switch; fp8 is calibrated; the choice applies at the next load; an unknown name means auto.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "app/services/engine_worker.h"
#include "engine/model/model_writer.h"
#include "tests/app/worker_relay.h"

using namespace llmwb;

class TestAppKvDtype : public QObject {
    Q_OBJECT

  private:
    static constexpr int kRequests = 4;
    static constexpr int kMaxTokens = 400;
    static constexpr int kF32Blocks = 200;

    QTemporaryDir dir_;
    QString modelPath_;
    QThread thread_;
    EngineWorker* worker_ = nullptr;
    WorkerRelay relay_;
    MemoryPlan f32_; // the plan in f32 on the fixed device (initTestCase)
    EngineTuning tuning_;

    static GenerationRequest request(quint64 id) {
        GenerationRequest r;
        r.requestId = id;
        r.conversationId = 900 + qint64(id); // the text depends on id % 100 only
        r.messages = {
            {QStringLiteral("user"),
             QStringLiteral("Question %1: how does a paged KV cache work?").arg(id % 100)}};
        r.sampling.temperature = 0.0;
        r.sampling.maxTokens = kMaxTokens;
        return r;
    }

    void setTuning(const EngineTuning& t) {
        QMetaObject::invokeMethod(worker_, "setTuning", Qt::QueuedConnection,
                                  Q_ARG(llmwb::EngineTuning, t));
    }

    template <class Pred>
    EngineView waitView(Pred pred, const std::function<void()>& action = {},
                        int timeoutMs = 60000) {
        QSignalSpy views(&relay_, &WorkerRelay::engineView);
        if (action)
            action();
        QElapsedTimer t;
        t.start();
        int seen = 0;
        while (t.elapsed() < timeoutMs) {
            if (views.size() == seen && !views.wait(1000))
                continue;
            for (; seen < views.size(); ++seen) {
                const auto v = views.at(seen).first().value<EngineView>();
                if (pred(v))
                    return v;
            }
        }
        return {};
    }

    void generateAll(quint64 firstId) {
        for (int i = 0; i < kRequests; ++i)
            QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                      Q_ARG(llmwb::GenerationRequest, request(firstId + i)));
    }

    static QString textOf(const QSignalSpy& tokens, quint64 id, int upTo = -1) {
        QString text;
        for (int i = 0; i < tokens.size() && (upTo < 0 || i < upTo); ++i)
            if (tokens.at(i).at(0).value<quint64>() == id)
                text += tokens.at(i).at(2).toString();
        return text;
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        ModelWriterSpec spec; // 2 layers, 2 KV heads of 16: f32 8 KiB, int8 2.5 KiB per block
        spec.seed = 21;
        spec.max_position = 4096; // the CPU's cap (4 contexts, 1,024 blocks) stays out of the way
        modelPath_ = dir_.filePath("tiny.gguf");
        Status st = write_model(spec, modelPath_.toStdString());
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        worker_ = startRelayedWorker(thread_, relay_, 2);

        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        QSignalSpy views(&relay_, &WorkerRelay::engineView);
        QMetaObject::invokeMethod(worker_, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, modelPath_));
        QVERIFY(waitFor(loaded, 1, 30000));
        QVERIFY(waitFor(views, 1, 5000));
        const auto v = views.last().first().value<EngineView>();
        // The CPU's own type ("auto"): f16.
        QCOMPARE(v.kvDtype, KvDtype::F16);
        QCOMPARE(v.autoKvDtype, KvDtype::F16);
        QCOMPARE(v.pendingKvDtype, KvDtype::F16);
        QVERIFY(!v.kvSwitch.valid);
        // The CPU stores every type.
        QCOMPARE(v.supportedKvDtypes.size(), qsizetype(std::size(kAllKvDtypes)));
        const MemoryPlan f16 = v.snapshot.memory;
        QCOMPARE(f16.kv_elem_bytes, 2);
        QVERIFY(f16.bytes_per_block > 0);

        // From here f32 on a fixed "device" whose KV budget holds kF32Blocks f32 blocks exactly.
        tuning_.maxNumSeqs = 16;
        tuning_.gpuMemoryUtilization = 1.0;
        tuning_.kvCacheDtype = QStringLiteral("f32");
        tuning_.deviceBytes =
            f16.weight_bytes + f16.workspace_bytes + kF32Blocks * 2 * f16.bytes_per_block;
        const EngineView fixed = waitView(
            [](const EngineView& v) {
                return v.kvDtype == KvDtype::F32 && v.snapshot.memory.num_blocks == kF32Blocks;
            },
            [&] { setTuning(tuning_); });
        QCOMPARE(fixed.snapshot.memory.num_blocks, kF32Blocks);
        QCOMPARE(fixed.snapshot.memory.limit, KvPoolLimit::Utilization);
        f32_ = fixed.snapshot.memory;
        QCOMPARE(f32_.bytes_per_block, 2 * f16.bytes_per_block);
        QCOMPARE(f32_.kv_elem_bytes, 4);
    }

    void cleanupTestCase() {
        worker_->stopAll();
        thread_.quit();
        QVERIFY(thread_.wait(10000));
    }

    // Names from settings files are external input: aliases take their canonical name, unknown
    // names mean auto.
    void tuningNamesAreNormalized() {
        EngineTuning t;
        QCOMPARE(t.kvCacheDtype, QStringLiteral("auto"));
        t.kvCacheDtype = QStringLiteral(" FP8 ");
        QCOMPARE(t.clamped().kvCacheDtype, QStringLiteral("fp8_e4m3"));
        t.kvCacheDtype = QStringLiteral("half");
        QCOMPARE(t.clamped().kvCacheDtype, QStringLiteral("f16"));
        t.kvCacheDtype = QStringLiteral("int4");
        QCOMPARE(t.clamped().kvCacheDtype, QStringLiteral("auto"));
        t.kvCacheDtype = QString();
        QCOMPARE(t.clamped().kvCacheDtype, QStringLiteral("auto"));
    }

    // Four chats run in f32; the type switches to int8, then to fp8_e4m3, while they run. Every
    // request finishes with its whole answer, none fails, and what each streamed before the
    // first switch (computed in f32) is the start of what the same request streams alone in
    // f32: nothing streamed was lost or replaced.
    void switchUnderLoad() {
        // The reference: the same requests in f32, undisturbed.
        QSignalSpy refTokens(&relay_, &WorkerRelay::token);
        QSignalSpy refDone(&relay_, &WorkerRelay::finished);
        generateAll(1);
        QVERIFY(waitFor(refDone, kRequests, 120000));

        QSignalSpy tokens(&relay_, &WorkerRelay::token);
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        QSignalSpy failed(&relay_, &WorkerRelay::failed);
        generateAll(101);
        // Queued behind the requests: they are live (and have streamed some tokens) when it
        // applies.
        const EngineView running = waitView([&](const EngineView& v) {
            return v.snapshot.num_running == kRequests && tokens.size() >= 2 * kRequests;
        });
        QCOMPARE(running.snapshot.num_running, kRequests);
        QCOMPARE(finished.size(), 0);
        const int beforeSwitch = int(tokens.size());
        EngineTuning t = tuning_;
        t.kvCacheDtype = QStringLiteral("int8");
        const EngineView int8 = waitView(
            [](const EngineView& v) { return v.kvDtype == KvDtype::Int8; }, [&] { setTuning(t); });
        QCOMPARE(int8.kvDtype, KvDtype::Int8);
        QCOMPARE(int8.snapshot.memory.kv_dtype, KvDtype::Int8);
        QCOMPARE(int8.tuning.kvCacheDtype, QStringLiteral("int8"));
        QVERIFY2(int8.kvDtypeError.isEmpty(), qPrintable(int8.kvDtypeError));
        // Same bytes, smaller blocks: (16 x 1 + 4) bytes per token and head instead of 16 x 4.
        const MemoryPlan& m8 = int8.snapshot.memory;
        QCOMPARE(m8.bytes_per_block, f32_.bytes_per_block * 20 / 64);
        QCOMPARE(m8.num_blocks, int(kF32Blocks * f32_.bytes_per_block / m8.bytes_per_block));
        QCOMPARE(int(int8.snapshot.blocks.size()), m8.num_blocks); // the KV map's blocks
        QVERIFY(int8.kvSwitch.valid);
        QCOMPARE(int8.kvSwitch.from, KvDtype::F32);
        QCOMPARE(int8.kvSwitch.blocks, kF32Blocks);
        QCOMPARE(int8.kvSwitch.bytesPerBlock, f32_.bytes_per_block);
        QVERIFY(int8.snapshot.total_preemptions >= 1); // the running requests were recomputed
        QCOMPARE(failed.size(), 0);

        if (finished.size() < kRequests) {
            t.kvCacheDtype = QStringLiteral("fp8_e4m3");
            const EngineView fp8 =
                waitView([](const EngineView& v) { return v.kvDtype == KvDtype::Fp8E4M3; },
                         [&] { setTuning(t); });
            QCOMPARE(fp8.kvDtype, KvDtype::Fp8E4M3);
            const MemoryPlan& m = fp8.snapshot.memory;
            QCOMPARE(m.bytes_per_block, f32_.bytes_per_block / 4);
            QCOMPARE(m.num_blocks, kF32Blocks * 4);
            QCOMPARE(fp8.kvSwitch.from, KvDtype::Int8);
            QCOMPARE(fp8.kvSwitch.blocks, m8.num_blocks);
            // Calibrated (not the fallback scale 1.0).
            QVERIFY2(fp8.kvCalibration.contains(QStringLiteral("calibrated")),
                     qPrintable(fp8.kvCalibration));
        } else {
            QWARN("the requests finished before the second switch");
        }

        QVERIFY(waitFor(finished, kRequests, 180000));
        QCOMPARE(failed.size(), 0);
        for (const auto& a : finished) {
            const auto s = a.first().value<GenerationStats>();
            QCOMPARE(s.finishReason, FinishReason::Length);
            QCOMPARE(s.completionTokens, qint64(kMaxTokens));
        }
        for (int i = 0; i < kRequests; ++i) {
            const QString pre = textOf(tokens, 101 + quint64(i), beforeSwitch);
            const QString ref = textOf(refTokens, 1 + quint64(i));
            const QString all = textOf(tokens, 101 + quint64(i));
            QVERIFY(!pre.isEmpty());
            QVERIFY2(ref.startsWith(pre), qPrintable(pre + QStringLiteral(" | ") + ref));
            QVERIFY(all.startsWith(pre));
            QVERIFY(all.size() > pre.size());
        }
    }

    // A benchmark after the switches runs in the type in force, and its report says so (the
    // environment and each run's engine settings).
    void benchReportsTheTypeInForce() {
        EngineTuning t = tuning_;
        t.kvCacheDtype = QStringLiteral("int8");
        const EngineView v = waitView(
            [](const EngineView& v) {
                return v.kvDtype == KvDtype::Int8 && v.snapshot.num_running == 0;
            },
            [&] { setTuning(t); });
        QCOMPARE(v.kvDtype, KvDtype::Int8);
        BenchPlan plan;
        plan.id = 1;
        plan.workload.numPrompts = 3;
        plan.workload.inputLen = 12;
        plan.workload.outputLen = 6;
        QSignalSpy runs(&relay_, &WorkerRelay::benchRunFinished);
        QSignalSpy done(&relay_, &WorkerRelay::benchFinished);
        QMetaObject::invokeMethod(worker_, "runBenchmark", Qt::QueuedConnection,
                                  Q_ARG(llmwb::BenchPlan, plan));
        QVERIFY(waitFor(done, 1, 60000));
        QVERIFY2(done.first().at(1).toString().isEmpty(),
                 qPrintable(done.first().at(1).toString()));
        QVERIFY(runs.size() >= 1);
        for (const auto& a : runs) {
            const auto o = a.first().value<BenchRunOutcome>();
            QCOMPARE(o.environment["kv_dtype"].get<std::string>(), std::string("int8"));
            QCOMPARE(o.run.settings["engine"]["kv_cache_dtype"].get<std::string>(),
                     std::string("int8"));
        }
    }

    // The choice applies at the next load (fp8 calibrated first), and "auto" brings the
    // backend's own type (f16) back, with twice f32's blocks in the same budget.
    void appliesAtLoadAndBack() {
        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        EngineTuning t = tuning_;
        t.kvCacheDtype = QStringLiteral("fp8_e5m2");
        setTuning(t);
        const EngineView v = waitView(
            [](const EngineView& v) { return v.kvDtype == KvDtype::Fp8E5M2 && !v.kvSwitch.valid; },
            [&] {
                QMetaObject::invokeMethod(worker_, "loadModel", Qt::QueuedConnection,
                                          Q_ARG(QString, modelPath_));
            });
        QVERIFY(waitFor(loaded, 1, 30000));
        QCOMPARE(v.kvDtype, KvDtype::Fp8E5M2);
        QCOMPARE(v.snapshot.memory.kv_dtype, KvDtype::Fp8E5M2);
        QCOMPARE(v.snapshot.memory.num_blocks, kF32Blocks * 4);
        QVERIFY2(v.kvCalibration.contains(QStringLiteral("calibrated")),
                 qPrintable(v.kvCalibration));

        t.kvCacheDtype = QStringLiteral("auto");
        const EngineView back = waitView(
            [](const EngineView& v) { return v.kvDtype == KvDtype::F16; }, [&] { setTuning(t); });
        QCOMPARE(back.snapshot.memory.num_blocks, kF32Blocks * 2);
        QCOMPARE(back.kvSwitch.from, KvDtype::Fp8E5M2);
        QCOMPARE(back.kvSwitch.blocks, kF32Blocks * 4);
        QVERIFY(back.kvCalibration.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestAppKvDtype)
#include "tst_app_kv_dtype.moc"
