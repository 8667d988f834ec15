// The engine worker in its own QThread: load a tiny model written with the model writer,
// stream tokens (QSignalSpy), compare with the engine's generate() called directly, stop
// mid-stream and before the start, errors; and the ChatController storing a streamed answer.
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "app/services/engine_worker.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/serving/engine.h"
#include "engine/serving/generation.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/app/worker_relay.h"

using namespace llmwb;

class TestAppEngineWorker : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString modelPath_;
    QThread thread_;
    EngineWorker* worker_ = nullptr;
    WorkerRelay relay_; // spies listen here (see worker_relay.h)

    GenerationRequest request(quint64 id, int maxTokens, const QString& text = "Hello there") {
        GenerationRequest r;
        r.requestId = id;
        r.conversationId = 100 + qint64(id);
        r.messages = {{QStringLiteral("user"), text}};
        r.sampling.temperature = 0.0;
        r.sampling.maxTokens = maxTokens;
        return r;
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        modelPath_ = dir_.filePath("tiny.gguf");
        ModelWriterSpec spec; // qwen2, F32, hidden 64, 2 layers, demo tokenizer + ChatML
        spec.seed = 7;
        spec.max_position = 2048;
        const Status st = write_model(spec, modelPath_.toStdString());
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());

        worker_ = startRelayedWorker(thread_, relay_, 2); // one signal per token

        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        QMetaObject::invokeMethod(worker_, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, modelPath_));
        QVERIFY(waitFor(loaded, 1, 30000));
        const auto meta = loaded.first().first().value<ModelMetadata>();
        QCOMPARE(meta.architecture, QStringLiteral("qwen2"));
        QCOMPARE(meta.layers, 2);
        QCOMPARE(meta.hiddenSize, 64);
        QVERIFY(meta.hasChatTemplate);
        QVERIFY(!meta.randomWeights);
        QVERIFY(!meta.dtypeSummary.isEmpty());
        QVERIFY(meta.parameterCount > 0);
    }

    void cleanupTestCase() {
        worker_->stopAll();
        thread_.quit();
        QVERIFY(thread_.wait(10000));
    }

    void streamsTheSameTextAsTheEngine() {
        QSignalSpy tokens(&relay_, &WorkerRelay::token);
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        QVERIFY(QThread::currentThread() != worker_->thread());
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(1, 24)));
        QVERIFY(waitFor(finished, 1, 30000));
        const auto stats = finished.first().first().value<GenerationStats>();
        QCOMPARE(stats.requestId, quint64(1));
        QCOMPARE(stats.conversationId, qint64(101));
        QVERIFY(stats.completionTokens > 0 && stats.completionTokens <= 24);
        QVERIFY(stats.promptTokens > 3);
        QVERIFY(stats.ttftMs > 0);
        QVERIFY(!tokens.isEmpty());
        QString streamed;
        for (const auto& args : tokens) {
            QCOMPARE(args.at(0).value<quint64>(), quint64(1));
            QCOMPARE(args.at(1).toLongLong(), qint64(101));
            streamed += args.at(2).toString();
        }

        // The same prompt through the engine directly (ChatML rendered by the template).
        auto model = load_model(modelPath_.toStdString());
        QVERIFY(model.ok());
        auto tok = Tokenizer::create((*model)->tokenizer);
        QVERIFY(tok.ok());
        kernels::ThreadPool pool(1);
        CpuTransformer tf(**model, pool);
        EngineConfig ec;
        ec.memory.num_blocks = 128;
        auto engine = Engine::create(tf, **tok, ec);
        QVERIFY(engine.ok());
        const std::string prompt =
            "<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n";
        SamplingParams p;
        p.temperature = 0;
        p.top_p = 0.9f;
        p.top_k = 40;
        p.max_tokens = 24;
        auto direct = llmwb::generate(**engine, (*tok)->encode(prompt, false), p);
        QVERIFY(direct.ok());
        QCOMPARE(stats.promptTokens, qint64(direct->prompt_tokens));
        QCOMPARE(stats.completionTokens, qint64(direct->ids.size()));
        QCOMPARE(streamed, QString::fromStdString(direct->text));
        QCOMPARE(stats.finishReason, direct->finish);
        QVERIFY(stats.finishReason == FinishReason::Stop ||
                stats.finishReason == FinishReason::Length);
    }

    void stopsMidStream() {
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        int tokensSeen = 0;
        // Stop from the GUI thread as soon as the first token arrives.
        auto c = connect(worker_, &EngineWorker::token, this, [&] {
            if (++tokensSeen == 1)
                worker_->stop(2);
        });
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(2, 1500)));
        QVERIFY(waitFor(finished, 1, 60000));
        disconnect(c);
        const auto stats = finished.first().first().value<GenerationStats>();
        QCOMPARE(stats.finishReason, FinishReason::Aborted);
        QVERIFY(stats.cancelled());
        QVERIFY2(stats.completionTokens < 1500,
                 qPrintable(QString::number(stats.completionTokens)));
        QVERIFY(stats.completionTokens >= 1);
        qInfo("stopped after %lld of at most 1500 tokens", stats.completionTokens);
    }

    void stopBeforeStart() {
        QSignalSpy tokens(&relay_, &WorkerRelay::token);
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        worker_->stop(3);
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(3, 50)));
        QVERIFY(waitFor(finished, 1, 30000));
        const auto stats = finished.first().first().value<GenerationStats>();
        QVERIFY(stats.cancelled());
        QCOMPARE(stats.completionTokens, qint64(0));
        QCOMPARE(tokens.size(), 0);
        // The next request is not affected by the earlier stop.
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(4, 5)));
        QVERIFY(waitFor(finished, 2, 30000));
        QVERIFY(!finished.last().first().value<GenerationStats>().cancelled());
    }

    void loadFailureIsReported() {
        EngineWorker local(1);
        QSignalSpy failedLoad(&local, &EngineWorker::loadFailed);
        const QString missing = dir_.filePath("missing.gguf");
        local.loadModel(missing);
        QCOMPARE(failedLoad.size(), 1);
        QVERIFY2(failedLoad.first().first().toString().contains("missing.gguf"),
                 qPrintable(failedLoad.first().first().toString()));
        QSignalSpy failedGen(&local, &EngineWorker::failed);
        local.generate(request(9, 5));
        QCOMPARE(failedGen.size(), 1);
    }

    void controllerStoresTheStreamedAnswer() {
        Database db(dir_.filePath("chat.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        connect(&controller, &ChatController::generateRequested, worker_, &EngineWorker::generate,
                Qt::QueuedConnection);
        connect(
            &controller, &ChatController::stopRequested, worker_,
            [this](quint64 id) { worker_->stop(id); }, Qt::DirectConnection);
        connect(worker_, &EngineWorker::token, &controller, &ChatController::onToken);
        connect(worker_, &EngineWorker::finished, &controller, &ChatController::onFinished);
        connect(worker_, &EngineWorker::failed, &controller, &ChatController::onFailed);
        controller.setModelName("tiny");
        QJsonObject greedy{{"temperature", 0.0}, {"max_tokens", 16}};
        auto conv = store.createConversation({}, {}, greedy);
        QVERIFY(conv);
        QSignalSpy done(&controller, &ChatController::messageFinished);
        QVERIFY(controller.send(conv->id, "Hello there"));
        QVERIFY(controller.isGenerating(conv->id));
        QVERIFY(!controller.send(conv->id, "too early")); // one answer at a time
        QVERIFY(done.wait(30000));
        QVERIFY(!controller.isGenerating(conv->id));
        const auto msgs = store.messages(conv->id);
        QCOMPARE(msgs.size(), 2);
        QCOMPARE(msgs[0].content, QStringLiteral("Hello there"));
        QCOMPARE(msgs[1].role, QStringLiteral("assistant"));
        QCOMPARE(msgs[1].state, MessageState::Complete);
        QCOMPARE(msgs[1].model, QStringLiteral("tiny"));
        QVERIFY(msgs[1].completionTokens.value_or(0) > 0);
        QVERIFY(msgs[1].promptTokens.value_or(0) > 0);
        QCOMPARE(store.conversation(conv->id)->title, QStringLiteral("Hello there"));
        const auto finishedMsg = done.first().first().value<ChatMessage>();
        QCOMPARE(finishedMsg.content, msgs[1].content);

        // Regenerate gives the same greedy answer in a new row.
        QVERIFY(controller.regenerate(msgs[1].id));
        QVERIFY(done.wait(30000));
        const auto again = store.messages(conv->id);
        QCOMPARE(again.size(), 2);
        QVERIFY(again[1].id != msgs[1].id);
        QCOMPARE(again[1].content, msgs[1].content);
    }

    // Two generations at once on the serving engine: both stream and finish, the step
    // batches hold both, and the engine views are coalesced and self-consistent.
    void twoConcurrentGenerations() {
        QSignalSpy tokens(&relay_, &WorkerRelay::token);
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        QSignalSpy views(&relay_, &WorkerRelay::engineView);
        QElapsedTimer clock;
        clock.start();
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(20, 40, "Hello there")));
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(21, 40, "Good morning")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!views.isEmpty(), 5000);
        const qint64 elapsed = clock.elapsed();
        QSet<quint64> done;
        for (const auto& args : finished) {
            const auto st = args.first().value<GenerationStats>();
            QVERIFY(!st.cancelled());
            QVERIFY(st.completionTokens > 0);
            done.insert(st.requestId);
        }
        QCOMPARE(done, (QSet<quint64>{20, 21}));
        QString text20, text21;
        for (const auto& args : tokens) {
            const quint64 id = args.at(0).value<quint64>();
            QCOMPARE(args.at(1).toLongLong(), qint64(100 + id));
            (id == 20 ? text20 : text21) += args.at(2).toString();
        }
        QVERIFY(!text20.isEmpty());
        QVERIFY(!text21.isEmpty());

        // Views: at most ~30/s (plus the final one), counts consistent, both in one batch.
        QVERIFY2(views.size() <= elapsed / EngineWorker::kSnapshotIntervalMs + 2,
                 qPrintable(QStringLiteral("%1 views in %2 ms").arg(views.size()).arg(elapsed)));
        bool batchedBoth = false;
        qint64 lastStep = -1;
        for (const auto& args : views) {
            const auto v = args.first().value<EngineView>();
            const EngineSnapshot& s = v.snapshot;
            // The pool from the default tuning: on the CPU capped at kCpuContextSeqs (not
            // max_num_seqs) x the 2048-token context.
            QCOMPARE(qsizetype(s.blocks.size()), qsizetype(s.memory.num_blocks));
            QCOMPARE(s.memory.limit, KvPoolLimit::Context);
            QCOMPARE(s.memory.num_blocks, s.memory.cap_blocks);
            QCOMPARE(s.memory.cap_seqs, std::min(v.tuning.maxNumSeqs, kCpuContextSeqs));
            QCOMPARE(s.memory.cap_blocks, s.memory.cap_seqs * 2048 / 16);
            QCOMPARE(s.memory.kv_elem_bytes, 2); // the CPU backend's auto: fp16
            QCOMPARE(v.kvDtype, KvDtype::F16);
            QCOMPARE(s.num_free_blocks + s.num_used_blocks + s.num_cached_free_blocks,
                     int(s.blocks.size()));
            int used = 0;
            for (const SnapshotBlock& b : s.blocks)
                used += b.state == BlockState::Used;
            QCOMPARE(used, s.num_used_blocks);
            for (const StepRecord& r : v.steps) {
                QVERIFY(r.step > lastStep);
                lastStep = r.step;
                int sum = 0;
                for (const StepSegment& seg : r.segments)
                    sum += seg.tokens;
                QCOMPARE(sum, r.prefillTokens + r.decodeTokens);
                batchedBoth = batchedBoth || r.segments.size() == 2;
            }
        }
        QVERIFY(batchedBoth);
        const auto last = views.last().first().value<EngineView>();
        QCOMPARE(last.snapshot.num_running, 0);
        QCOMPARE(last.snapshot.num_used_blocks, 0); // everything returned (or cached)
    }

    void stopOneKeepsTheOther() {
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        int seen = 0;
        auto c = connect(worker_, &EngineWorker::token, this, [&](quint64 id) {
            if (id == 30 && ++seen == 1)
                worker_->stop(30);
        });
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(30, 1500)));
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(31, 30, "Good morning")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 60000);
        disconnect(c);
        QHash<quint64, GenerationStats> byId;
        for (const auto& args : finished) {
            const auto st = args.first().value<GenerationStats>();
            byId.insert(st.requestId, st);
        }
        QVERIFY(byId.value(30).cancelled());
        QVERIFY(byId.value(30).completionTokens < 1500);
        QVERIFY(!byId.value(31).cancelled());
        QVERIFY(byId.value(31).completionTokens > 0);
    }

    void loadTestRunsConcurrently() {
        QSignalSpy tokens(&relay_, &WorkerRelay::token);
        QSignalSpy views(&relay_, &WorkerRelay::engineView);
        QSignalSpy done(&relay_, &WorkerRelay::loadTestFinished);
        QMetaObject::invokeMethod(worker_, "runLoadTest", Qt::QueuedConnection, Q_ARG(int, 16));
        QVERIFY(waitFor(done, 1, 120000));
        QCOMPARE(done.first().first().toInt(), 16);
        QCOMPARE(tokens.size(), 0); // load test text is not streamed to the chat
        int maxBatch = 0;
        for (const auto& args : views)
            for (const StepRecord& r : args.first().value<EngineView>().steps)
                maxBatch = std::max(maxBatch, int(r.segments.size()));
        QVERIFY2(maxBatch >= 8, qPrintable(QString::number(maxBatch)));
    }

    // What main() does on quit during a generation: stopAll, join the engine thread, then the
    // controller saves what streamed as 'stopped'.
    void quitDuringGeneration() {
        QThread thread;
        auto* worker = new EngineWorker(1);
        worker->moveToThread(&thread);
        connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
        thread.start();
        WorkerRelay relay;
        relay.attach(worker);
        QSignalSpy loaded(&relay, &WorkerRelay::modelLoaded);
        QMetaObject::invokeMethod(worker, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, modelPath_));
        QVERIFY(waitFor(loaded, 1, 30000));

        Database db(dir_.filePath("quit.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        connect(&controller, &ChatController::generateRequested, worker, &EngineWorker::generate,
                Qt::QueuedConnection);
        connect(worker, &EngineWorker::token, &controller, &ChatController::onToken);
        // Greedy: the same prompt streams text in streamsTheSameTextAsTheEngine (a sampled first
        // token could be the end of the answer, and nothing would stream).
        auto conv = store.createConversation(
            "q", {}, QJsonObject{{"max_tokens", 1500}, {"temperature", 0.0}});
        QSignalSpy text(&controller, &ChatController::messageTextChanged);
        QVERIFY(controller.send(conv->id, "Hello there"));
        QVERIFY(text.wait(30000)); // streaming has started
        worker->stopAll();
        thread.quit();
        QVERIFY(thread.wait(10000));
        QCoreApplication::processEvents(); // tokens already queued reach the controller
        const QString streamed = controller.streamingText(conv->id);
        controller.shutdown();
        QVERIFY(!controller.isGenerating(conv->id));
        const auto msgs = store.messages(conv->id);
        QCOMPARE(msgs.size(), 2);
        QCOMPARE(msgs[1].state, MessageState::Stopped);
        QVERIFY(!msgs[1].content.isEmpty());
        QCOMPARE(msgs[1].content, streamed);
    }
};

QTEST_GUILESS_MAIN(TestAppEngineWorker)
#include "tst_app_engine_worker.moc"
