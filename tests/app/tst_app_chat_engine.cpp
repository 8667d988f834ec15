// The ChatController wired to a real EngineWorker in its own QThread (as main() wires them),
// on a tiny model written with the model writer: two conversations generating at once stream
// interleaved (one engine batch) and both complete and persist with their figures; and quitting
// the application while an answer streams (the aboutToQuit sequence of main()) stops the
// worker thread and leaves the partial answer in the database, which reopens cleanly.
#include <QCoreApplication>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QtTest>

#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "app/services/engine_worker.h"
#include "engine/model/model_writer.h"

using namespace llmwb;

namespace {

// main()'s wiring between the controller and the worker.
void wire(ChatController& controller, EngineWorker* worker) {
    QObject::connect(&controller, &ChatController::generateRequested, worker,
                     &EngineWorker::generate, Qt::QueuedConnection);
    QObject::connect(
        &controller, &ChatController::stopRequested, worker,
        [worker](quint64 id) { worker->stop(id); }, Qt::DirectConnection);
    QObject::connect(worker, &EngineWorker::token, &controller, &ChatController::onToken);
    QObject::connect(worker, &EngineWorker::finished, &controller, &ChatController::onFinished);
    QObject::connect(worker, &EngineWorker::failed, &controller, &ChatController::onFailed);
}

}  // namespace

class TestAppChatEngine : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    QString modelPath_;

    // A worker in a started thread with the tiny model loaded.
    EngineWorker* startWorker(QThread& thread) {
        auto* worker = new EngineWorker(1);
        worker->setTokenSignalIntervalMs(0);  // one signal per token
        worker->moveToThread(&thread);
        connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
        thread.start();
        QSignalSpy loaded(worker, &EngineWorker::modelLoaded);
        QMetaObject::invokeMethod(worker, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, modelPath_));
        if (!loaded.wait(30000))
            return nullptr;
        return worker;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        modelPath_ = dir_.filePath("tiny.gguf");
        ModelWriterSpec spec;  // qwen2, F32, hidden 64, 2 layers, demo tokenizer + ChatML
        spec.seed = 11;
        spec.max_position = 4096;
        const Status st = write_model(spec, modelPath_.toStdString());
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
    }

    void twoConversationsStreamInterleaved() {
        QThread thread;
        EngineWorker* worker = startWorker(thread);
        QVERIFY(worker);
        Database db(dir_.filePath("two.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        controller.setModelName("tiny");
        wire(controller, worker);

        const QJsonObject sampling{{"temperature", 0.0}, {"max_tokens", 48}};
        const auto a = store.createConversation("A", {}, sampling);
        const auto b = store.createConversation("B", {}, sampling);
        QVERIFY(a && b);
        QList<qint64> order;  // conversation of each streamed update, in arrival order
        QHash<qint64, QString> streamed;
        connect(&controller, &ChatController::messageTextChanged, this,
                [&](qint64 conv, qint64, const QString& text) {
                    order << conv;
                    streamed[conv] = text;
                });
        QSignalSpy finished(&controller, &ChatController::messageFinished);
        QVERIFY(controller.send(a->id, "Hello there"));
        QVERIFY(controller.send(b->id, "Good morning"));
        QVERIFY(controller.isGenerating(a->id));
        QVERIFY(controller.isGenerating(b->id));
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 60000);
        QVERIFY(!controller.anyGenerating());

        // Interleaved: the stream switches between the conversations more than once, i.e.
        // tokens of both arrived while both were running (one batch), not one after the other.
        int switches = 0;
        for (int i = 1; i < order.size(); ++i)
            switches += order[i] != order[i - 1];
        QVERIFY2(switches >= 3, qPrintable(QStringLiteral("%1 switches in %2 updates")
                                               .arg(switches)
                                               .arg(order.size())));
        for (const auto& conv : {*a, *b}) {
            const auto msgs = store.messages(conv.id);
            QCOMPARE(msgs.size(), 2);
            QCOMPARE(msgs[1].role, QStringLiteral("assistant"));
            QCOMPARE(msgs[1].state, MessageState::Complete);
            QVERIFY(!msgs[1].content.isEmpty());
            QCOMPARE(msgs[1].content, streamed.value(conv.id));
            QVERIFY(msgs[1].completionTokens.value_or(0) > 0);
            QVERIFY(msgs[1].promptTokens.value_or(0) > 0);
            QVERIFY(msgs[1].tokensPerSecond.value_or(0) > 0);
            QVERIFY(msgs[1].ttftMs.has_value());
        }

        worker->stopAll();
        thread.quit();
        QVERIFY(thread.wait(10000));
    }

    // Last: it runs the application's event loop and quits it.
    void quitWhileStreaming() {
        const QString dbPath = dir_.filePath("quit.sqlite");
        QThread thread;
        EngineWorker* worker = startWorker(thread);
        QVERIFY(worker);
        qint64 convId = 0;
        QString streamedAtQuit;
        {
            Database db(dbPath);
            QVERIFY(db.open());
            ConversationStore store(db);
            ChatController controller(store);
            wire(controller, worker);
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
            int updates = 0;
            connect(&controller, &ChatController::messageTextChanged, this,
                    [&](qint64, qint64, const QString& text) {
                        if (++updates == 5) {
                            streamedAtQuit = text;
                            QCoreApplication::quit();
                        }
                    });
            QTimer safety;  // a test that never streams must still end
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
            // What had streamed when quit was asked is kept (more may have arrived before
            // the worker stopped, never less).
            QVERIFY2(msgs[1].content.startsWith(streamedAtQuit),
                     qPrintable(msgs[1].content + " / " + streamedAtQuit));
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
