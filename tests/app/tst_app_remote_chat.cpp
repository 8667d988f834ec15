// Remote endpoints as chat backends, against a real `llmwb serve` stack on loopback (the demo
// model in-process: tests/server/server_fixture.h) and, for what a real server does not do on
// demand (a slow stream to stop, a stream without usage, a /metrics without KV usage), the fake
// OpenAI server of tests/remote. The ChatController is wired as main() wires it (RemoteBackend):
// a chat streams and finishes with its reason, figures and the endpoint/model stored; Stop
// closes the HTTP stream (the server sees the client go); a refused key and an unreachable
// server are errors stored in the bubble; the model list comes from /v1/models with the same
// errors; the metrics poller delivers the server's figures and leaves the missing ones
// unavailable.
#include <QCoreApplication>
#include <QFile>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "app/services/remote_backend.h"
#include "fake_openai_server.h"
#include "server/server_fixture.h"

using namespace llmwb;

namespace {

RemoteEndpoint serveEndpoint(const QString& key = QString::fromLatin1(server_test::kKey)) {
    RemoteEndpoint e;
    e.name = QStringLiteral("serve");
    e.baseUrl = QStringLiteral("http://127.0.0.1:%1/v1").arg(server_test::fixture().port);
    e.apiKey = key;
    e.model = QStringLiteral("demo");
    return e;
}

// A port on loopback where nothing listens (bound by the fake server, then closed).
int closedPort() {
    int port = 0;
    {
        test::FakeOpenAiServer s;
        port = s.port();
    }
    return port;
}

const char* kMetricsWithoutKv = "# TYPE vllm:num_requests_running gauge\n"
                                "vllm:num_requests_running{model_name=\"demo\"} 3\n"
                                "# TYPE vllm:num_requests_waiting gauge\n"
                                "vllm:num_requests_waiting{model_name=\"demo\"} 1\n"
                                "# TYPE vllm:generation_tokens_total counter\n"
                                "vllm:generation_tokens_total{model_name=\"demo\"} 100\n";

} // namespace

