// Streams text into a chat database until killed: the stand-in for the app generating an
// answer when the user (or the OOM killer) sends SIGKILL. Usage: helper DB_PATH [INTERVAL_MS]
// Prints "ready <message id>" and then, for every token appended, "<n>" on stdout — after the
// token was handed to the StreamingMessageWriter (not necessarily written to the file yet).
// helper --hold-lock DIR: takes the app's instance lock of data folder DIR, prints "locked" and
// waits to be killed (the other app instance of tst_app_db_failures).
#include <QCoreApplication>
#include <QTimer>
#include <cstdio>

#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "app/services/instance_lock.h"
#include "app/services/streaming_message_writer.h"

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() == 3 && args[1] == QLatin1String("--hold-lock")) {
        llmwb::InstanceLock lock(args[2]);
        if (lock.tryAcquire() != llmwb::InstanceLock::Result::Acquired) {
            std::fprintf(stderr, "%s\n", qPrintable(lock.errorString()));
            return 1;
        }
        std::printf("locked\n");
        std::fflush(stdout);
        return app.exec();
    }
    if (args.size() < 2) {
        std::fprintf(stderr, "usage: %s DB_PATH [TOKEN_INTERVAL_MS]\n", argv[0]);
        return 2;
    }
    llmwb::Database db(args[1]);
    if (!db.open()) {
        std::fprintf(stderr, "%s\n", qPrintable(db.errorString()));
        return 1;
    }
    llmwb::ConversationStore store(db);
    auto conv = store.createConversation(QStringLiteral("crash test"));
    llmwb::ChatMessage m;
    m.conversationId = conv ? conv->id : 0;
    m.role = QStringLiteral("assistant");
    m.state = llmwb::MessageState::Streaming;
    auto row = store.addMessage(m);
    if (!row) {
        std::fprintf(stderr, "%s\n", qPrintable(store.errorString()));
        return 1;
    }
    llmwb::StreamingMessageWriter writer(store, row->id);
    std::printf("ready %lld\n", static_cast<long long>(row->id));
    std::fflush(stdout);

    int n = 0;
    QTimer tick;
    QObject::connect(&tick, &QTimer::timeout, [&] {
        writer.append(QStringLiteral("tok%1 ").arg(n));
        std::printf("%d\n", n);
        std::fflush(stdout);
        ++n;
    });
    tick.start(args.size() > 2 ? args[2].toInt() : 5);
    return app.exec();
}
