// kill -9 during streaming: a real process streams into the database through
// StreamingMessageWriter; it is killed with SIGKILL mid-stream. Reopening must find an intact
// database (integrity_check ok) holding every token streamed up to ~1 s before the kill, and
// the message marked 'interrupted'.
#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "app/services/conversation_store.h"
#include "app/services/database.h"

using namespace llmwb;

class TestAppCrashRecovery : public QObject {
    Q_OBJECT

  private slots:
    void killDuringStreaming() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath("chat.sqlite");

        QProcess proc;
        proc.setProcessChannelMode(QProcess::SeparateChannels);
        proc.start(QStringLiteral(LLMWB_STREAM_WRITER_HELPER), {path, QStringLiteral("5")});
        QVERIFY2(proc.waitForStarted(10000), qPrintable(proc.errorString()));

        // Record when each token index was reported as handed to the writer.
        QElapsedTimer clock;
        clock.start();
        QList<QPair<qint64, int>> reported; // (ms on our clock, token index)
        qint64 messageId = -1;
        QByteArray buffer;
        auto readLines = [&] {
            buffer += proc.readAllStandardOutput();
            qsizetype nl;
            while ((nl = buffer.indexOf('\n')) >= 0) {
                const QByteArray line = buffer.left(nl).trimmed();
                buffer.remove(0, nl + 1);
                if (line.startsWith("ready "))
                    messageId = line.mid(6).toLongLong();
                else if (!line.isEmpty())
                    reported.append({clock.elapsed(), line.toInt()});
            }
        };
        // Stream for about 2.5 s after the first token.
        qint64 firstTokenAt = -1;
        while (clock.elapsed() < 20000) {
            proc.waitForReadyRead(50);
            readLines();
            if (firstTokenAt < 0 && !reported.isEmpty())
                firstTokenAt = reported.first().first;
            if (firstTokenAt >= 0 && clock.elapsed() - firstTokenAt > 2500)
                break;
            QVERIFY2(proc.state() == QProcess::Running, proc.readAllStandardError().constData());
        }
        QVERIFY(messageId > 0);
        QVERIFY2(reported.size() > 50, "the helper streamed too few tokens");
        const qint64 killAt = clock.elapsed();
        proc.kill(); // SIGKILL
        QVERIFY(proc.waitForFinished(10000));
        QCOMPARE(proc.exitStatus(), QProcess::CrashExit);

        // The newest token reported at least one second before the kill must be stored.
        int mustHave = -1;
        for (const auto& [at, n] : reported) {
            if (at <= killAt - 1000)
                mustHave = n;
        }
        QVERIFY(mustHave >= 0);

        Database db(path);
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        QCOMPARE(db.integrityCheck(), QStringLiteral("ok"));
        ConversationStore store(db);
        QCOMPARE(store.recoverInterruptedMessages(), 1);
        const auto m = store.message(messageId);
        QVERIFY(m);
        QCOMPARE(m->state, MessageState::Interrupted);
        // The text is an uninterrupted prefix "tok0 tok1 ... tokK " with K >= mustHave.
        const QStringList tokens = m->content.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        QVERIFY(!tokens.isEmpty());
        for (int i = 0; i < tokens.size(); ++i)
            QCOMPARE(tokens[i], QStringLiteral("tok%1").arg(i));
        const int stored = tokens.size() - 1;
        qInfo("reported up to token %d, stored up to %d, required %d (kill at %lld ms)",
              reported.last().second, stored, mustHave, killAt);
        QVERIFY2(stored >= mustHave,
                 qPrintable(QStringLiteral("stored %1 < required %2").arg(stored).arg(mustHave)));
    }
};

QTEST_GUILESS_MAIN(TestAppCrashRecovery)
#include "tst_app_crash_recovery.moc"
