// The kill -9 trials' driver (scripts/kill9-trials.sh): the app's services as main() wires them
// (Database, ConversationStore, ChatController, EngineWorker in its own thread on the demo
// model), driven by random user actions until the script kills it with SIGKILL; then, in check
// mode, what it logged is compared with the database.
//
//   llmwb-kill9-driver run DB DATA_DIR EXPORT_DIR SEED
//     Opens DB as the app does (crash recovery included), loads DATA_DIR/kill9-alt.gguf (a
//     small written model, long answers) and switches between it and the demo model, then every
//     20-250 ms one random action: send, stop, regenerate, edit and resend, delete a message,
//     delete a conversation, new conversation, switch model, export a conversation (QSaveFile into
//     EXPORT_DIR). stdout, one flushed line per fact, each line only after the fact was read back
//     from the database (or the export file was committed):
//       M <id> <conv> <role> <state> <len> <hash>  message <id> is stored with this content
//                                                  (len UTF-16 units, hash of its UTF-8)
//       D <id>                                     message <id> is no longer stored
//       A <action> <conv> <msg>                    an action starts (its effects may be half
//                                                  done if the kill comes before "E")
//       E                                          the action is done and its effects logged
//       X <file> <hash>                            an export file was committed
//     The database is read back after every action and every 50 ms (what the streaming writer
//     flushed shows up there).
//
//   llmwb-kill9-driver check DB LOG EXPORT_DIR
//     PRAGMA integrity_check; every message whose last line is M is stored: with the same
//     content when it was final, starting with the logged text when it was still streaming
//     (a partial reply is kept up to its last flush); every D stays deleted; every X file is
//     there with its hash. Messages touched by an action cut short by the kill (A without E)
//     may show that action half done (counted as exempt). One line of figures:
//       CHECK integrity=ok messages=.. lost=.. exempt=.. partial_expected=.. partial_found=..
//             deleted=.. resurrected=.. exports=.. exports_bad=.. inflight=<action or ->
//     Exit status 1 when integrity is not ok or anything was lost.
#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QHash>
#include <QRandomGenerator>
#include <QSaveFile>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QTimer>
#include <cstdio>

#include "app/services/chat_controller.h"
#include "app/services/chat_wiring.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "app/services/engine_view.h"
#include "app/services/engine_worker.h"
#include "app/services/generation_types.h"
#include "engine/model/model_writer.h"

using namespace llmwb;

namespace {

QString hashOf(const QString& s) {
    return QString::fromLatin1(
        QCryptographicHash::hash(s.toUtf8(), QCryptographicHash::Sha1).toHex().left(16));
}

void line(const QString& s) {
    const QByteArray b = s.toUtf8() + '\n';
    std::fwrite(b.constData(), 1, size_t(b.size()), stdout);
    std::fflush(stdout);
}

struct Seen {
    qint64 conv = 0;
    MessageState state = MessageState::Complete;
    QString hash;
    qsizetype len = 0;
};

class Driver : public QObject {
  public:
    Driver(ConversationStore& store, ChatController& controller, EngineWorker* worker,
           QString dataDir, QString exportDir, quint64 seed)
        : store_(store), controller_(controller), worker_(worker), dataDir_(std::move(dataDir)),
          exportDir_(std::move(exportDir)), rng_(seed) {
        connect(&poll_, &QTimer::timeout, this, [this] { sync(); });
        connect(&act_, &QTimer::timeout, this, [this] { act(); });
        act_.setSingleShot(true);
    }

    void start() {
        sync();
        poll_.start(50);
        act_.start(50);
    }

    // Logs what changed in the database since the last look.
    void sync() {
        QHash<qint64, Seen> now;
        for (const Conversation& c : store_.conversations()) {
            for (const ChatMessage& m : store_.messages(c.id)) {
                Seen s{c.id, m.state, hashOf(m.content), m.content.size()};
                now.insert(m.id, s);
                auto it = seen_.constFind(m.id);
                if (it == seen_.constEnd() || it->hash != s.hash || it->state != s.state)
                    line(QStringLiteral("M %1 %2 %3 %4 %5 %6")
                             .arg(m.id)
                             .arg(c.id)
                             .arg(m.role, messageStateName(m.state))
                             .arg(s.len)
                             .arg(s.hash));
            }
        }
        for (auto it = seen_.constBegin(); it != seen_.constEnd(); ++it)
            if (!now.contains(it.key()))
                line(QStringLiteral("D %1").arg(it.key()));
        seen_ = now;
    }

