// Chat storage on real SQLite files: migrations, CRUD, cascade delete, FTS search (incl. CJK),
// export, throttled streaming writes, crash recovery state, and bad files.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

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

ChatMessage makeMessage(qint64 conversationId, const QString& role, const QString& content) {
    ChatMessage m;
    m.conversationId = conversationId;
    m.role = role;
    m.content = content;
    return m;
}

QString plainSnippet(QString s) {
    s.remove(QChar(SearchHit::kMatchBegin));
    s.remove(QChar(SearchHit::kMatchEnd));
    return s;
}

} // namespace

class TestAppStorage : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString dbPath(const char* name) { return dir_.filePath(QString::fromLatin1(name)); }

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void migratesFromEmpty() {
        Database db(dbPath("empty.sqlite"));
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        QCOMPARE(db.schemaVersion(), Database::kLatestVersion);
        QCOMPARE(scalar(db, "PRAGMA journal_mode").toString(), QStringLiteral("wal"));
        QCOMPARE(scalar(db, "PRAGMA foreign_keys").toInt(), 1);
        QCOMPARE(scalar(db, "PRAGMA synchronous").toInt(), 1); // NORMAL
        for (const char* table : {"conversations", "messages", "presets", "bench_runs",
                                  "messages_fts", "schema_version"}) {
            QCOMPARE(scalar(db, QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name='%1'")
                                    .arg(QLatin1String(table)))
                         .toInt(),
                     1);
        }
        QCOMPARE(scalar(db, "SELECT count(*) FROM schema_version").toInt(),
                 Database::kLatestVersion);
        db.close();
        // Reopening applies nothing twice.
        QVERIFY(db.open());
        QCOMPARE(scalar(db, "SELECT count(*) FROM schema_version").toInt(),
                 Database::kLatestVersion);
        QCOMPARE(db.integrityCheck(), QStringLiteral("ok"));
    }

    void migratesFromVersion1() {
        const QString path = dbPath("v1.sqlite");
        {
            Database db(path);
            QVERIFY2(db.open(1), qPrintable(db.errorString()));
            QCOMPARE(db.schemaVersion(), 1);
            QCOMPARE(
                scalar(db, "SELECT count(*) FROM sqlite_master WHERE name='messages_fts'").toInt(),
                0);
            QSqlQuery q(db.connection());
            QVERIFY(q.exec("INSERT INTO conversations(id, title, created_at, updated_at) "
                           "VALUES (7, 'old chat', 1, 1)"));
            QVERIFY(q.exec("INSERT INTO messages(conversation_id, role, content, created_at) "
                           "VALUES (7, 'user', 'written before full-text search existed', 1)"));
        }
        Database db(path);
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        QCOMPARE(db.schemaVersion(), Database::kLatestVersion);
        ConversationStore store(db);
        const auto hits = store.search(QStringLiteral("full-text"));
        QCOMPARE(hits.size(), 1);
        QCOMPARE(hits[0].conversationId, 7);
        QCOMPARE(hits[0].conversationTitle, QStringLiteral("old chat"));
        // New rows are indexed by the triggers created in version 2.
        QVERIFY(store.addMessage(makeMessage(7, "assistant", "a newer answer")));
        QCOMPARE(store.search(QStringLiteral("newer")).size(), 1);
    }

    // Version 3 adds messages.finish_reason: the answers of a version-2 database keep their
    // state and read with an unknown finish reason; new answers store theirs.
    void migratesFromVersion2() {
        const QString path = dbPath("v2.sqlite");
        {
            Database db(path);
            QVERIFY2(db.open(2), qPrintable(db.errorString()));
            QSqlQuery q(db.connection());
            QVERIFY(q.exec("INSERT INTO conversations(id, title, created_at, updated_at) "
                           "VALUES (3, 'v2 chat', 1, 1)"));
            QVERIFY(q.exec("INSERT INTO messages(id, conversation_id, role, content, created_at, "
                           "state) VALUES (30, 3, 'assistant', 'an old answer', 1, 'stopped')"));
        }
        Database db(path);
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        QCOMPARE(db.schemaVersion(), Database::kLatestVersion);
        ConversationStore store(db);
        const auto old = store.message(30);
        QVERIFY(old);
        QCOMPARE(old->state, MessageState::Stopped);
        QCOMPARE(old->finishReason, FinishReason::None);
        QVERIFY(scalar(db, "SELECT finish_reason FROM messages WHERE id = 30").isNull());
    }

    // The finish reason goes into the database as OpenAI's finish_reason spelling and comes back
    // as the same enum value, through addMessage and finishMessage; an unknown stored value
    // (external input) reads as None.
    void finishReasonRoundTrip() {
        Database db(dbPath("finish.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        const auto c = store.createConversation(QStringLiteral("finish"));
        QVERIFY(c);
        const struct {
            FinishReason reason;
            const char* stored;
        } cases[] = {{FinishReason::Stop, "stop"},      {FinishReason::Length, "length"},
                     {FinishReason::Aborted, "abort"},  {FinishReason::Context, "context"},
                     {FinishReason::KvPool, "kv_pool"}, {FinishReason::Error, "error"}};
        for (const auto& k : cases) {
            ChatMessage m = makeMessage(c->id, "assistant", "streaming…");
            m.state = MessageState::Streaming;
            const auto added = store.addMessage(m);
            QVERIFY(added);
            QCOMPARE(store.message(added->id)->finishReason, FinishReason::None);
            GenerationFigures f;
            f.completionTokens = 5;
            f.finishReason = k.reason;
            QVERIFY(store.finishMessage(added->id, MessageState::Complete, f));
            QCOMPARE(store.message(added->id)->finishReason, k.reason);
            QCOMPARE(scalar(db, QStringLiteral("SELECT finish_reason FROM messages WHERE id = %1")
                                    .arg(added->id))
                         .toString(),
                     QLatin1String(k.stored));
            // Written directly by addMessage too (an imported or copied message).
            ChatMessage direct = makeMessage(c->id, "assistant", "done");
            direct.finishReason = k.reason;
            const auto d = store.addMessage(direct);
            QVERIFY(d);
            QCOMPARE(store.message(d->id)->finishReason, k.reason);
        }
        QSqlQuery q(db.connection());
        QVERIFY(q.exec("UPDATE messages SET finish_reason = 'exploded'"));
        for (const ChatMessage& m : store.messages(c->id))
            QCOMPARE(m.finishReason, FinishReason::None);
        QCOMPARE(finishReasonFromName(QStringLiteral("length")), FinishReason::Length);
        QVERIFY(!finishReasonFromName(QString()));
    }

    // Version 4 adds messages.error: a version-3 database's answers read with no error; a failed
    // answer stores its message (bounded), a truncated one its state, and both exports carry
    // every finish reason but a normal stop, and the error message.
    void errorMessagesAndTruncationAreStoredAndExported() {
        const QString path = dbPath("v3.sqlite");
        {
            Database db(path);
            QVERIFY2(db.open(3), qPrintable(db.errorString()));
            QSqlQuery q(db.connection());
            QVERIFY(q.exec("INSERT INTO conversations(id, title, created_at, updated_at) "
                           "VALUES (4, 'v3 chat', 1, 1)"));
            QVERIFY(q.exec("INSERT INTO messages(id, conversation_id, role, content, created_at, "
                           "state, finish_reason) VALUES (40, 4, 'assistant', 'old', 1, "
                           "'error', NULL)"));
        }
        Database db(path);
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        QCOMPARE(db.schemaVersion(), Database::kLatestVersion);
        ConversationStore store(db);
        QCOMPARE(store.message(40)->state, MessageState::Error);
        QVERIFY(store.message(40)->error.isEmpty());
        QVERIFY(scalar(db, "SELECT error FROM messages WHERE id = 40").isNull());

        const auto add = [&](MessageState state, FinishReason why, const QString& error) {
            ChatMessage m = makeMessage(4, "assistant", "partial answer");
            m.state = MessageState::Streaming;
            const auto added = store.addMessage(m);
            GenerationFigures f;
            f.finishReason = why;
            f.error = error;
            f.completionTokens = 7;
            return added && store.finishMessage(added->id, state, f) ? added->id : qint64(-1);
        };
        const qint64 failed = add(MessageState::Error, FinishReason::Error,
                                  QStringLiteral("The backend failed: out of *memory*"));
        const qint64 pool = add(MessageState::Truncated, FinishReason::KvPool, {});
        const qint64 context = add(MessageState::Truncated, FinishReason::Context, {});
        const qint64 stop = add(MessageState::Complete, FinishReason::Stop, {});
        const qint64 huge = add(MessageState::Error, FinishReason::Error, QString(9000, 'e'));
        QVERIFY(failed > 0 && pool > 0 && context > 0 && stop > 0 && huge > 0);
        QCOMPARE(store.message(failed)->error,
                 QStringLiteral("The backend failed: out of *memory*"));
        QCOMPARE(store.message(failed)->finishReason, FinishReason::Error);
        QCOMPARE(store.message(pool)->state, MessageState::Truncated);
        QCOMPARE(store.message(pool)->finishReason, FinishReason::KvPool);
        QCOMPARE(scalar(db, QStringLiteral("SELECT state FROM messages WHERE id = %1").arg(pool))
                     .toString(),
                 QStringLiteral("truncated"));
        QCOMPARE(store.message(context)->finishReason, FinishReason::Context);
        QVERIFY(store.message(stop)->error.isEmpty());
        QCOMPARE(store.message(huge)->error.size(), 4000);

        const QString md = store.exportMarkdown(4);
        QVERIFY2(md.contains(QStringLiteral("error · finish: error")), qPrintable(md));
        QVERIFY2(md.contains(QStringLiteral("**Error:** The backend failed: out of *memory*")),
                 qPrintable(md));
        QVERIFY2(md.contains(QStringLiteral("truncated · finish: kv_pool")), qPrintable(md));
        QVERIFY2(md.contains(QStringLiteral("truncated · finish: context")), qPrintable(md));
        QVERIFY2(!md.contains(QStringLiteral("finish: stop")), qPrintable(md));
        const QJsonArray msgs =
            QJsonDocument::fromJson(store.exportJson(4)).object()["messages"].toArray();
        QHash<qint64, QJsonObject> byId;
        for (const auto& v : msgs)
            byId.insert(v.toObject()["id"].toInteger(), v.toObject());
        QCOMPARE(byId[failed]["error"].toString(),
                 QStringLiteral("The backend failed: out of *memory*"));
        QCOMPARE(byId[failed]["finish_reason"].toString(), QStringLiteral("error"));
        QCOMPARE(byId[pool]["finish_reason"].toString(), QStringLiteral("kv_pool"));
        QCOMPARE(byId[pool]["state"].toString(), QStringLiteral("truncated"));
        QCOMPARE(byId[context]["finish_reason"].toString(), QStringLiteral("context"));
        QVERIFY(!byId[stop].contains("error"));
    }

    void rejectsNewerSchema() {
        const QString path = dbPath("newer.sqlite");
        {
            Database db(path);
            QVERIFY(db.open());
            QSqlQuery q(db.connection());
            QVERIFY(q.exec("INSERT INTO schema_version VALUES (99, 0)"));
        }
        Database db(path);
        QVERIFY(!db.open());
        QVERIFY2(db.errorString().contains(QStringLiteral("newer")), qPrintable(db.errorString()));
        QVERIFY(!db.isOpen());
    }

    void corruptFileIsAnError() {
        const QString path = dbPath("corrupt.sqlite");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QByteArray junk(8192, '\0');
        for (int i = 0; i < junk.size(); ++i)
            junk[i] = char((i * 131 + 7) & 0xff);
        f.write(junk);
        f.close();
        Database db(path);
        QVERIFY(!db.open());
        QVERIFY2(db.errorString().contains(path), qPrintable(db.errorString()));
        QVERIFY(!db.errorString().contains(QLatin1Char('\n')));
        QVERIFY(!db.isOpen());
    }

    void unwritableFolderIsAnError() {
        // A regular file where the folder should be: mkpath fails even for root.
        const QString blocker = dbPath("blocker");
        QFile f(blocker);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        Database db(blocker + QStringLiteral("/sub/chat.sqlite"));
        QVERIFY(!db.open());
        QVERIFY2(db.errorString().contains(QStringLiteral("blocker")),
                 qPrintable(db.errorString()));
    }

    void conversationCrud() {
        Database db(dbPath("crud.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        QJsonObject sampling{{"temperature", 0.7}, {"top_p", 0.9}};
        auto a = store.createConversation("first", "be brief", sampling, "demo");
        QVERIFY(a);
        QTest::qWait(5); // distinct updated_at
        auto b = store.createConversation("second");
        QVERIFY(b);
        QVERIFY(a->id != b->id);

        auto all = store.conversations();
        QCOMPARE(all.size(), 2);
        QCOMPARE(all[0].id, b->id); // newest update first

        auto read = store.conversation(a->id);
        QVERIFY(read);
        QCOMPARE(read->title, QStringLiteral("first"));
        QCOMPARE(read->systemPrompt, QStringLiteral("be brief"));
        QCOMPARE(read->sampling.value("temperature").toDouble(), 0.7);
        QCOMPARE(read->model, QStringLiteral("demo"));

        read->title = "renamed";
        read->sampling["top_k"] = 40;
        QTest::qWait(5);
        QVERIFY(store.updateConversation(*read));
        auto again = store.conversation(a->id);
        QCOMPARE(again->title, QStringLiteral("renamed"));
        QCOMPARE(again->sampling.value("top_k").toInt(), 40);
        QCOMPARE(store.conversations()[0].id, a->id); // updated moves it first

        QVERIFY(!store.conversation(12345));
        Conversation ghost;
        ghost.id = 12345;
        QVERIFY(!store.updateConversation(ghost));
        QVERIFY(!store.errorString().isEmpty());

        QVERIFY(store.deleteConversation(b->id));
        QCOMPARE(store.conversations().size(), 1);
        QVERIFY(!store.deleteConversation(b->id));
    }

    void messageCrud() {
        Database db(dbPath("messages.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        auto c = store.createConversation("chat");
        QVERIFY(c);
        auto u1 = store.addMessage(makeMessage(c->id, "user", "hello"));
        ChatMessage am = makeMessage(c->id, "assistant", "");
        am.state = MessageState::Streaming;
        am.model = "demo";
        am.sampling = QJsonObject{{"temperature", 0.0}};
        auto a1 = store.addMessage(am);
        QVERIFY(u1 && a1);
        QVERIFY(store.appendMessageContent(a1->id, "Hi"));
        QVERIFY(store.appendMessageContent(a1->id, " there"));
        GenerationFigures f;
        f.promptTokens = 12;
        f.completionTokens = 2;
        f.ttftMs = 35.5;
        f.tokensPerSecond = 41.25;
        QVERIFY(store.finishMessage(a1->id, MessageState::Complete, f));

        auto msgs = store.messages(c->id);
        QCOMPARE(msgs.size(), 2);
        QCOMPARE(msgs[0].role, QStringLiteral("user"));
        QCOMPARE(msgs[1].content, QStringLiteral("Hi there"));
        QCOMPARE(msgs[1].state, MessageState::Complete);
        QCOMPARE(msgs[1].promptTokens, std::optional<qint64>(12));
        QCOMPARE(msgs[1].completionTokens, std::optional<qint64>(2));
        QCOMPARE(*msgs[1].ttftMs, 35.5);
        QCOMPARE(*msgs[1].tokensPerSecond, 41.25);
        QCOMPARE(msgs[1].model, QStringLiteral("demo"));
        QVERIFY(msgs[1].sampling.contains("temperature"));
        QVERIFY(!msgs[0].promptTokens.has_value());

        QVERIFY(store.setMessageContent(u1->id, "hello, edited"));
        QCOMPARE(store.message(u1->id)->content, QStringLiteral("hello, edited"));

        auto u2 = store.addMessage(makeMessage(c->id, "user", "second question"));
        auto a2 = store.addMessage(makeMessage(c->id, "assistant", "second answer"));
        QVERIFY(u2 && a2);
        QCOMPARE(store.messages(c->id).size(), 4);
        // Edit-and-resend from u2 removes u2 and everything after it.
        QVERIFY(store.deleteMessagesFrom(u2->id));
        QCOMPARE(store.messages(c->id).size(), 2);
        QVERIFY(store.deleteMessage(a1->id));
        QCOMPARE(store.messages(c->id).size(), 1);
        QVERIFY(!store.deleteMessage(a1->id));
        // A message for a conversation that does not exist violates the foreign key.
        QVERIFY(!store.addMessage(makeMessage(999, "user", "orphan")));
    }

    void cascadeDelete() {
        Database db(dbPath("cascade.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        auto keep = store.createConversation("keep");
        auto drop = store.createConversation("drop");
        QVERIFY(store.addMessage(makeMessage(keep->id, "user", "kept message zebra")));
        QVERIFY(store.addMessage(makeMessage(drop->id, "user", "dropped message zebra")));
        QVERIFY(store.addMessage(makeMessage(drop->id, "assistant", "dropped answer")));
        QCOMPARE(store.search("zebra").size(), 2);
        QVERIFY(store.deleteConversation(drop->id));
        QCOMPARE(scalar(db, "SELECT count(*) FROM messages").toInt(), 1);
        const auto hits = store.search("zebra");
        QCOMPARE(hits.size(), 1);
        QCOMPARE(hits[0].conversationId, keep->id);
        QCOMPARE(db.integrityCheck(), QStringLiteral("ok"));
        // The external-content index matches the table (fails with SQLITE_CORRUPT otherwise).
        QSqlQuery check(db.connection());
        QVERIFY(check.exec("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')"));
    }

    void search_data() {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QStringList>("expectedContents");
        const QString en = "The paged KV cache stores blocks of sixteen tokens.";
        const QString en2 = "Prefix caching reuses KV blocks across requests.";
        const QString zh = "分页注意力把键值缓存分成固定大小的块。";
        const QString zh2 = "今天的天气很好，我们去公园散步吧。";
        const QString ja = "東京は日本の首都です。";
        QTest::newRow("english word") << "cache" << QStringList{en};
        QTest::newRow("case-insensitive") << "PREFIX" << QStringList{en2};
        QTest::newRow("two terms, both must occur") << "blocks sixteen" << QStringList{en};
        QTest::newRow("term in two messages") << "blocks" << QStringList{en, en2};
        QTest::newRow("substring inside a word") << "ach" << QStringList{en, en2};
        QTest::newRow("chinese 4 chars") << "键值缓存" << QStringList{zh};
        QTest::newRow("chinese 2 chars") << "天气" << QStringList{zh2};
        QTest::newRow("chinese 1 char") << "块" << QStringList{zh};
        QTest::newRow("japanese") << "日本の首都" << QStringList{ja};
        QTest::newRow("short latin term") << "KV" << QStringList{en, en2};
        QTest::newRow("no match") << "nonexistent" << QStringList{};
        QTest::newRow("fts syntax is literal") << "blocks OR NOT \"x" << QStringList{};
        QTest::newRow("like wildcards are literal") << "%_" << QStringList{};
        QTest::newRow("only spaces") << "   " << QStringList{};
    }

    void search() {
        QFETCH(QString, query);
        QFETCH(QStringList, expectedContents);
        Database db(dbPath("search.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        if (store.conversations().isEmpty()) {
            auto c1 = store.createConversation("kv notes");
            auto c2 = store.createConversation("中文");
            QVERIFY(store.addMessage(makeMessage(
                c1->id, "user", "The paged KV cache stores blocks of sixteen tokens.")));
            QVERIFY(store.addMessage(makeMessage(
                c1->id, "assistant", "Prefix caching reuses KV blocks across requests.")));
            QVERIFY(store.addMessage(
                makeMessage(c2->id, "user", "分页注意力把键值缓存分成固定大小的块。")));
            QVERIFY(store.addMessage(
                makeMessage(c2->id, "assistant", "今天的天气很好，我们去公园散步吧。")));
            QVERIFY(store.addMessage(makeMessage(c2->id, "user", "東京は日本の首都です。")));
        }
        const auto hits = store.search(query);
        QVERIFY2(store.errorString().isEmpty(), qPrintable(store.errorString()));
        QStringList contents;
        for (const SearchHit& h : hits) {
            const auto m = store.message(h.messageId);
            QVERIFY(m);
            QCOMPARE(m->conversationId, h.conversationId);
            contents << m->content;
            // The snippet is a piece of the message with the match marked.
            QVERIFY2(h.snippet.contains(QChar(SearchHit::kMatchBegin)), qPrintable(h.snippet));
            const QString plain = plainSnippet(h.snippet).remove(QStringLiteral("…"));
            QVERIFY2(m->content.contains(plain), qPrintable(plain));
        }
        contents.sort();
        expectedContents.sort();
        QCOMPARE(contents, expectedContents);
    }

    void exportFormats() {
        Database db(dbPath("export.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        auto c = store.createConversation("Rust vs C++", "You are terse.\nSecond line.",
                                          QJsonObject{{"temperature", 0.2}}, "demo-model");
        QVERIFY(store.addMessage(makeMessage(c->id, "user", "Which is faster?")));
        ChatMessage a = makeMessage(c->id, "assistant", "It depends.\n\n```cpp\nint x;\n```");
        a.promptTokens = 20;
        a.completionTokens = 9;
        a.ttftMs = 120;
        a.tokensPerSecond = 33.3;
        QVERIFY(store.addMessage(a));
        ChatMessage s = makeMessage(c->id, "assistant", "partial");
        s.state = MessageState::Stopped;
        QVERIFY(store.addMessage(s));

        const QString md = store.exportMarkdown(c->id);
        QVERIFY(md.startsWith("# Rust vs C++\n"));
        QVERIFY(md.contains("> You are terse.\n> Second line.\n"));
        QVERIFY(md.contains("## User\n\nWhich is faster?\n"));
        QVERIFY(md.contains("## Assistant\n\nIt depends.\n\n```cpp\nint x;\n```\n"));
        QVERIFY(md.contains("20 prompt tokens"));
        QVERIFY(md.contains("33.3 tokens/s"));
        QVERIFY(md.contains("stopped"));
        QVERIFY(md.indexOf("Which is faster") < md.indexOf("It depends"));

        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(store.exportJson(c->id), &err);
        QCOMPARE(err.error, QJsonParseError::NoError);
        const QJsonObject root = doc.object();
        QCOMPARE(root["format"].toString(), QStringLiteral("llmwb-conversation"));
        QCOMPARE(root["conversation"].toObject()["title"].toString(),
                 QStringLiteral("Rust vs C++"));
        QCOMPARE(root["conversation"].toObject()["sampling"].toObject()["temperature"].toDouble(),
                 0.2);
        const QJsonArray msgs = root["messages"].toArray();
        QCOMPARE(msgs.size(), 3);
        QCOMPARE(msgs[0].toObject()["role"].toString(), QStringLiteral("user"));
        QCOMPARE(msgs[1].toObject()["content"].toString(), a.content);
        QCOMPARE(msgs[1].toObject()["completion_tokens"].toInt(), 9);
        QCOMPARE(msgs[2].toObject()["state"].toString(), QStringLiteral("stopped"));
        QVERIFY(!msgs[0].toObject().contains("ttft_ms"));

        QVERIFY(store.exportMarkdown(9999).isEmpty());
        QVERIFY(store.exportJson(9999).isEmpty());
    }

    void streamingWriterThrottles() {
        Database db(dbPath("stream.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        auto c = store.createConversation("s");
        ChatMessage m = makeMessage(c->id, "assistant", "");
        m.state = MessageState::Streaming;
        auto row = store.addMessage(m);
        QVERIFY(row);
        StreamingMessageWriter writer(store, row->id, 200);
        QString expected;
        for (int i = 0; i < 50; ++i) {
            const QString delta = QStringLiteral("t%1 ").arg(i);
            expected += delta;
            writer.append(delta);
        }
        // 50 appends within far less than 200 ms: nothing written yet, one write pending.
        QVERIFY(writer.flushCount() <= 1);
        QTRY_COMPARE_WITH_TIMEOUT(store.message(row->id)->content, expected, 2000);
        QVERIFY(writer.flushCount() <= 2);
        writer.append("end");
        GenerationFigures f;
        f.completionTokens = 51;
        QVERIFY(writer.finish(MessageState::Stopped, f));
        writer.append("ignored");
        const auto done = store.message(row->id);
        QCOMPARE(done->content, expected + "end");
        QCOMPARE(done->state, MessageState::Stopped);
        QCOMPARE(done->completionTokens, std::optional<qint64>(51));
    }

    void recoversStreamingMessages() {
        const QString path = dbPath("recover.sqlite");
        qint64 streamingId = 0, completeId = 0;
        {
            Database db(path);
            QVERIFY(db.open());
            ConversationStore store(db);
            auto c = store.createConversation("r");
            ChatMessage s = makeMessage(c->id, "assistant", "half an answ");
            s.state = MessageState::Streaming;
            streamingId = store.addMessage(s)->id;
            completeId = store.addMessage(makeMessage(c->id, "user", "q"))->id;
        }
        Database db(path);
        QVERIFY(db.open());
        ConversationStore store(db);
        QCOMPARE(store.recoverInterruptedMessages(), 1);
        QCOMPARE(store.message(streamingId)->state, MessageState::Interrupted);
        QCOMPARE(store.message(streamingId)->content, QStringLiteral("half an answ"));
        QCOMPARE(store.message(completeId)->state, MessageState::Complete);
        QCOMPARE(store.recoverInterruptedMessages(), 0);
    }

    void unknownStoredValuesAreTolerated() {
        Database db(dbPath("odd.sqlite"));
        QVERIFY(db.open());
        QSqlQuery q(db.connection());
        QVERIFY(q.exec("INSERT INTO conversations(id, title, sampling, created_at, updated_at) "
                       "VALUES (1, 't', 'not json [', 0, 0)"));
        QVERIFY(q.exec("INSERT INTO messages(conversation_id, role, content, sampling, state, "
                       "created_at) VALUES (1, 'user', 'x', '[1,2]', 'bogus', 0)"));
        ConversationStore store(db);
        QVERIFY(store.conversation(1)->sampling.isEmpty());
        const auto msgs = store.messages(1);
        QCOMPARE(msgs.size(), 1);
        QVERIFY(msgs[0].sampling.isEmpty());
        QCOMPARE(msgs[0].state, MessageState::Complete);
    }
};

QTEST_GUILESS_MAIN(TestAppStorage)
#include "tst_app_storage.moc"
