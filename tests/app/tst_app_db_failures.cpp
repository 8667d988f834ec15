// The chat database when things go wrong: a full disk while an answer streams (SQLite's
// max_page_count makes writes fail with SQLITE_FULL, as a full disk does), a damaged file
// (quick check, salvage), a read-only file, two instances on one data folder.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QSqlQuery>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QtTest>
#include <unistd.h>

#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "app/services/db_salvage.h"
#include "app/services/instance_lock.h"
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

// A chat database as the app writes it: conversations of user/assistant turns (about 1 KB per
// message, so the file has tens of pages). Returns the number of messages.
int buildChats(const QString& path, int conversations, int turns) {
    Database db(path);
    if (!db.open())
        return -1;
    ConversationStore store(db);
    int messages = 0;
    for (int c = 0; c < conversations; ++c) {
        const auto conv = store.createConversation(QStringLiteral("Chat %1").arg(c));
        for (int t = 0; t < turns; ++t) {
            ChatMessage m;
            m.conversationId = conv->id;
            m.role = t % 2 ? QStringLiteral("assistant") : QStringLiteral("user");
            m.content = QStringLiteral("message %1.%2 ").arg(c).arg(t).repeated(60);
            if (!store.addMessage(m))
                return -1;
            ++messages;
        }
    }
    return messages;
}

