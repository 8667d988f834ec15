// The chat database when things go wrong: a full disk while an answer streams (SQLite's
// max_page_count makes writes fail with SQLITE_FULL, as a full disk does).
#include <QSignalSpy>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "app/services/streaming_message_writer.h"

using namespace llmwb;

namespace {

QVariant scalar(Database& db, const QString& sql) {
    QSqlQuery q(db.connection());
    if (!q.exec(sql) || !q.next())
        return {};
    return q.value(0);
}

// Writes that need a page more than the file has fail with SQLITE_FULL ("database or disk is
// full"), as on a full disk; raising the limit again is space coming back.
void fillDisk(Database& db) {
    const int pages = scalar(db, QStringLiteral("PRAGMA page_count")).toInt();
    QSqlQuery q(db.connection());
    QVERIFY(q.exec(QStringLiteral("PRAGMA max_page_count = %1").arg(pages)));
}
void freeDisk(Database& db) {
    QSqlQuery q(db.connection());
    QVERIFY(q.exec(QStringLiteral("PRAGMA max_page_count = 1000000")));
}

} // namespace

class TestAppDbFailures : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString dbPath(const QString& name) { return dir_.filePath(name); }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        registerGenerationTypes();
    }

    // The case: the final flush fails; the row must not read "complete" with the text
    // missing, the text stays in memory, and it is all stored once space returns.
    void diskFullWhileStreamingKeepsTheText() {
        Database db(dbPath(QStringLiteral("full.sqlite")));
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        ConversationStore store(db);
        ChatController controller(store);
        quint64 requestId = 0;
        connect(&controller, &ChatController::generateRequested, this,
                [&](const GenerationRequest& r) { requestId = r.requestId; });
        QSignalSpy finished(&controller, &ChatController::messageFinished);
        QSignalSpy status(&controller, &ChatController::saveStatusChanged);
        const auto c = controller.newConversation(QStringLiteral("t"));
        QVERIFY(c);
        QVERIFY(controller.send(c->id, QStringLiteral("hello")));
        QVERIFY(requestId != 0);

        fillDisk(db);
        QString full;
        for (int i = 0; i < 176; ++i) { // 176 tokens of 200 characters: pages the file lacks
            const QString token = QString(199, QChar(u'a' + i % 26)) + QLatin1Char(' ');
            full += token;
            controller.onToken(requestId, c->id, token);
        }
        GenerationStats stats;
        stats.requestId = requestId;
        stats.conversationId = c->id;
        stats.completionTokens = 176;
        stats.finishReason = FinishReason::Stop;
        controller.onFinished(stats);

        QCOMPARE(finished.size(), 1);
        const ChatMessage shown = finished.last().at(0).value<ChatMessage>();
        QCOMPARE(shown.content, full); // the bubble has the whole answer
        QCOMPARE(shown.state, MessageState::Complete);
        QCOMPARE(controller.unsavedCount(), 1);
        QVERIFY2(controller.saveError().contains(QStringLiteral("full"), Qt::CaseInsensitive),
                 qPrintable(controller.saveError()));
        QVERIFY(!status.isEmpty());
        QCOMPARE(status.last().at(0).toInt(), 1);
        QVERIFY(controller.unsavedMessage(shown.id));
        // The row is not "complete" with the text missing: still streaming (a crash now marks it
        // interrupted, with what was stored).
        auto row = store.message(shown.id);
        QVERIFY(row);
        QCOMPARE(row->state, MessageState::Streaming);
        QVERIFY(row->content != full);

        // Still full: a retry fails and keeps everything.
        QVERIFY(!controller.retrySaving());
        QCOMPARE(controller.unsavedCount(), 1);

        freeDisk(db);
        QVERIFY(controller.retrySaving());
        row = store.message(shown.id);
        QCOMPARE(row->content, full);
        QCOMPARE(row->state, MessageState::Complete);
        QCOMPARE(row->completionTokens.value_or(0), 176);
        QCOMPARE(controller.unsavedCount(), 0);
        QVERIFY(controller.saveError().isEmpty());
        QCOMPARE(status.last().at(0).toInt(), 0);
        QVERIFY(!controller.unsavedMessage(shown.id));
        // The view is told the stored version.
        QCOMPARE(finished.last().at(0).value<ChatMessage>().content, full);
    }

    // Failed flushes mid-stream keep the text pending; the writer retries by itself (timer with
    // backoff) and says saved() once all is in.
    void writerRetriesByItself() {
        Database db(dbPath(QStringLiteral("retry.sqlite")));
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        ConversationStore store(db);
        const auto c = store.createConversation(QStringLiteral("t"));
        ChatMessage m;
        m.conversationId = c->id;
        m.role = QStringLiteral("assistant");
        m.state = MessageState::Streaming;
        const auto row = store.addMessage(m);
        QVERIFY(row);
        StreamingMessageWriter w(store, row->id, 0);
        w.setRetryDelayMs(20);
        QSignalSpy failed(&w, &StreamingMessageWriter::writeFailed);
        QSignalSpy saved(&w, &StreamingMessageWriter::saved);
        fillDisk(db);
        const QString text(50000, QLatin1Char('x'));
        w.append(text);
        QVERIFY(!failed.isEmpty());
        QVERIFY(w.hasUnsaved());
        QVERIFY(!w.finish(MessageState::Complete, {}));
        QCOMPARE(store.message(row->id)->state, MessageState::Streaming);
        QTest::qWait(100); // a few retries while still full: all fail, nothing stored
        QVERIFY(w.hasUnsaved());
        QVERIFY(w.retryDelayMs() > 20); // backing off
        freeDisk(db);
        QTRY_VERIFY_WITH_TIMEOUT(!w.hasUnsaved(), 5000);
        QCOMPARE(saved.size(), 1);
        QCOMPARE(store.message(row->id)->content, text);
        QCOMPARE(store.message(row->id)->state, MessageState::Complete);
    }

    // The user's message that cannot be stored is not dropped: send fails, says why, and the
    // caller (the message box) keeps the text; nothing half-written is left.
    void userMessageOnFullDiskIsRefusedNotLost() {
        Database db(dbPath(QStringLiteral("user.sqlite")));
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        ConversationStore store(db);
        ChatController controller(store);
        QSignalSpy errors(&controller, &ChatController::errorOccurred);
        QSignalSpy requests(&controller, &ChatController::generateRequested);
        const auto c = controller.newConversation(QStringLiteral("t"));
        fillDisk(db);
        QVERIFY(!controller.send(c->id, QString(40000, QLatin1Char('q'))));
        QVERIFY(!errors.isEmpty());
        QVERIFY(requests.isEmpty());
        QVERIFY(store.messages(c->id).isEmpty());
    }

    void readOnlyControllerRefusesWrites() {
        Database db(dbPath(QStringLiteral("ro-controller.sqlite")));
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        ConversationStore store(db);
        ChatController controller(store);
        const auto c = controller.newConversation(QStringLiteral("t"));
        controller.setReadOnlyReason(QStringLiteral("the chat database is read-only"));
        QSignalSpy errors(&controller, &ChatController::errorOccurred);
        QVERIFY(!controller.send(c->id, QStringLiteral("hi")));
        QVERIFY(!controller.newConversation());
        QVERIFY(!controller.deleteConversation(c->id));
        QCOMPARE(errors.size(), 3);
        QCOMPARE(errors.first().at(0).toString(), QStringLiteral("the chat database is read-only"));
        QVERIFY(store.messages(c->id).isEmpty());
        QVERIFY(store.conversation(c->id));
    }
};

QTEST_GUILESS_MAIN(TestAppDbFailures)
#include "tst_app_db_failures.moc"
