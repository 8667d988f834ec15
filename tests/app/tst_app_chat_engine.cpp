// The ChatController wired to a real EngineWorker in its own QThread (as main() wires them),
// on a tiny model written with the model writer: two conversations generating at once stream
// interleaved (one engine batch) and both complete and persist with their figures; and quitting
// the application while an answer streams (the aboutToQuit sequence of main()) stops the
// worker thread and leaves the partial answer in the database, which reopens cleanly.
#include <QCoreApplication>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMutex>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QtTest>

#include "app/services/chat_controller.h"
#include "app/services/chat_wiring.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "app/services/engine_view.h"
#include "app/services/engine_worker.h"
#include "engine/model/model_writer.h"

using namespace llmwb;

namespace {

// Stops and joins the engine thread when a test returns early.
struct ThreadStopper {
    EngineWorker* worker;
    QThread& thread;
    ~ThreadStopper() {
        if (thread.isRunning()) {
            worker->stopAll();
            thread.quit();
            thread.wait();
        }
    }
};

} // namespace

class TestAppChatEngine : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString modelPath_;

    // A worker in a started thread with the tiny model loaded.
    EngineWorker* startWorker(QThread& thread, const QString& modelPath = {}) {
        auto* worker = new EngineWorker(1);
        worker->setTokenSignalIntervalMs(0); // one signal per token
        worker->moveToThread(&thread);
        connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
        thread.start();
        // Not a QSignalSpy on the worker: the spy would append from the worker thread while
        // this thread reads it. A queued connection delivers the signal here instead.
        QEventLoop loop;
        bool loaded = false;
        connect(
            worker, &EngineWorker::modelLoaded, &loop,
            [&] {
                loaded = true;
                loop.quit();
            },
            Qt::QueuedConnection);
        QTimer::singleShot(30000, &loop, &QEventLoop::quit);
        QMetaObject::invokeMethod(worker, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, modelPath.isEmpty() ? modelPath_ : modelPath));
        loop.exec();
        if (!loaded)
            return nullptr;
        return worker;
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        modelPath_ = dir_.filePath("tiny.gguf");
        ModelWriterSpec spec; // qwen2, F32, hidden 64, 2 layers, demo tokenizer + ChatML
        spec.seed = 11;
        spec.max_position = 4096;
        const Status st = write_model(spec, modelPath_.toStdString());
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
    }

    void twoConversationsStreamInterleaved() {
        QThread thread;
        EngineWorker* worker = startWorker(thread);
        QVERIFY(worker);
        ThreadStopper stopper{worker, thread};
        Database db(dir_.filePath("two.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        controller.setModelName("tiny");
        connectChatToWorker(controller, worker);

        // A is long; B starts once A streams, so B joins A's running batch.
        const auto a = store.createConversation(
            "A", {}, QJsonObject{{"temperature", 0.0}, {"max_tokens", 2000}});
        const auto b = store.createConversation(
            "B", {}, QJsonObject{{"temperature", 0.0}, {"max_tokens", 24}});
        QVERIFY(a && b);
        QList<qint64> order; // conversation of each streamed update, in arrival order
        QHash<qint64, QString> streamed;
        QHash<qint64, ChatMessage> finished;
        connect(&controller, &ChatController::messageTextChanged, this,
                [&](qint64 conv, qint64, const QString& text) {
                    order << conv;
                    streamed[conv] = text;
                });
        connect(&controller, &ChatController::messageFinished, this,
                [&](const ChatMessage& m) { finished.insert(m.conversationId, m); });
        QVERIFY(controller.send(a->id, "Hello there"));
        QTRY_VERIFY_WITH_TIMEOUT(!order.isEmpty(), 30000);
        QVERIFY(controller.send(b->id, "Good morning"));
        QVERIFY(controller.isGenerating(a->id));
        QVERIFY(controller.isGenerating(b->id));
        QTRY_VERIFY_WITH_TIMEOUT(finished.contains(b->id), 60000);
        controller.stop(a->id);
        QTRY_VERIFY_WITH_TIMEOUT(finished.contains(a->id), 60000);
        QVERIFY(!controller.anyGenerating());

        // Interleaved: A kept streaming while B streamed (one batch), not one after the other.
        const int firstB = int(order.indexOf(b->id));
        const int lastB = int(order.lastIndexOf(b->id));
        QVERIFY(firstB > 0);
        int aDuringB = 0;
        for (int i = firstB; i <= lastB; ++i)
            aDuringB += order[i] == a->id;
        QVERIFY2(aDuringB > 0 && lastB > firstB,
                 qPrintable(QStringLiteral("B updates %1..%2 of %3, A updates among them: %4")
                                .arg(firstB)
                                .arg(lastB)
                                .arg(order.size())
                                .arg(aDuringB)));
        for (const auto& conv : {*a, *b}) {
            const auto msgs = store.messages(conv.id);
            QCOMPARE(msgs.size(), 2);
            QCOMPARE(msgs[1].role, QStringLiteral("assistant"));
            QCOMPARE(msgs[1].state, conv.id == b->id ? MessageState::Complete
                                                     : msgs[1].state); // A: stopped or done
            QVERIFY(!msgs[1].content.isEmpty());
            QCOMPARE(msgs[1].content, streamed.value(conv.id));
            QCOMPARE(msgs[1].content, finished.value(conv.id).content);
            QVERIFY(msgs[1].completionTokens.value_or(0) > 0);
            QVERIFY(msgs[1].promptTokens.value_or(0) > 0);
            QVERIFY(msgs[1].tokensPerSecond.value_or(0) > 0);
            QVERIFY(msgs[1].ttftMs.has_value());
        }
        const auto msgsA = store.messages(a->id);
        QVERIFY(msgsA[1].state == MessageState::Stopped ||
                msgsA[1].state == MessageState::Complete);
    }

    // An answer cut off because the KV pool is full is stored as truncated with finish reason
    // kv_pool (not "complete"), one that reached max tokens as complete + length, and a
    // conversation that no longer fits the pool fails with a message that names the pool, stored
    // with the answer; both exports carry the reasons and the message.
    void finishReasonsAreStoredAndExported() {
        QThread thread;
        EngineWorker* worker = startWorker(thread);
        QVERIFY(worker);
        ThreadStopper stopper{worker, thread};
        MemoryPlan plan;
        connect(
            worker, &EngineWorker::engineView, this,
            [&](const EngineView& v) { plan = v.snapshot.memory; }, Qt::QueuedConnection);
        // The default tuning again: the worker re-plans and sends a view.
        QMetaObject::invokeMethod(worker, "setTuning", Qt::QueuedConnection,
                                  Q_ARG(llmwb::EngineTuning, EngineTuning{}));
        QTRY_VERIFY_WITH_TIMEOUT(plan.bytes_per_block > 0, 10000);
        // A pool of 6 blocks (96 token slots), far below the 4096-token context.
        EngineTuning t;
        t.deviceBytes = plan.weight_bytes + plan.workspace_bytes + 6 * plan.bytes_per_block +
                        plan.bytes_per_block / 2;
        t.gpuMemoryUtilization = 1.0;
        QMetaObject::invokeMethod(worker, "setTuning", Qt::QueuedConnection,
                                  Q_ARG(llmwb::EngineTuning, t));
        QTRY_COMPARE_WITH_TIMEOUT(plan.num_blocks, 6, 10000);

        Database db(dir_.filePath("reasons.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        controller.setModelName("tiny");
        connectChatToWorker(controller, worker);
        QStringList reported;
        connect(&controller, &ChatController::errorOccurred, this,
                [&](const QString& e) { reported << e; });
        QHash<qint64, ChatMessage> finished;
        connect(&controller, &ChatController::messageFinished, this,
                [&](const ChatMessage& m) { finished.insert(m.conversationId, m); });

        const auto pool = store.createConversation(
            "pool", {}, QJsonObject{{"temperature", 0.0}, {"max_tokens", 500}});
        const auto shortOne = store.createConversation(
            "short", {}, QJsonObject{{"temperature", 0.0}, {"max_tokens", 3}});
        QVERIFY(pool && shortOne);
        QVERIFY(controller.send(pool->id, "Hello there"));
        QTRY_VERIFY_WITH_TIMEOUT(finished.contains(pool->id), 30000);
        QVERIFY(controller.send(shortOne->id, "Hello there"));
        QTRY_VERIFY_WITH_TIMEOUT(finished.contains(shortOne->id), 30000);

        ChatMessage cut = store.messages(pool->id).at(1);
        QCOMPARE(cut.state, MessageState::Truncated);
        QCOMPARE(cut.finishReason, FinishReason::KvPool);
        QCOMPARE(cut.promptTokens.value_or(0) + cut.completionTokens.value_or(0), 96);
        ChatMessage len = store.messages(shortOne->id).at(1);
        QCOMPARE(len.state, MessageState::Complete);
        QCOMPARE(len.finishReason, FinishReason::Length);
        QCOMPARE(len.completionTokens.value_or(0), 3);

        // Now the conversation is longer than the pool: refused with the pool named.
        finished.clear();
        QVERIFY(controller.send(pool->id, QString(400, QLatin1Char('x')) + " a long message"));
        QTRY_VERIFY_WITH_TIMEOUT(finished.contains(pool->id), 30000);
        const ChatMessage failed = store.messages(pool->id).last();
        QCOMPARE(failed.state, MessageState::Error);
        QCOMPARE(failed.finishReason, FinishReason::Error);
        QVERIFY2(failed.error.contains(QStringLiteral("KV cache pool")), qPrintable(failed.error));
        QVERIFY2(!failed.error.contains(QStringLiteral("context of the model")),
                 qPrintable(failed.error));
        QCOMPARE(reported.last(), failed.error);

        const QString md = store.exportMarkdown(pool->id);
        QVERIFY2(md.contains(QStringLiteral("truncated · finish: kv_pool")), qPrintable(md));
        QVERIFY2(md.contains(QStringLiteral("**Error:** The conversation")), qPrintable(md));
        const QJsonArray msgs =
            QJsonDocument::fromJson(store.exportJson(pool->id))["messages"].toArray();
        QCOMPARE(msgs.size(), 4);
        QCOMPARE(msgs[1]["finish_reason"].toString(), QStringLiteral("kv_pool"));
        QCOMPARE(msgs[1]["state"].toString(), QStringLiteral("truncated"));
        QCOMPARE(msgs[3]["finish_reason"].toString(), QStringLiteral("error"));
        QCOMPARE(msgs[3]["error"].toString(), failed.error);
    }

    // Issue 14: the model file truncated while an answer streams from its mapping (it was
    // SIGBUS, the app gone and the answer left "streaming"): the answer keeps its partial text
    // and is stored as an error naming the file; the worker stays up and refuses the next
    // message with the same error until the model is reloaded.
    void truncatedModelFileFailsTheAnswer() {
        const QString path = dir_.filePath("truncated.gguf");
        QVERIFY(QFile::copy(modelPath_, path));
        QThread thread;
        EngineWorker* worker = startWorker(thread, path);
        QVERIFY(worker);
        ThreadStopper stopper{worker, thread};
        Database db(dir_.filePath("truncated.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        connectChatToWorker(controller, worker);
        const auto conv = store.createConversation(
            "t", {}, QJsonObject{{"temperature", 0.0}, {"max_tokens", 3000}});
        QVERIFY(conv);
        QString streamed;
        bool truncated = false;
        connect(&controller, &ChatController::messageTextChanged, this,
                [&](qint64, qint64, const QString& text) {
                    streamed = text;
                    if (!truncated)
                        truncated = QFile::resize(path, 1024); // the weights go mid-answer
                });
        QList<ChatMessage> finished;
        connect(&controller, &ChatController::messageFinished, this,
                [&](const ChatMessage& m) { finished << m; });
        QVERIFY(controller.send(conv->id, "Hello there"));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 30000);
        QVERIFY(truncated);
        const QString want = "model file changed or was truncated while in use: " + path;
        ChatMessage answer = store.messages(conv->id).at(1);
        QCOMPARE(answer.state, MessageState::Error);
        QCOMPARE(answer.finishReason, FinishReason::Error);
        QVERIFY2(answer.error.contains(want), qPrintable(answer.error));
        QVERIFY(!answer.content.isEmpty()); // the partial reply is kept
        QVERIFY(answer.content.startsWith(streamed));
        QVERIFY(thread.isRunning());
        // The next message is refused with the same error (the engine needs a reload).
        QVERIFY(controller.send(conv->id, "Still there?"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 30000);
        const ChatMessage refused = store.messages(conv->id).last();
        QCOMPARE(refused.state, MessageState::Error);
        QCOMPARE(refused.error, answer.error); // the same words: what happened, what to do
    }

    // Last: it runs the application's event loop and quits it.
    void quitWhileStreaming() {
        const QString dbPath = dir_.filePath("quit.sqlite");
        QThread thread;
        EngineWorker* worker = startWorker(thread);
        QVERIFY(worker);
        ThreadStopper stopper{worker, thread};
        qint64 convId = 0;
        QString streamedAtQuit;
        QString allEmitted;
        {
            Database db(dbPath);
            QVERIFY(db.open());
            ConversationStore store(db);
            ChatController controller(store);
            connectChatToWorker(controller, worker);
            // main()'s quit sequence.
            bool quitHandled = false;
            auto quitConn = connect(qApp, &QCoreApplication::aboutToQuit, this, [&] {
                worker->stopAll();
                thread.quit();
                thread.wait();
                controller.shutdown();
                quitHandled = true;
            });
            const auto conv = store.createConversation(
                "q", {}, QJsonObject{{"temperature", 0.0}, {"max_tokens", 3000}});
            QVERIFY(conv);
            convId = conv->id;
            // Everything the worker emits, seen on its own thread.
            QMutex emittedLock;
            QString emitted;
            connect(
                worker, &EngineWorker::token, this,
                [&](quint64, qint64, const QString& delta) {
                    QMutexLocker lock(&emittedLock);
                    emitted += delta;
                },
                Qt::DirectConnection);
            int updates = 0;
            connect(&controller, &ChatController::messageTextChanged, this,
                    [&](qint64, qint64, const QString& text) {
                        if (++updates == 5) {
                            streamedAtQuit = text;
                            QCoreApplication::quit();
                        }
                    });
            QTimer safety; // a test that never streams must still end
            safety.setSingleShot(true);
            connect(&safety, &QTimer::timeout, qApp, &QCoreApplication::quit);
            safety.start(60000);
            QVERIFY(controller.send(conv->id, "Hello there"));
            QCoreApplication::exec();
            disconnect(quitConn);
            QVERIFY(quitHandled);
            QVERIFY2(!streamedAtQuit.isEmpty(), "nothing streamed before the safety timeout");
            QVERIFY(thread.isFinished());
            QVERIFY(!controller.isGenerating(conv->id));
            // Tokens still queued for the controller are ignored after the shutdown.
            QCoreApplication::processEvents();
            QMutexLocker lock(&emittedLock);
            allEmitted = emitted;
        }
        // Reopen: the database is consistent and holds the partial answer.
        {
            Database db(dbPath);
            QVERIFY(db.open());
            ConversationStore store(db);
            const auto msgs = store.messages(convId);
            QCOMPARE(msgs.size(), 2);
            QCOMPARE(msgs[0].content, QStringLiteral("Hello there"));
            QCOMPARE(msgs[1].state, MessageState::Stopped);
            QVERIFY(!msgs[1].content.isEmpty());
            // Nothing lost: every token the worker emitted before it stopped is stored
            // (including those still queued when the thread was joined).
            QVERIFY(msgs[1].content.startsWith(streamedAtQuit));
            QCOMPARE(msgs[1].content, allEmitted);
        }
        {
            auto check = QSqlDatabase::addDatabase("QSQLITE", "integrity");
            check.setDatabaseName(dbPath);
            QVERIFY(check.open());
            QSqlQuery q(check);
            QVERIFY(q.exec("PRAGMA integrity_check"));
            QVERIFY(q.next());
            QCOMPARE(q.value(0).toString(), QStringLiteral("ok"));
            check.close();
        }
        QSqlDatabase::removeDatabase("integrity");
    }
};

QTEST_GUILESS_MAIN(TestAppChatEngine)
#include "tst_app_chat_engine.moc"