  private:
    int pick(int n) { return n <= 0 ? 0 : int(rng_.bounded(n)); }

    QList<qint64> idleConversations() {
        QList<qint64> ids;
        for (const Conversation& c : store_.conversations())
            if (!controller_.isGenerating(c.id))
                ids << c.id;
        return ids;
    }

    QString text() {
        static const char* words[] = {"hello", "你好", "tell", "me",     "about", "the", "sea",
                                      "and",   "🙂", "why",  "blocks", "cache", "a",   "story"};
        QString t;
        const int n = 1 + pick(8);
        for (int i = 0; i < n; ++i)
            t += QString::fromUtf8(words[pick(int(std::size(words)))]) + QLatin1Char(' ');
        return t + QString::number(rng_.generate());
    }

    void begin(const char* action, qint64 conv, qint64 msg) {
        line(QStringLiteral("A %1 %2 %3").arg(QLatin1String(action)).arg(conv).arg(msg));
    }
    void end() {
        sync();
        line(QStringLiteral("E"));
    }

    void act() {
        act_.start(20 + pick(230));
        const QList<Conversation> convs = store_.conversations();
        const QList<qint64> idle = idleConversations();
        const int r = pick(100);
        if (convs.size() < 2 || (r < 5 && convs.size() < 8)) {
            begin("new", 0, 0);
            controller_.newConversation();
            return end();
        }
        if (r < 40) { // send in an idle conversation
            if (idle.isEmpty())
                return;
            const qint64 c = idle[pick(int(idle.size()))];
            if (store_.messages(c).size() > 24) { // keep the database small
                begin("delete_conv", c, 0);
                controller_.deleteConversation(c);
                return end();
            }
            begin("send", c, 0);
            controller_.send(c, text());
            return end();
        }
        if (r < 50) { // stop a generating conversation
            for (const Conversation& c : convs)
                if (controller_.isGenerating(c.id)) {
                    begin("stop", c.id, 0);
                    controller_.stop(c.id);
                    return end();
                }
            return;
        }
        if (idle.isEmpty())
            return;
        const qint64 c = idle[pick(int(idle.size()))];
        const QList<ChatMessage> msgs = store_.messages(c);
        QList<qint64> users, answers;
        for (const ChatMessage& m : msgs)
            (m.role == QLatin1String("user") ? users : answers) << m.id;
        if (r < 60 && !answers.isEmpty()) {
            const qint64 m = answers.last();
            begin("regenerate", c, m);
            controller_.regenerate(m);
            return end();
        }
        if (r < 70 && !users.isEmpty()) {
            const qint64 m = users[pick(int(users.size()))];
            begin("edit", c, m);
            controller_.editAndResend(m, text());
            return end();
        }
        if (r < 78 && !msgs.isEmpty()) {
            const qint64 m = msgs[pick(int(msgs.size()))].id;
            begin("delete_msg", c, m);
            controller_.deleteMessage(m);
            return end();
        }
        if (r < 82 && convs.size() > 3) {
            begin("delete_conv", c, 0);
            controller_.deleteConversation(c);
            return end();
        }
        if (r < 84) { // switch model (answers that are streaming end as the worker decides)
            begin("switch_model", 0, 0);
            alt_ = !alt_;
            if (!alt_)
                QMetaObject::invokeMethod(worker_, "loadModel", Qt::QueuedConnection,
                                          Q_ARG(QString, dataDir_ + "/kill9-alt.gguf"));
            else
                QMetaObject::invokeMethod(worker_, "loadDemoModel", Qt::QueuedConnection,
                                          Q_ARG(QString, dataDir_));
            return end();
        }
        // Export, as File > Export conversation does (QSaveFile: all or nothing).
        const bool json = pick(2) == 0;
        const QByteArray bytes = json ? store_.exportJson(c) : store_.exportMarkdown(c).toUtf8();
        const QString name = QStringLiteral("conv-%1.%2").arg(c).arg(json ? "json" : "md");
        begin("export", c, 0);
        QSaveFile f(QDir(exportDir_).filePath(name));
        if (f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size() && f.commit())
            line(QStringLiteral("X %1 %2").arg(name, hashOf(QString::fromUtf8(bytes))));
        end();
    }

