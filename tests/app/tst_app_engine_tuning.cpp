// The engine worker's live tuning and loading: the pool from the tuning (capped on a large
// "device"), utilization lowered during a load test re-plans the pool while every request
// finishes with its full output, block-size changes rebuild the engine when idle (and wait while
// busy), loading reports its stages, and a cancelled load leaves the previous model loaded.
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "app/services/app_settings.h"
#include "app/services/engine_worker.h"
#include "engine/model/model_writer.h"
#include "engine/serving/memory_plan.h"
#include "tests/app/worker_relay.h"

using namespace llmwb;

class TestAppEngineTuning : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString modelPath_, otherPath_;
    ModelConfig config_; // of modelPath_
    // The weights and the workspace the engine plans for these limits (the workspace follows
    // max_num_batched_tokens and max_num_seqs when they change: Engine::set_limits).
    qint64 fixedBytes(const MemoryPlan& m, const EngineTuning& t) const {
        return m.weight_bytes +
               estimate_workspace_bytes(config_, t.maxNumBatchedTokens, t.maxNumSeqs);
    }
    QThread thread_;
    EngineWorker* worker_ = nullptr;
    WorkerRelay relay_; // spies listen here (see worker_relay.h)
    MemoryPlan plan_;   // of the first load

    static GenerationRequest request(quint64 id, int maxTokens) {
        GenerationRequest r;
        r.requestId = id;
        r.conversationId = 500 + qint64(id);
        r.messages = {{QStringLiteral("user"), QStringLiteral("Tell me about paged attention")}};
        r.sampling.temperature = 0.0;
        r.sampling.maxTokens = maxTokens;
        return r;
    }

    void setTuning(const EngineTuning& t) {
        QMetaObject::invokeMethod(worker_, "setTuning", Qt::QueuedConnection,
                                  Q_ARG(llmwb::EngineTuning, t));
    }

    // Runs `action`, then waits for a view that satisfies pred; returns it (or a default view
    // on timeout).
    template <class Pred>
    EngineView waitView(Pred pred, const std::function<void()>& action = {},
                        int timeoutMs = 30000) {
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

    // Runs one generation; returns its streamed text and stats.
    QPair<QString, GenerationStats> generateOne(quint64 id, int maxTokens) {
        QSignalSpy tokens(&relay_, &WorkerRelay::token);
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(id, maxTokens)));
        if (!waitFor(finished, 1, 30000))
            return {};
        QString text;
        for (const auto& a : tokens)
            text += a.at(2).toString();
        return {text, finished.first().first().value<GenerationStats>()};
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        ModelWriterSpec spec;
        spec.seed = 11;
        spec.max_position = 1024;
        modelPath_ = dir_.filePath("tiny.gguf");
        auto cfg = resolve_writer_config(spec);
        QVERIFY(cfg.ok());
        config_ = *cfg;
        Status st = write_model(spec, modelPath_.toStdString());
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        spec.seed = 12;
        spec.num_layers = 3;
        otherPath_ = dir_.filePath("other.gguf");
        st = write_model(spec, otherPath_.toStdString());
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());

        worker_ = startRelayedWorker(thread_, relay_, 2);
    }

    void cleanupTestCase() {
        worker_->stopAll();
        thread_.quit();
        QVERIFY(thread_.wait(10000));
    }

    // The default tuning on this machine's RAM: the pool is capped at what max_num_seqs
    // sequences of the full context can use, and the loading stages are reported in order.
    void loadsWithStagesAndACappedPool() {
        QSignalSpy progress(&relay_, &WorkerRelay::loadProgress);
        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        QSignalSpy views(&relay_, &WorkerRelay::engineView);
        EngineTuning t;
        t.gpuMemoryUtilization = 0.5;
        t.maxNumSeqs = 4;
        setTuning(t);
        QMetaObject::invokeMethod(worker_, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, modelPath_));
        QVERIFY(waitFor(loaded, 1, 30000));
        QVERIFY(progress.size() >= 5);
        int last = -1;
        for (const auto& a : progress) {
            QVERIFY(a.at(0).toInt() > last);
            last = a.at(0).toInt();
            QVERIFY(!a.at(1).toString().isEmpty());
        }
        QCOMPARE(last, 100);
        QVERIFY(waitFor(views, 1, 5000));
        const auto v = views.last().first().value<EngineView>();
        // 4 sequences x 1024 tokens / 16 per block; half the RAM holds far more.
        QVERIFY(v.snapshot.memory.capped());
        QCOMPARE(v.snapshot.memory.limit, KvPoolLimit::Context);
        QCOMPARE(v.snapshot.memory.cap_blocks, 4 * 1024 / 16);
        QCOMPARE(v.snapshot.memory.num_blocks, 4 * 1024 / 16);
        QCOMPARE(int(v.snapshot.blocks.size()), 4 * 1024 / 16);
        // The CPU executor stores fp16 (auto), and the plan sized the blocks with 2-byte elements.
        QCOMPARE(v.device, DeviceKind::Cpu);
        QCOMPARE(v.kvDtype, KvDtype::F16);
        QCOMPARE(v.snapshot.memory.kv_elem_bytes, 2);
        QVERIFY(v.replanError.isEmpty());
        QVERIFY(v.snapshot.memory.note.empty());
        plan_ = v.snapshot.memory;
    }

    // Utilization lowered while a load test and a chat request run: the pool shrinks (views
    // show the new block count), and the chat request streams exactly what it streams alone.
    void utilizationReplansDuringALoadTest() {
        const auto alone = generateOne(1, 48);
        QVERIFY(alone.second.completionTokens > 0);
        QVERIFY(!alone.second.cancelled());

        // A fixed "device" so that the utilization maps to known block counts.
        const MemoryPlan m = plan_;
        QVERIFY(m.bytes_per_block > 0);
        EngineTuning t;
        t.maxNumSeqs = 16; // on the CPU the cap is 4 contexts: 4 x 64 = 256 blocks
        const qint64 fixed = fixedBytes(m, t);
        t.deviceBytes = 2 * (fixed + 200 * m.bytes_per_block);
        t.gpuMemoryUtilization = 0.5; // 200 blocks
        const EngineView big =
            waitView([](const EngineView& v) { return v.snapshot.memory.num_blocks == 200; },
                     [&] { setTuning(t); });
        QCOMPARE(big.snapshot.memory.num_blocks, 200);
        QCOMPARE(big.snapshot.memory.limit, KvPoolLimit::Utilization);

        QSignalSpy loadDone(&relay_, &WorkerRelay::loadTestFinished);
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        QSignalSpy failed(&relay_, &WorkerRelay::failed);
        QSignalSpy tokens(&relay_, &WorkerRelay::token);
        QMetaObject::invokeMethod(worker_, "runLoadTest", Qt::QueuedConnection, Q_ARG(int, 16));
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(2, 48)));
        const EngineView busy =
            waitView([](const EngineView& v) { return v.snapshot.num_running > 0; });
        QVERIFY(busy.snapshot.num_running > 0);
        // About 24 blocks: below what 16 requests hold, so some are preempted and resume.
        t.gpuMemoryUtilization = double(fixed + 24 * m.bytes_per_block) / double(t.deviceBytes);
        t.gpuMemoryUtilization = std::ceil(t.gpuMemoryUtilization * 1000) / 1000;
        const EngineView shrunk =
            waitView([](const EngineView& v) { return v.snapshot.memory.num_blocks < 200; },
                     [&] { setTuning(t); });
        QVERIFY2(shrunk.snapshot.memory.num_blocks > 0 && shrunk.snapshot.memory.num_blocks < 200,
                 qPrintable(QString::number(shrunk.snapshot.memory.num_blocks)));
        QCOMPARE(int(shrunk.snapshot.blocks.size()), shrunk.snapshot.memory.num_blocks);

        QVERIFY(waitFor(loadDone, 1, 60000));
        QCOMPARE(loadDone.first().first().toInt(), 16); // all 16 completed
        QVERIFY(waitFor(finished, 1, 30000));
        QCOMPARE(failed.size(), 0);
        const auto stats = finished.first().first().value<GenerationStats>();
        QString text;
        for (const auto& a : tokens)
            if (a.at(0).value<quint64>() == 2)
                text += a.at(2).toString();
        QCOMPARE(stats.finishReason, alone.second.finishReason);
        QCOMPARE(stats.completionTokens, alone.second.completionTokens);
        QCOMPARE(text, alone.first);
        const EngineView after = waitView(
            [](const EngineView& v) {
                return v.snapshot.num_running == 0 && v.snapshot.num_waiting == 0;
            },
            {}, 2000);
        qInfo("pool 200 -> %d blocks; preemptions so far %lld", shrunk.snapshot.memory.num_blocks,
              static_cast<long long>(
                  std::max(after.snapshot.total_preemptions, shrunk.snapshot.total_preemptions)));
    }

    // An impossible utilization is refused with the smallest value that works, and the view
    // keeps the one in force (the Tuning dock puts its slider back): idle (no room for one
    // block after the weights) and while a request runs (no room for what it needs). Never
    // "need at least 0 MiB".
    void impossibleUtilizationIsRefused() {
        const MemoryPlan m = plan_;
        EngineTuning t;
        t.maxNumSeqs = 16;
        const qint64 fixed = fixedBytes(m, t);
        t.deviceBytes = 2 * (fixed + 200 * m.bytes_per_block);
        t.gpuMemoryUtilization = 0.5; // 200 blocks
        EngineView v = waitView(
            [](const EngineView& v) {
                return v.snapshot.memory.num_blocks == 200 && v.utilizationRefusal.isEmpty();
            },
            [&] { setTuning(t); });
        QCOMPARE(v.snapshot.memory.num_blocks, 200);
        QCOMPARE(v.snapshot.memory.utilization, 0.5);

        // Idle: 0.0005 of the "device" does not even hold the weights.
        t.gpuMemoryUtilization = 0.0005;
        v = waitView([](const EngineView& v) { return !v.utilizationRefusal.isEmpty(); },
                     [&] { setTuning(t); });
        QVERIFY(!v.utilizationRefusal.isEmpty());
        QCOMPARE(v.refusedUtilization, 0.0005);
        QCOMPARE(v.tuning.gpuMemoryUtilization, 0.5); // the value in force
        QCOMPARE(v.snapshot.memory.num_blocks, 200);  // the pool did not change
        QCOMPARE(v.snapshot.memory.utilization, 0.5);
        QVERIFY2(!v.utilizationRefusal.contains(QStringLiteral(" 0 MiB")),
                 qPrintable(v.utilizationRefusal));
        const QRegularExpression least(
            QStringLiteral("smallest value that works now is ([0-9]+(?:\\.[0-9]+)?)"));
        auto match = least.match(v.utilizationRefusal);
        QVERIFY2(match.hasMatch(), qPrintable(v.utilizationRefusal));
        const double u = match.captured(1).toDouble();
        // It is the smallest (to 1e-4) that holds one block after the weights and workspace.
        const double need = double(fixed + m.bytes_per_block);
        QVERIFY2(std::floor(u * double(t.deviceBytes)) >= need,
                 qPrintable(QStringLiteral("%1: %2 x %3 < %4 (%5)")
                                .arg(match.captured(1))
                                .arg(u)
                                .arg(t.deviceBytes)
                                .arg(need, 0, 'f', 0)
                                .arg(v.utilizationRefusal)));
        QVERIFY(std::floor((u - 1e-4) * double(t.deviceBytes)) < need);
        // That value is accepted: the refusal goes away and the plan uses it.
        t.gpuMemoryUtilization = u;
        v = waitView(
            [u](const EngineView& v) {
                return v.utilizationRefusal.isEmpty() && v.snapshot.memory.utilization == u;
            },
            [&] { setTuning(t); });
        QCOMPARE(v.snapshot.memory.utilization, u);
        QVERIFY(v.snapshot.memory.num_blocks >= 1);
        QCOMPARE(v.tuning.gpuMemoryUtilization, u);

        // While a request runs: a pool of one block cannot hold it.
        t.gpuMemoryUtilization = 0.5;
        v = waitView([](const EngineView& v) { return v.snapshot.memory.num_blocks == 200; },
                     [&] { setTuning(t); });
        QCOMPARE(v.snapshot.memory.num_blocks, 200);
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(60, 300)));
        t.gpuMemoryUtilization = u; // queued behind generate: the request is live
        v = waitView([](const EngineView& v) { return !v.utilizationRefusal.isEmpty(); },
                     [&] { setTuning(t); });
        QVERIFY2(v.utilizationRefusal.contains(QStringLiteral("running requests")),
                 qPrintable(v.utilizationRefusal));
        QCOMPARE(v.tuning.gpuMemoryUtilization, 0.5);
        QCOMPARE(v.snapshot.memory.num_blocks, 200);
        match = least.match(v.utilizationRefusal);
        QVERIFY2(match.hasMatch(), qPrintable(v.utilizationRefusal));
        QVERIFY(match.captured(1).toDouble() > u);
        QVERIFY(waitFor(finished, 1, 30000));
        const auto stats = finished.first().first().value<GenerationStats>();
        QCOMPARE(stats.completionTokens, 300); // the pool stayed: the whole answer
        QCOMPARE(stats.finishReason, FinishReason::Length);
    }

    // The finish reasons the app tells apart: the user's max tokens (length), the whole KV pool
    // when it is smaller than the context (kv_pool), the model's context (context).
    void finishReasonsArePrecise() {
        const MemoryPlan m = plan_;
        EngineTuning t;
        t.maxNumSeqs = 16;
        const qint64 fixed = fixedBytes(m, t);
        t.deviceBytes = fixed + 6 * m.bytes_per_block + m.bytes_per_block / 2; // 6 blocks
        t.gpuMemoryUtilization = 1.0;
        EngineView v =
            waitView([](const EngineView& v) { return v.snapshot.memory.num_blocks == 6; },
                     [&] { setTuning(t); });
        QCOMPARE(v.snapshot.memory.num_blocks, 6);
        auto g = generateOne(70, 500); // 96 token slots: cut off by the pool
        QCOMPARE(g.second.finishReason, FinishReason::KvPool);
        QCOMPARE(g.second.promptTokens + g.second.completionTokens, 96);
        g = generateOne(71, 5);
        QCOMPARE(g.second.finishReason, FinishReason::Length);
        QCOMPARE(g.second.completionTokens, 5);
        // The default pool (4 contexts of 1024): the model's context ends the answer.
        t.deviceBytes = 0;
        t.gpuMemoryUtilization = 0.5;
        v = waitView([](const EngineView& v) { return v.snapshot.memory.num_blocks == 256; },
                     [&] { setTuning(t); });
        QCOMPARE(v.snapshot.memory.num_blocks, 4 * 1024 / 16);
        g = generateOne(72, 2000);
        QCOMPARE(g.second.finishReason, FinishReason::Context);
        QCOMPARE(g.second.promptTokens + g.second.completionTokens, 1024);
    }

    // Speculative tokens from the Tuning dock apply without a reload: the same greedy answer,
    // drafts verified and accepted (the view carries the counters), and off again.
    void speculationFromTheTuning() {
        const auto plain = generateOne(40, 40);
        QVERIFY(plain.second.completionTokens > 0);
        EngineTuning t;
        t.numSpeculativeTokens = 4;
        setTuning(t);
        const auto spec = generateOne(41, 40);
        QCOMPARE(spec.first, plain.first);
        QCOMPARE(spec.second.completionTokens, plain.second.completionTokens);
        QCOMPARE(spec.second.finishReason, plain.second.finishReason);
        const EngineView v =
            waitView([](const EngineView& v) { return v.snapshot.speculative.num_drafts > 0; },
                     [&] { setTuning(t); }, 20000);
        const SpeculativeStats& st = v.snapshot.speculative;
        QVERIFY(st.num_drafts > 0);
        QVERIFY(st.num_accepted_tokens > 0 && st.num_accepted_tokens <= st.num_draft_tokens);
        qInfo("speculation: %lld of %lld draft tokens accepted", (long long)st.num_accepted_tokens,
              (long long)st.num_draft_tokens);
        t.numSpeculativeTokens = 0;
        setTuning(t);
        const auto off = generateOne(42, 40);
        QCOMPARE(off.first, plain.first);
        // An idle engine sends no views by itself: ask for one (setTuning while idle sends it).
        const EngineView after =
            waitView([](const EngineView& v) { return v.snapshot.num_running == 0; },
                     [&] { setTuning(t); }, 20000);
        QVERIFY(after.snapshot.step_index > 0); // a real view, not the timeout's default
        QCOMPARE(after.snapshot.speculative.num_drafts, st.num_drafts); // no drafts when off
    }

    // self-q4 from the Tuning dock: the 4-bit draft is made when chosen (its memory in the
    // view), answers stay the greedy ones, drafts are verified; auto keeps them identical too.
    void selfQ4FromTheTuning() {
        EngineTuning t;
        setTuning(t);
        const auto plain = generateOne(50, 40);
        QVERIFY(plain.second.completionTokens > 0);
        t.numSpeculativeTokens = 3;
        t.speculativeMethod = SpeculativeMethod::SelfQ4;
        const EngineView made = waitView([](const EngineView& v) { return v.draftWeightBytes > 0; },
                                         [&] { setTuning(t); }, 20000);
        QVERIFY(made.draftWeightBytes > 0);
        QVERIFY(made.speculationError.isEmpty());
        const qint64 before = made.snapshot.speculative.num_draft_tokens;
        const auto spec = generateOne(51, 40);
        QCOMPARE(spec.first, plain.first);
        const EngineView v = waitView(
            [&](const EngineView& v) { return v.snapshot.speculative.num_draft_tokens > before; },
            [&] { setTuning(t); }, 20000);
        QVERIFY(v.snapshot.speculative.num_draft_tokens > before);
        t.speculativeAuto = true;
        setTuning(t);
        const auto autoK = generateOne(52, 40);
        QCOMPARE(autoK.first, plain.first);
        setTuning(EngineTuning{});
    }

    // A block size change when idle rebuilds the engine at once; while busy it waits for idle.
    void blockSizeChangesRebuild() {
        EngineTuning t;
        t.maxNumSeqs = 4;
        t.blockSize = 32;
        const EngineView v32 = waitView(
            [](const EngineView& v) { return v.snapshot.block_size == 32; }, [&] { setTuning(t); });
        QCOMPARE(v32.snapshot.block_size, 32);
        QCOMPARE(v32.snapshot.memory.block_size, 32);
        QCOMPARE(v32.tuning.blockSize, 32);
        QVERIFY(generateOne(3, 8).second.completionTokens > 0);

        QSignalSpy loadDone(&relay_, &WorkerRelay::loadTestFinished);
        // Queued right behind the load test: the worker sees it with requests unfinished.
        QSignalSpy views(&relay_, &WorkerRelay::engineView);
        // 64 requests, 4 at a time: longer than one view interval however fast the engine is.
        QMetaObject::invokeMethod(worker_, "runLoadTest", Qt::QueuedConnection, Q_ARG(int, 64));
        t.blockSize = 8;
        setTuning(t);
        EngineView pending; // the first view with the load test's requests
        for (int seen = 0, tries = 0; tries < 40 && !pending.snapshot.num_running; ++tries) {
            if (seen == views.size())
                views.wait(250);
            for (; seen < views.size() && !pending.snapshot.num_running; ++seen)
                if (views.at(seen).first().value<EngineView>().snapshot.num_running > 0)
                    pending = views.at(seen).first().value<EngineView>();
        }
        QVERIFY(pending.snapshot.num_running > 0);
        QVERIFY(pending.rebuildPending);
        QCOMPARE(pending.snapshot.block_size, 32); // not while requests run
        QVERIFY(waitFor(loadDone, 1, 60000));
        QCOMPARE(loadDone.first().first().toInt(), 64);
        // The rebuild follows the last step (its view may already be in the spy).
        EngineView v8;
        for (int tries = 0; tries < 20 && v8.snapshot.block_size != 8; ++tries) {
            for (const auto& a : views)
                if (a.first().value<EngineView>().snapshot.block_size == 8)
                    v8 = a.first().value<EngineView>();
            if (v8.snapshot.block_size != 8)
                views.wait(500);
        }
        QCOMPARE(v8.snapshot.block_size, 8);
        QVERIFY(!v8.rebuildPending);
    }

    // A budget below the weights: the plan falls back to a small pool (one sequence, at most
    // kFallbackPoolTokens) that keeps the model usable, and its note says why.
    void failedPlanFallsBack() {
        EngineTuning t;
        t.maxNumSeqs = 4;
        t.blockSize = 16;
        t.deviceBytes = 64 << 10; // 64 KiB of "device"
        t.gpuMemoryUtilization = 0.5;
        const EngineView v = waitView(
            [](const EngineView& v) { return v.snapshot.memory.limit == KvPoolLimit::Fallback; },
            [&] { setTuning(t); });
        QCOMPARE(v.snapshot.memory.limit, KvPoolLimit::Fallback);
        QVERIFY(!v.snapshot.memory.note.empty());
        QVERIFY(v.replanError.isEmpty()); // the fallback is a plan, not a failure
        QCOMPARE(v.snapshot.block_size, 16);
        QCOMPARE(v.snapshot.memory.num_blocks, 1024 / 16); // one 1024-token sequence
        QVERIFY(generateOne(6, 8).second.completionTokens > 0);
        // Back to a working plan: the error goes away.
        t.deviceBytes = 0;
        const EngineView ok = waitView(
            [](const EngineView& v) { return v.snapshot.memory.limit != KvPoolLimit::Fallback; },
            [&] { setTuning(t); });
        QCOMPARE(ok.snapshot.memory.limit, KvPoolLimit::Context);
        QVERIFY(ok.snapshot.memory.note.empty());
        QCOMPARE(ok.snapshot.memory.num_blocks, 4 * 1024 / 16); // capped again
    }

    // Cancel between two stages: the previous model stays loaded and keeps generating; the next
    // load (not cancelled) replaces it.
    void cancelledLoadKeepsThePreviousModel() {
        QSignalSpy cancelled(&relay_, &WorkerRelay::loadCancelled);
        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        auto c = connect(
            worker_, &EngineWorker::loadProgress, worker_,
            [this](int percent, const QString&) {
                if (percent >= 60)
                    worker_->cancelLoad(); // in the worker thread, between two stages
            },
            Qt::DirectConnection);
        QMetaObject::invokeMethod(worker_, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, otherPath_));
        QVERIFY(waitFor(cancelled, 1, 30000));
        disconnect(c);
        QCOMPARE(cancelled.first().first().toString(), otherPath_);
        QCOMPARE(loaded.size(), 0);
        const auto g = generateOne(4, 8);
        QVERIFY(!worker_->isLoading());
        QVERIFY(g.second.completionTokens > 0);
        QVERIFY(!g.second.cancelled());

        QMetaObject::invokeMethod(worker_, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, otherPath_));
        QVERIFY(waitFor(loaded, 1, 30000));
        QCOMPARE(loaded.first().first().value<ModelMetadata>().layers, 3);
        // Cancelling when nothing loads does nothing.
        worker_->cancelLoad();
        QVERIFY(generateOne(5, 4).second.completionTokens > 0);
    }

    // The tuning persists in the settings file and reads back clamped.
    void tuningPersists() {
        QTemporaryDir d;
        const QString ini = d.filePath("s.ini");
        {
            AppSettings s(ini);
            QCOMPARE(s.engineTuning(), EngineTuning{});
            EngineTuning t;
            t.gpuMemoryUtilization = 0.25;
            t.maxNumSeqs = 7;
            t.maxNumBatchedTokens = 1000;
            t.blockSize = 8;
            t.numSpeculativeTokens = 5;
            t.speculativeMethod = SpeculativeMethod::SelfQ4;
            t.speculativeAuto = true;
            s.setEngineTuning(t);
            s.sync();
        }
        {
            AppSettings s(ini);
            const EngineTuning t = s.engineTuning();
            QCOMPARE(t.gpuMemoryUtilization, 0.25);
            QCOMPARE(t.maxNumSeqs, 7);
            QCOMPARE(t.maxNumBatchedTokens, 1000);
            QCOMPARE(t.blockSize, 8);
            QCOMPARE(t.numSpeculativeTokens, 5);
            QCOMPARE(t.speculativeMethod, SpeculativeMethod::SelfQ4);
            QVERIFY(t.speculativeAuto);
            s.raw().setValue("engine/speculative_method", "eagle"); // unknown: prompt lookup
            QCOMPARE(s.engineTuning().speculativeMethod, SpeculativeMethod::Ngram);
            s.raw().setValue("engine/num_speculative_tokens", 99);
            QCOMPARE(s.engineTuning().numSpeculativeTokens, 16);
            s.raw().setValue("engine/block_size", 12); // not 8/16/32
            s.raw().setValue("engine/gpu_memory_utilization", 7.0);
            QCOMPARE(s.engineTuning().blockSize, 16);
            QCOMPARE(s.engineTuning().gpuMemoryUtilization, 1.0);
            s.resetTuning();
            QCOMPARE(s.engineTuning(), EngineTuning{});
        }
    }

    // Recent models: most recent first, no duplicates, removal persists.
    void recentModelsPersist() {
        QTemporaryDir d;
        const QString ini = d.filePath("r.ini");
        {
            AppSettings s(ini);
            s.addRecentModel("/m/a.gguf");
            s.addRecentModel("/m/b");
            s.addRecentModel("/m/a.gguf");
            QCOMPARE(s.recentModels(), (QStringList{"/m/a.gguf", "/m/b"}));
            s.removeRecentModel("/m/b");
            s.removeRecentModel("/m/not-there");
            s.sync();
        }
        AppSettings s(ini);
        QCOMPARE(s.recentModels(), QStringList{"/m/a.gguf"});
        QCOMPARE(s.lastModel(), QString("/m/a.gguf"));
    }
};

QTEST_GUILESS_MAIN(TestAppEngineTuning)
#include "tst_app_engine_tuning.moc"