class TestAppRemoteChat : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<Database> db_;
    std::unique_ptr<ConversationStore> store_;
    std::unique_ptr<QSettings> settings_;
    std::unique_ptr<ChatController> controller_;
    std::unique_ptr<RemoteBackend> remote_;

    // A chat answered through `endpoint`: the finished message.
    std::optional<ChatMessage> chat(const RemoteEndpoint& endpoint, const QString& text,
                                    int maxTokens, QStringList* updates = nullptr,
                                    bool stopAfterFirst = false) {
        remote_->setEndpoints({endpoint});
        if (!remote_->selectBackend(endpoint.name))
            return std::nullopt;
        const auto c = store_->createConversation(
            "remote", {}, QJsonObject{{"temperature", 0.0}, {"max_tokens", maxTokens}});
        if (!c)
            return std::nullopt;
        std::optional<ChatMessage> done;
        QStringList seen;
        QMetaObject::Connection a = connect(controller_.get(), &ChatController::messageTextChanged,
                                            this, [&](qint64 conv, qint64, const QString& t) {
                                                if (conv != c->id)
                                                    return;
                                                seen << t;
                                                if (stopAfterFirst && seen.size() == 1)
                                                    controller_->stop(c->id);
                                            });
        QMetaObject::Connection b = connect(controller_.get(), &ChatController::messageFinished,
                                            this, [&](const ChatMessage& m) {
                                                if (m.conversationId == c->id)
                                                    done = m;
                                            });
        if (controller_->send(c->id, text))
            (void)QTest::qWaitFor([&] { return done.has_value(); }, 30000); // done says
        disconnect(a);
        disconnect(b);
        if (updates)
            *updates = seen;
        if (!done)
            return std::nullopt;
        return store_->message(done->id); // as stored
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QVERIFY2(server_test::fixture().error.empty(), server_test::fixture().error.c_str());
        db_ = std::make_unique<Database>(dir_.filePath("chat.sqlite"));
        QVERIFY(db_->open());
        store_ = std::make_unique<ConversationStore>(*db_);
        settings_ = std::make_unique<QSettings>(dir_.filePath("s.ini"), QSettings::IniFormat);
        controller_ = std::make_unique<ChatController>(*store_);
        controller_->setModelName("local-model");
        remote_ = std::make_unique<RemoteBackend>(*controller_, nullptr, *settings_);
    }

    void cleanupTestCase() {
        remote_.reset();
        controller_.reset();
    }

    void endpointsAreStoredAndTheChoiceLabelsAnswers() {
        remote_->setEndpoints({serveEndpoint()});
        QVERIFY(remote_->selectBackend("serve"));
        QCOMPARE(controller_->modelName(), QStringLiteral("serve · demo"));
        QVERIFY(!remote_->selectBackend("nope"));
        // Another RemoteBackend over the same settings reads the list and the choice back.
        ChatController other(*store_);
        RemoteBackend again(other, nullptr, *settings_);
        QCOMPARE(again.endpoints().size(), 1);
        QCOMPARE(again.endpoints()[0], serveEndpoint());
        QCOMPARE(again.backend(), QStringLiteral("serve"));
        QVERIFY(remote_->selectBackend(QString()));
        QCOMPARE(controller_->modelName(), QStringLiteral("local-model"));
        // A hostile settings entry (no URL) is skipped.
        QSettings bad(dir_.filePath("bad.ini"), QSettings::IniFormat);
        saveRemoteEndpoints(bad, {RemoteEndpoint{"x", "not a url", "", "m"}, serveEndpoint()});
        QCOMPARE(loadRemoteEndpoints(bad).size(), 1);
        // Endpoint keys are kept in a file only its owner can read.
        QSettings keyed(dir_.filePath("keyed.ini"), QSettings::IniFormat);
        saveRemoteEndpoints(keyed, {serveEndpoint("a-key")});
        QCOMPARE(QFile::permissions(keyed.fileName()) &
                     ~(QFileDevice::ReadUser | QFileDevice::WriteUser),
                 QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    }

    void modelListFromServe() {
        const ModelListResult ok = fetchRemoteModels(serveEndpoint());
        QVERIFY2(ok.error.isEmpty(), qPrintable(ok.error));
        QCOMPARE(ok.models, QStringList{"demo"});
        const ModelListResult refused = fetchRemoteModels(serveEndpoint("wrong-key"));
        QVERIFY(refused.models.isEmpty());
        QVERIFY2(refused.error.contains("refused the API key") && refused.error.contains("401"),
                 qPrintable(refused.error));
        RemoteEndpoint nowhere = serveEndpoint();
        nowhere.baseUrl = QStringLiteral("http://127.0.0.1:%1").arg(closedPort());
        const ModelListResult unreachable = fetchRemoteModels(nowhere, 3);
        QVERIFY2(unreachable.error.contains("could not be reached"), qPrintable(unreachable.error));
        RemoteEndpoint wrongPath = serveEndpoint();
        wrongPath.baseUrl += QStringLiteral("/nothing-here");
        const ModelListResult notFound = fetchRemoteModels(wrongPath);
        QVERIFY2(notFound.error.contains("404"), qPrintable(notFound.error));
    }

    void chatStreamsThroughServeAndStoresItsReason() {
        QStringList updates;
        const auto m = chat(serveEndpoint(), "Hello there", 12, &updates);
        QVERIFY(m);
        QCOMPARE(m->state, MessageState::Complete);
        QVERIFY2(m->finishReason == FinishReason::Length || m->finishReason == FinishReason::Stop,
                 qPrintable(finishReasonName(m->finishReason)));
        QVERIFY(!m->content.isEmpty());
        QVERIFY(!updates.isEmpty());
        QCOMPARE(updates.last(), m->content);
        QCOMPARE(m->model, QStringLiteral("serve · demo")); // which endpoint and model answered
        // Figures measured by the client, token counts from the server's usage.
        QVERIFY(m->completionTokens && *m->completionTokens > 0 && *m->completionTokens <= 12);
        if (m->finishReason == FinishReason::Length)
            QCOMPARE(*m->completionTokens, 12);
        QVERIFY(m->promptTokens && *m->promptTokens > 0);
        QVERIFY(!m->completionTokensCounted); // the server's usage (stream_options asked for it)
        QVERIFY(!m->sampling.contains(QStringLiteral("completion_tokens_source")));
        QVERIFY(m->ttftMs && *m->ttftMs > 0);
        QVERIFY(m->tokensPerSecond && *m->tokensPerSecond > 0);
        std::string why;
        QVERIFY2(server_test::fixture().engine_idle_and_clean(5, why), why.c_str());
    }

    void stopClosesTheStream() {
        test::FakeOpenAiServer fake;
        QVERIFY(fake.ok());
        RemoteEndpoint e{"fake", QString::fromStdString(fake.url()), "", "demo"};
        const auto m = chat(e, "long", 500, nullptr, /*stopAfterFirst=*/true);
        QVERIFY(m);
        QCOMPARE(m->state, MessageState::Stopped);
        QCOMPARE(m->finishReason, FinishReason::Aborted);
        QVERIFY(!m->content.isEmpty()); // what streamed before the Stop stays
        // The server saw the client go (its stream was cut, not run to its 200 chunks).
        QTRY_COMPARE_WITH_TIMEOUT(fake.aborted_streams(), 1, 5000);
        QCOMPARE(remote_->chatWorker().activeCount(), 0);
    }

    void withoutUsageTheChunksAreCounted() {
        test::FakeOpenAiServer fake;
        RemoteEndpoint e{"fake", QString::fromStdString(fake.url()), "", "demo"};
        const auto m = chat(e, "gaps-nousage", 50);
        QVERIFY(m);
        QCOMPARE(m->state, MessageState::Complete);
        QVERIFY(m->completionTokens);
        QCOMPARE(*m->completionTokens, 5);      // five token chunks
        QVERIFY(m->ttftMs && *m->ttftMs >= 90); // the fake waits 100 ms before the first
        // Stored as counted, not the server's count; the prompt's tokens unknown (not 0).
        QVERIFY(m->completionTokensCounted);
        QVERIFY(!m->promptTokens);
        QCOMPARE(m->sampling.value(QStringLiteral("completion_tokens_source")).toString(),
                 QStringLiteral("streamed_chunks"));
        // Exported saying so.
        const QByteArray json = store_->exportJson(m->conversationId);
        QVERIFY2(json.contains("\"completion_tokens_source\": \"streamed_chunks\""),
                 json.constData());
        const QString md = store_->exportMarkdown(m->conversationId);
        QVERIFY2(md.contains(QStringLiteral("5 completion tokens (counted streamed chunks")),
                 qPrintable(md));
    }

    void refusedKeyIsAnErrorInTheBubble() {
        const auto m = chat(serveEndpoint("wrong-key"), "Hello", 8);
        QVERIFY(m);
        QCOMPARE(m->state, MessageState::Error);
        QVERIFY2(m->error.contains("refused the API key") && m->error.contains("401"),
                 qPrintable(m->error));
        QVERIFY(!m->error.contains("wrong-key")); // the key is never shown
    }

    void unreachableServerIsAnErrorInTheBubble() {
        RemoteEndpoint e = serveEndpoint();
        e.baseUrl = QStringLiteral("http://127.0.0.1:%1/v1").arg(closedPort());
        const auto m = chat(e, "Hello", 8);
        QVERIFY(m);
        QCOMPARE(m->state, MessageState::Error);
        QVERIFY2(m->error.contains("could not be reached"), qPrintable(m->error));
    }

    void metricsFromServe() {
        RemoteMetricsPoller poller;
        poller.setInterval(0.2);
        QList<RemoteMetricsView> views;
        connect(&poller, &RemoteMetricsPoller::metrics, this,
                [&](const RemoteMetricsView& v) { views << v; });
        poller.start(serveEndpoint());
        QTRY_VERIFY_WITH_TIMEOUT(views.size() >= 2, 10000);
        poller.stop();
        const RemoteMetricsView& v = views.last();
        QVERIFY2(v.ok(), qPrintable(v.error));
        QCOMPARE(v.serverKind, QStringLiteral("vllm"));
        QCOMPARE(v.endpoint, QStringLiteral("serve"));
        QVERIFY(v.running && v.waiting && v.kvUsage);
        QCOMPARE(*v.running, 0.0); // idle after the chats above
        QVERIFY(v.generationExposed && v.promptExposed && v.ttftExposed);
        QVERIFY(v.generationTokensPerSecond); // a rate from the second scrape on
    }

    void metricsWithoutKvUsageLeaveItUnavailable() {
        test::FakeOpenAiServer fake;
        fake.set_metrics(kMetricsWithoutKv);
        RemoteMetricsPoller poller;
        poller.setInterval(0.2);
        QList<RemoteMetricsView> views;
        connect(&poller, &RemoteMetricsPoller::metrics, this,
                [&](const RemoteMetricsView& v) { views << v; });
        poller.start(RemoteEndpoint{"fake", QString::fromStdString(fake.url()), "", "demo"});
        QTRY_VERIFY_WITH_TIMEOUT(!views.isEmpty(), 10000);
        poller.stop();
        const RemoteMetricsView& v = views.first();
        QVERIFY2(v.ok(), qPrintable(v.error));
        QCOMPARE(*v.running, 3.0);
        QCOMPARE(*v.waiting, 1.0);
        QVERIFY(!v.kvUsage);       // not exposed: unavailable, not 0
        QVERIFY(!v.promptExposed); // no prompt token counter either
        QVERIFY(v.generationExposed);
    }

    void metricsOfAnUnreachableServerSayWhy() {
        RemoteMetricsPoller poller;
        QList<RemoteMetricsView> views;
        connect(&poller, &RemoteMetricsPoller::metrics, this,
                [&](const RemoteMetricsView& v) { views << v; });
        RemoteEndpoint e = serveEndpoint();
        e.baseUrl = QStringLiteral("http://127.0.0.1:%1").arg(closedPort());
        poller.start(e);
        QTRY_VERIFY_WITH_TIMEOUT(!views.isEmpty(), 10000);
        poller.stop();
        QVERIFY(!views.first().ok());
        QVERIFY(!views.first().running);
        QVERIFY2(views.first().error.contains("could not be reached"),
                 qPrintable(views.first().error));
    }
};

QTEST_GUILESS_MAIN(TestAppRemoteChat)
#include "tst_app_remote_chat.moc"