    ConversationStore& store_;
    ChatController& controller_;
    EngineWorker* worker_;
    QString dataDir_, exportDir_;
    QRandomGenerator rng_;
    QTimer poll_, act_;
    QHash<qint64, Seen> seen_;
    bool alt_ = false;
};

int run(const QStringList& args) {
    if (args.size() != 6) {
        std::fprintf(stderr, "usage: llmwb-kill9-driver run DB DATA_DIR EXPORT_DIR SEED\n");
        return 2;
    }
    const QString dataDir = args[3];
    QDir().mkpath(dataDir);
    QDir().mkpath(args[4]);
    // The second model of "switch model" (written once, atomically).
    const QString alt = dataDir + "/kill9-alt.gguf";
    if (!QFile::exists(alt)) {
        ModelWriterSpec spec; // qwen2, demo tokenizer + ChatML
        spec.seed = 5;
        spec.hidden_size = 512;        // a few hundred tokens/s on one thread: answers stream for
        spec.intermediate_size = 1024; // seconds, across several flushes
        spec.num_layers = 4;
        spec.num_heads = 8;
        spec.num_kv_heads = 2;
        spec.max_position = 8192;
        const QString tmp = alt + ".tmp";
        if (Status st = write_model(spec, tmp.toStdString()); !st) {
            std::fprintf(stderr, "%s\n", st.message().c_str());
            return 1;
        }
        QFile::rename(tmp, alt);
    }
    registerGenerationTypes();
    registerEngineViewTypes();
    Database db(args[2]);
    if (!db.open()) {
        std::fprintf(stderr, "%s\n", qPrintable(db.errorString()));
        return 1;
    }
    ConversationStore store(db);
    line(QStringLiteral("RECOVERED %1").arg(store.recoverInterruptedMessages()));
    ChatController controller(store);
    // Long answers (the written model has random weights: it never ends early), so that kills
    // land while answers stream and flush.
    SamplingSettings sampling;
    sampling.maxTokens = 3000;
    controller.setDefaultSampling(sampling);

    QThread engineThread;
    auto* worker = new EngineWorker(1);
    worker->moveToThread(&engineThread);
    QObject::connect(&engineThread, &QThread::finished, worker, &QObject::deleteLater);
    engineThread.start();
    connectChatToWorker(controller, worker);

    Driver driver(store, controller, worker, dataDir, args[4], args[5].toULongLong());
    bool started = false;
    QObject::connect(worker, &EngineWorker::modelLoaded, &controller, [&](const ModelMetadata& m) {
        controller.setModelName(m.name);
        if (!started) {
            started = true;
            line(QStringLiteral("READY"));
            driver.start();
        }
    });
    QObject::connect(worker, &EngineWorker::loadFailed, &controller, [](const QString& why) {
        line(QStringLiteral("# load failed: ") + QString(why).replace('\n', ' '));
    });
    QMetaObject::invokeMethod(worker, "loadModel", Qt::QueuedConnection, Q_ARG(QString, alt));
    // Never outlives a script that failed to kill it.
    QTimer::singleShot(120000, qApp, &QCoreApplication::quit);
    const int rc = QCoreApplication::exec();
    worker->stopAll();
    engineThread.quit();
    engineThread.wait();
    controller.shutdown();
    return rc;
}

struct Logged {
    qint64 conv = 0;
    QString state, hash;
    qsizetype len = 0;
    bool deleted = false;
};

int check(const QStringList& args) {
    if (args.size() != 5) {
        std::fprintf(stderr, "usage: llmwb-kill9-driver check DB LOG EXPORT_DIR\n");
        return 2;
    }
    QFile log(args[3]);
    if (!log.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "%s: cannot read\n", qPrintable(args[3]));
        return 2;
    }
    QHash<qint64, Logged> msgs;
    QHash<QString, QString> exports;
    QStringList inflight; // the last A line without its E
    for (const QByteArray& raw : log.readAll().split('\n')) {
        const QStringList f = QString::fromUtf8(raw).split(QLatin1Char(' '));
        if (f[0] == QLatin1String("M") && f.size() == 7) {
            Logged& l = msgs[f[1].toLongLong()];
            l.conv = f[2].toLongLong();
            l.state = f[4];
            l.len = f[5].toLongLong();
            l.hash = f[6];
            l.deleted = false;
        } else if (f[0] == QLatin1String("D") && f.size() == 2) {
            msgs[f[1].toLongLong()].deleted = true;
        } else if (f[0] == QLatin1String("A") && f.size() == 4) {
            inflight = f;
        } else if (f[0] == QLatin1String("E") && f.size() == 1) {
            inflight.clear();
        } else if (f[0] == QLatin1String("X") && f.size() == 3 && f[2].size() == 16) {
            exports.insert(f[1], f[2]);
        } // anything else: a comment, or the line the kill cut short
    }

    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), "check");
    db.setDatabaseName(args[2]);
    if (!db.open()) {
        std::printf("CHECK integrity=cannot-open\n");
        return 1;
    }
    QStringList findings;
    {
        QSqlQuery q(db);
        if (!q.exec(QStringLiteral("PRAGMA integrity_check")))
            findings << q.lastError().text();
        while (q.next())
            findings << q.value(0).toString();
    }
    const bool integrity = findings == QStringList{QStringLiteral("ok")};
    const QString action = inflight.size() == 4 ? inflight[1] : QString();
    const qint64 actionConv = inflight.size() == 4 ? inflight[2].toLongLong() : -1;
    const qint64 actionMsg = inflight.size() == 4 ? inflight[3].toLongLong() : -1;
    int checked = 0, lost = 0, exempt = 0, partialExpected = 0, partialFound = 0, deleted = 0,
        resurrected = 0, exportsBad = 0;
    QSqlQuery q(db);
    q.prepare(QStringLiteral("SELECT content, state FROM messages WHERE id = ?"));
    for (auto it = msgs.constBegin(); it != msgs.constEnd(); ++it) {
        const Logged& l = it.value();
        q.bindValue(0, it.key());
        const bool found = q.exec() && q.next();
        const QString content = found ? q.value(0).toString() : QString();
        if (l.deleted) {
            ++deleted;
            if (found) {
                ++resurrected;
                std::printf("  message %lld was deleted and is back\n",
                            static_cast<long long>(it.key()));
            }
            continue;
        }
        ++checked;
        const bool streaming = l.state == QLatin1String("streaming");
        if (streaming && l.len > 0)
            ++partialExpected;
        bool ok = false;
        if (found && streaming)
            ok = content.size() >= l.len && hashOf(content.left(l.len)) == l.hash;
        else if (found)
            ok = hashOf(content) == l.hash;
        if (ok) {
            if (streaming && l.len > 0)
                ++partialFound;
            continue;
        }
        // The action in flight at the kill may have changed or removed it.
        const bool removes =
            action == QLatin1String("delete_conv") || action == QLatin1String("regenerate") ||
            action == QLatin1String("edit") || action == QLatin1String("delete_msg");
        if (removes && l.conv == actionConv &&
            (action != QLatin1String("delete_msg") || it.key() == actionMsg)) {
            ++exempt;
            continue;
        }
        ++lost;
        std::printf("  message %lld (%s, %lld chars) %s\n", static_cast<long long>(it.key()),
                    qPrintable(l.state), static_cast<long long>(l.len),
                    found ? qPrintable("differs: now " + QString::number(content.size()) +
                                       " chars, state " + q.value(1).toString())
                          : "is missing");
    }
    for (auto it = exports.constBegin(); it != exports.constEnd(); ++it) {
        QFile f(QDir(args[4]).filePath(it.key()));
        if (!f.open(QIODevice::ReadOnly) || hashOf(QString::fromUtf8(f.readAll())) != it.value()) {
            // A later export of the same conversation replaces the file (its X line may be the
            // one the kill cut short): only the last logged hash counts, so this is a loss.
            ++exportsBad;
            std::printf("  export %s differs or is missing\n", qPrintable(it.key()));
        }
    }
    std::printf(
        "CHECK integrity=%s messages=%d lost=%d exempt=%d partial_expected=%d "
        "partial_found=%d deleted=%d resurrected=%d exports=%d exports_bad=%d inflight=%s\n",
        integrity ? "ok" : qPrintable("FAILED:" + findings.join(';').left(200)), checked, lost,
        exempt, partialExpected, partialFound, deleted, resurrected, int(exports.size()),
        exportsBad, action.isEmpty() ? "-" : qPrintable(action));
    return integrity && lost == 0 && resurrected == 0 && exportsBad == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() >= 2 && args[1] == QLatin1String("run"))
        return run(args);
    if (args.size() >= 2 && args[1] == QLatin1String("check"))
        return check(args);
    std::fprintf(stderr, "usage: llmwb-kill9-driver run DB DATA_DIR EXPORT_DIR SEED\n"
                         "       llmwb-kill9-driver check DB LOG EXPORT_DIR\n");
    return 2;
}