// Overwrites bytes at offset with garbage (the 8 KB at page 7).
bool corrupt(const QString& path, qint64 offset, int bytes) {
    QFile f(path);
    if (!f.open(QIODevice::ReadWrite) || !f.seek(offset))
        return false;
    QByteArray junk(bytes, '\0');
    QRandomGenerator rng(quint32(offset) ^ 0x5eed);
    for (int i = 0; i < bytes; ++i)
        junk[i] = char(rng.bounded(256));
    return f.write(junk) == bytes;
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

    // The user's message and its answer's row are stored together or not at all: when the
    // answer's row is refused, the user's message is not left behind (the message box keeps
    // it, and sending again does not store it twice).
    void userMessageAndAnswerRowAreAtomic() {
        Database db(dbPath(QStringLiteral("atomic.sqlite")));
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        ConversationStore store(db);
        ChatController controller(store);
        QSignalSpy added(&controller, &ChatController::messageAdded);
        QSignalSpy requests(&controller, &ChatController::generateRequested);
        const auto c = controller.newConversation(QStringLiteral("t"));
        QSqlQuery q(db.connection());
        QVERIFY(q.exec(QStringLiteral(
            "CREATE TEMP TRIGGER refuse_answer BEFORE INSERT ON main.messages "
            "WHEN new.role = 'assistant' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); "
            "END")));
        QVERIFY(!controller.send(c->id, QStringLiteral("kept")));
        QVERIFY(store.messages(c->id).isEmpty());
        QVERIFY(added.isEmpty());
        QVERIFY(requests.isEmpty());
        QVERIFY(store.errorString().contains(QStringLiteral("full")));
        QVERIFY(q.exec(QStringLiteral("DROP TRIGGER temp.refuse_answer")));
        QVERIFY(controller.send(c->id, QStringLiteral("kept")));
        const auto stored = store.messages(c->id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored.at(0).content, QStringLiteral("kept"));
        QCOMPARE(added.size(), 2);
        QCOMPARE(requests.size(), 1);
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

    // ---- damaged files

    void quickCheckFindsMidFileDamage() {
        const QString path = dbPath(QStringLiteral("check.sqlite"));
        QVERIFY(buildChats(path, 4, 10) > 0);
        {
            Database db(path);
            QVERIFY(db.open());
            QCOMPARE(db.quickCheck(), QStringLiteral("ok"));
        }
        QVERIFY(corrupt(path, 4096 * 6, 8192));
        Database db(path);
        // The header and schema pages are intact: it opens, and only the check tells.
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        QVERIFY(db.quickCheck() != QLatin1String("ok"));
    }

    // Salvage of the case and a few other positions: the figures are printed (the
    // report quotes them); every message on a readable page is recovered, the damaged file is
    // kept, the new file is sound and the app's store reads it.
    void salvageRecoversReadableRows_data() {
        QTest::addColumn<int>("conversations");
        QTest::addColumn<int>("turns");
        QTest::addColumn<qint64>("offset");
        QTest::addColumn<int>("bytes");
        QTest::addColumn<int>("atLeast"); // messages that must come back
        // The file: one conversation of four messages, 8 KB of garbage at page 7.
        QTest::newRow("4 msgs, 8 KB at page 7") << 1 << 4 << qint64(4096 * 6) << 8192 << 4;
        QTest::newRow("200 msgs, 8 KB at page 7") << 10 << 20 << qint64(4096 * 6) << 8192 << 150;
        QTest::newRow("200 msgs, 4 KB at page 3") << 10 << 20 << qint64(4096 * 2) << 4096 << 150;
        QTest::newRow("200 msgs, 16 KB at page 20")
            << 10 << 20 << qint64(4096 * 19) << 16384 << 150;
        QTest::newRow("200 msgs, 4 KB at page 40") << 10 << 20 << qint64(4096 * 39) << 4096 << 150;
        QTest::newRow("200 msgs, 32 KB at page 60")
            << 10 << 20 << qint64(4096 * 59) << 32768 << 150;
    }
    void salvageRecoversReadableRows() {
        QFETCH(int, conversations);
        QFETCH(int, turns);
        QFETCH(qint64, offset);
        QFETCH(int, bytes);
        QFETCH(int, atLeast);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("llmwb.sqlite"));
        const int total = buildChats(path, conversations, turns);
        QCOMPARE(total, conversations * turns);
        const qint64 size = QFileInfo(path).size();
        QVERIFY2(offset + bytes <= size, qPrintable(QString::number(size)));
        QFile orig(path);
        QVERIFY(orig.open(QIODevice::ReadOnly));
        QVERIFY(corrupt(path, offset, bytes));
        QVERIFY(orig.seek(0));
        const QByteArray damagedBytes = orig.readAll();
        orig.close();

        const SalvageReport r = DbSalvage::salvage(path);
        QVERIFY2(r.ok, qPrintable(r.error));
        qInfo("%s (file %lld bytes): recovered %lld/%d conversations, %lld/%d messages, %lld "
              "unreadable, %lld placeholders, %lld range reads",
              QTest::currentDataTag(), size, r.copied(QStringLiteral("conversations")),
              conversations, r.copied(QStringLiteral("messages")), total,
              r.unreadable(QStringLiteral("messages")), r.placeholderConversations, r.queries);
        // The damaged file is kept, byte for byte, under a timestamped name.
        QVERIFY(r.damagedPath.startsWith(path + QStringLiteral(".damaged-")));
        QFile kept(r.damagedPath);
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), damagedBytes);
        // Most messages sit on pages the garbage did not touch (4-32 KB of ~470 KB).
        QVERIFY2(r.copied(QStringLiteral("messages")) >= atLeast, qPrintable(r.summary()));
        QVERIFY(r.copied(QStringLiteral("messages")) <= total);

        Database db(path);
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        QCOMPARE(db.quickCheck(), QStringLiteral("ok"));
        ConversationStore store(db);
        const QList<Conversation> convs = store.conversations();
        QVERIFY(!convs.isEmpty());
        qint64 messages = 0;
        for (const Conversation& c : convs) {
            for (const ChatMessage& m : store.messages(c.id)) {
                QVERIFY(m.content.startsWith(QStringLiteral("message ")));
                ++messages;
            }
        }
        QCOMPARE(messages, r.copied(QStringLiteral("messages")));
        // Search works on the rebuilt index.
        QVERIFY(!store.search(QStringLiteral("message")).isEmpty());
    }

    void salvageOfAnUndamagedFileCopiesEverything() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("llmwb.sqlite"));
        QCOMPARE(buildChats(path, 3, 4), 12);
        const SalvageReport r = DbSalvage::salvage(path);
        QVERIFY2(r.ok, qPrintable(r.error));
        QCOMPARE(r.copied(QStringLiteral("conversations")), 3);
        QCOMPARE(r.copied(QStringLiteral("messages")), 12);
        QCOMPARE(r.unreadable(QStringLiteral("messages")), 0);
        QVERIFY(QFileInfo::exists(r.damagedPath));
        QVERIFY(r.summary().contains(QStringLiteral("12")));
        // The folder holds the new database and the kept file, no debris of the salvage.
        QStringList files = QDir(dir.path()).entryList(QDir::Files);
        files.removeAll(QStringLiteral("llmwb.sqlite"));
        QCOMPARE(files, QStringList{QFileInfo(r.damagedPath).fileName()});
    }

    void salvageOfGarbageKeepsTheFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("llmwb.sqlite"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(8192, 'z'));
        f.close();
        const SalvageReport r = DbSalvage::salvage(path);
        QVERIFY(!r.ok);
        QVERIFY(!r.error.isEmpty());
        // Nothing changed: the file is back under its name, no debris.
        QFile back(path);
        QVERIFY(back.open(QIODevice::ReadOnly));
        QCOMPARE(back.readAll(), QByteArray(8192, 'z'));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1);
    }

    // ---- read-only

    void readOnlyFileIsDetectedAtOpen() {
        if (::geteuid() == 0)
            QSKIP("root writes read-only files; run as a user (see the read-only file system "
                  "repro in the report)");
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("llmwb.sqlite"));
        QVERIFY(buildChats(path, 1, 2) == 2);
        QVERIFY(QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::ReadGroup));
        Database db(path);
        QVERIFY(!db.open());
        QCOMPARE(db.problem(), Database::Problem::ReadOnly);
        QVERIFY2(db.errorString().contains(QStringLiteral("read-only")) &&
                     db.errorString().contains(path),
                 qPrintable(db.errorString()));
        QVERIFY(!Database::writeProblem(path).isEmpty());
        QVERIFY2(db.openReadOnly(), qPrintable(db.errorString()));
        ConversationStore store(db);
        QCOMPARE(store.conversations().size(), 1);
    }

    // The file is writable but its folder is not: WAL cannot make its journal files there.
    void readOnlyFolderIsDetectedAtOpen() {
        if (::geteuid() == 0)
            QSKIP("root writes read-only folders; run as a user");
        QTemporaryDir dir;
        const QString sub = dir.filePath(QStringLiteral("data"));
        QVERIFY(QDir().mkpath(sub));
        const QString path = sub + QStringLiteral("/llmwb.sqlite");
        QVERIFY(buildChats(path, 1, 2) == 2);
        QVERIFY(QFile::setPermissions(sub, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
        Database db(path);
        const bool opened = db.open();
        QVERIFY(QFile::setPermissions(sub, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                               QFileDevice::ExeOwner));
        QVERIFY(!opened);
        QCOMPARE(db.problem(), Database::Problem::ReadOnly);
        QVERIFY2(db.errorString().contains(QStringLiteral("folder")), qPrintable(db.errorString()));
    }

    // Browsing on purpose: reads work, every write fails, the file is not changed.
    void openReadOnlyReadsAndNeverWrites() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("llmwb.sqlite"));
        QCOMPARE(buildChats(path, 2, 3), 6);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray before = f.readAll();
        f.close();
        Database db(path);
        QVERIFY2(db.openReadOnly(), qPrintable(db.errorString()));
        QVERIFY(db.isReadOnly());
        ConversationStore store(db);
        const auto convs = store.conversations();
        QCOMPARE(convs.size(), 2);
        QCOMPARE(store.messages(convs.first().id).size(), 3);
        QVERIFY(!store.createConversation(QStringLiteral("x")));
        QVERIFY2(store.errorString().contains(QStringLiteral("readonly"), Qt::CaseInsensitive),
                 qPrintable(store.errorString()));
        db.close();
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), before);
    }

    // ---- one instance per data folder

    void secondInstanceIsRefused() {
        QTemporaryDir dir;
        InstanceLock first(dir.path());
        QCOMPARE(first.tryAcquire(), InstanceLock::Result::Acquired);
        QVERIFY(QFileInfo::exists(first.lockFilePath()));
        InstanceLock second(dir.path());
        QCOMPARE(second.tryAcquire(), InstanceLock::Result::HeldByOther);
        QCOMPARE(second.ownerPid(), QCoreApplication::applicationPid());
        QVERIFY2(
            second.errorString().contains(QDir::toNativeSeparators(dir.path())) &&
                second.errorString().contains(QString::number(QCoreApplication::applicationPid())),
            qPrintable(second.errorString()));
        first.release();
        QCOMPARE(second.tryAcquire(), InstanceLock::Result::Acquired);
    }

    // A lock left by a process that died (kill -9, a crash) is taken over at once.
    void staleLockOfADeadProcessIsTakenOver() {
        QTemporaryDir dir;
        QProcess p;
        p.start(QStringLiteral("/bin/true"), {});
        QVERIFY(p.waitForFinished(10000));
        const qint64 deadPid = p.processId() > 0 ? p.processId() : 999999;
        QFile lock(QDir(dir.path()).filePath(QLatin1String(InstanceLock::kFileName)));
        QVERIFY(lock.open(QIODevice::WriteOnly));
        lock.write(QByteArray::number(deadPid) + '\n' +
                   QCoreApplication::applicationName().toUtf8() + '\n' +
                   QSysInfo::machineHostName().toUtf8() + '\n');
        lock.close();
        InstanceLock l(dir.path());
        QCOMPARE(l.tryAcquire(), InstanceLock::Result::Acquired);
    }

    // Another process holds the folder: refused, naming its PID; killed with SIGKILL (no
    // cleanup), its lock is taken over.
    void lockOfAnotherProcess() {
        QTemporaryDir dir;
        QProcess other;
        other.start(QStringLiteral(LLMWB_STREAM_WRITER_HELPER),
                    {QStringLiteral("--hold-lock"), dir.path()});
        QVERIFY(other.waitForStarted(10000));
        QVERIFY(other.waitForReadyRead(10000));
        QCOMPARE(other.readLine().trimmed(), QByteArray("locked"));
        InstanceLock l(dir.path());
        QCOMPARE(l.tryAcquire(), InstanceLock::Result::HeldByOther);
        QCOMPARE(l.ownerPid(), other.processId());
        QVERIFY(l.errorString().contains(QString::number(other.processId())));
        other.kill();
        QVERIFY(other.waitForFinished(10000));
        QCOMPARE(l.tryAcquire(), InstanceLock::Result::Acquired);
    }

    // A lock of a running process is never stale by age (QLockFile's default is 30 s).
    void liveLockIsNotStaleByAge() {
        QTemporaryDir dir;
        InstanceLock first(dir.path());
        QCOMPARE(first.tryAcquire(), InstanceLock::Result::Acquired);
        const QDateTime old = QDateTime::currentDateTime().addSecs(-3600);
        QFile f(first.lockFilePath());
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.setFileTime(old, QFileDevice::FileModificationTime));
        f.close();
        InstanceLock second(dir.path());
        QCOMPARE(second.tryAcquire(), InstanceLock::Result::HeldByOther);
    }
};

QTEST_GUILESS_MAIN(TestAppDbFailures)
#include "tst_app_db_failures.moc"
