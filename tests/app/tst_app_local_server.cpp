// The app's Local server: real HTTP requests (cpp-httplib's client) against an OpenAiServer over
// the engine worker (LocalServer + WorkerServingBackend). 503 while no model is loaded (saying
// why); an API request and a chat in the same engine steps, both finishing, the view labelling
// the API request by client; a client that disconnects mid-stream has its request aborted and
// its blocks freed; the request log's rows; /metrics; a port in use; a reload ending a live
// request with "abort"; the settings persisting.
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>
#include <atomic>
#include <future>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "app/services/app_settings.h"
#include "app/services/engine_worker.h"
#include "app/services/engine_worker_server.h"
#include "app/services/local_server.h"
#include "engine/model/model_writer.h"
#include "tests/app/worker_relay.h"

using namespace llmwb;
using json = nlohmann::json;

namespace {

struct Reply {
    int status = -1; // -1: no answer
    std::string body;
};

// One POST on its own thread (the test thread keeps running Qt's event loop meanwhile).
std::future<Reply> postAsync(int port, std::string path, std::string body,
                             std::string agent = "tst-agent/1.0") {
    return std::async(std::launch::async, [=] {
        httplib::Client c("127.0.0.1", port);
        c.set_read_timeout(60, 0);
        httplib::Headers h{{"User-Agent", agent}};
        auto r = c.Post(path.c_str(), h, body, "application/json");
        Reply out;
        if (r) {
            out.status = r->status;
            out.body = r->body;
        }
        return out;
    });
}

Reply get(int port, const char* path) {
    httplib::Client c("127.0.0.1", port);
    auto r = c.Get(path, httplib::Headers{{"User-Agent", "tst-agent/1.0"}});
    Reply out;
    if (r) {
        out.status = r->status;
        out.body = r->body;
    }
    return out;
}

// Runs the event loop until `done` or the timeout.
template <class F> bool spinUntil(F done, int timeoutMs) {
    QElapsedTimer t;
    t.start();
    while (!done() && t.elapsed() < timeoutMs)
        QTest::qWait(10);
    return done();
}

template <class T> bool ready(std::future<T>& f) {
    return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

} // namespace

class TestAppLocalServer : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString modelPath_;
    QThread thread_;
    EngineWorker* worker_ = nullptr;
    WorkerRelay relay_;
    std::unique_ptr<LocalServer> server_;
    // What the tests read of the worker's views (whole views hold the pool's blocks: copying
    // every one of them slowed the test thread down).
    struct ViewFacts {
        QVector<StepRecord> steps;
        QHash<qint64, QString> requestLabels;
        int usedBlocks = 0, running = 0;
    };
    QVector<ViewFacts> views_;
    int port() const { return server_->port(); }

    // The latest view (after the worker's views so far reached the test thread).
    const ViewFacts* lastView() const { return views_.isEmpty() ? nullptr : &views_.last(); }

    bool loadModel() {
        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        QMetaObject::invokeMethod(worker_, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, modelPath_));
        return waitFor(loaded, 1, 30000) &&
               spinUntil([] { return true; }, 50); // the served model is set before modelLoaded
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        modelPath_ = dir_.filePath("tiny.gguf");
        ModelWriterSpec spec; // qwen2, F32, hidden 64, 2 layers, demo tokenizer + ChatML
        spec.seed = 11;
        spec.max_position = 32768; // room for requests that outlast a reload
        const Status st = write_model(spec, modelPath_.toStdString());
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        worker_ = startRelayedWorker(thread_, relay_, 2);
        // A view after every step: the tests look for what shared a step and for the labels of
        // requests that live only a few milliseconds on this tiny model.
        QMetaObject::invokeMethod(worker_, "setSnapshotIntervalMs", Qt::QueuedConnection,
                                  Q_ARG(int, 0));
        connect(&relay_, &WorkerRelay::engineView, this, [this](const EngineView& v) {
            views_.push_back(
                {v.steps, v.requestLabels, v.snapshot.num_used_blocks, v.snapshot.num_running});
        });
        server_ = std::make_unique<LocalServer>(worker_->servingBackend());
        LocalServerSettings s;
        s.port = 0; // a free port
        QVERIFY2(server_->start(s), qPrintable(server_->error()));
        QVERIFY(server_->port() > 0);
        QCOMPARE(server_->baseUrl(), QStringLiteral("http://127.0.0.1:%1").arg(server_->port()));
    }

    void cleanupTestCase() {
        server_.reset();
        worker_->stopAll();
        thread_.quit();
        QVERIFY(thread_.wait(10000));
    }

    void unavailableWithoutAModel() {
        QCOMPARE(get(port(), "/health").status, 503);
        auto f = postAsync(port(), "/v1/completions", R"({"prompt":"Hi","max_tokens":4})");
        QVERIFY(spinUntil([&] { return ready(f); }, 10000));
        const Reply r = f.get();
        QCOMPARE(r.status, 503);
        const json j = json::parse(r.body);
        QVERIFY2(j["error"]["message"].get<std::string>().find("no model") != std::string::npos,
                 r.body.c_str());
        // The log has both requests, with their statuses and the client.
        QVERIFY(spinUntil([&] { return server_->log()->rows().size() >= 2; }, 5000));
        const LocalServerLogRow& row = server_->log()->rows().last();
        QCOMPARE(row.status, 503);
        QCOMPARE(row.method, QStringLiteral("POST"));
        QCOMPARE(row.path, QStringLiteral("/v1/completions"));
        QCOMPARE(row.clientAddress, QStringLiteral("127.0.0.1"));
        QCOMPARE(row.userAgent, QStringLiteral("tst-agent/1.0"));
        QCOMPARE(server_->log()->rowCount(), int(server_->log()->rows().size()));
    }

    void apiRequestSharesTheBatchWithAChat() {
        QVERIFY(loadModel());
        QVERIFY(spinUntil([&] { return get(port(), "/health").status == 200; }, 5000));
        views_.clear();
        // A long API request first (it cannot end at EOS), then a short chat while it runs.
        auto api = postAsync(port(), "/v1/completions",
                             R"({"prompt":"Once upon a time","max_tokens":600,"ignore_eos":true,
                                 "temperature":0})");
        QVERIFY(spinUntil(
            [&] {
                const ViewFacts* v = lastView();
                return v && !v->requestLabels.isEmpty();
            },
            20000));
        const ViewFacts& labelled = *lastView();
        QCOMPARE(labelled.requestLabels.size(), 1);
        const qint64 apiId = labelled.requestLabels.begin().key();
        QCOMPARE(labelled.requestLabels.begin().value(),
                 QStringLiteral("API · tst-agent/1.0 · 127.0.0.1"));

        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        GenerationRequest chat;
        chat.requestId = 7;
        chat.conversationId = 70;
        chat.messages = {{QStringLiteral("user"), QStringLiteral("Hello there")}};
        chat.sampling.temperature = 0.0;
        chat.sampling.maxTokens = 6;
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, chat));
        QVERIFY(waitFor(finished, 1, 30000));
        QVERIFY(spinUntil([&] { return ready(api); }, 60000));
        const Reply r = api.get();
        QCOMPARE(r.status, 200);
        const json j = json::parse(r.body);
        QCOMPARE(j["usage"]["completion_tokens"].get<int>(), 600);
        QCOMPARE(j["choices"][0]["finish_reason"].get<std::string>(), std::string("length"));
        const auto stats = finished.first().first().value<GenerationStats>();
        QCOMPARE(stats.requestId, quint64(7));
        QVERIFY(stats.completionTokens > 0);

        // Some step ran both: the API request and another (the chat).
        bool shared = false;
        for (const ViewFacts& v : std::as_const(views_))
            for (const StepRecord& s : v.steps) {
                bool api = false, other = false;
                for (const StepSegment& seg : s.segments)
                    (seg.requestId == apiId ? api : other) = true;
                shared |= api && other;
            }
        QVERIFY(shared);
        // The log row of the API request: tokens and the finish reason.
        QVERIFY(spinUntil(
            [&] {
                const LocalServerLogRow& last = server_->log()->rows().last();
                return last.path == QStringLiteral("/v1/completions") && !last.running;
            },
            5000));
        const LocalServerLogRow& row = server_->log()->rows().last();
        QCOMPARE(row.status, 200);
        QCOMPARE(row.completionTokens, qint64(600));
        QVERIFY(row.promptTokens > 0);
        QCOMPARE(row.finishReason, QStringLiteral("length"));
        QVERIFY(row.durationMs > 0);
    }

    void disconnectAbortsAndFreesBlocks() {
        QVERIFY(spinUntil([&] { return worker_->servingBackend()->numLive() == 0; }, 5000));
        views_.clear();
        std::atomic<int> chunks{0};
        auto client = std::async(std::launch::async, [&] {
            httplib::Client c("127.0.0.1", port());
            httplib::Request req;
            req.method = "POST";
            req.path = "/v1/completions";
            req.headers = {{"User-Agent", "quitter/2"}};
            req.body = R"({"prompt":"Tell me a long story","max_tokens":3000,"ignore_eos":true,
                           "stream":true})";
            req.set_header("Content-Type", "application/json");
            req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
                return ++chunks < 3; // three chunks, then the client goes away
            };
            return c.send(req).error();
        });
        QVERIFY(spinUntil([&] { return ready(client); }, 30000));
        QVERIFY(chunks >= 3);
        // The request is aborted at the next step: no live server request, every block free.
        QVERIFY(spinUntil(
            [&] {
                const ViewFacts* v = lastView();
                return worker_->servingBackend()->numLive() == 0 && v &&
                       v->requestLabels.isEmpty() && v->usedBlocks == 0 && v->running == 0;
            },
            20000));
        QVERIFY(spinUntil(
            [&] {
                const auto& rows = server_->log()->rows();
                return !rows.isEmpty() && rows.last().userAgent == QStringLiteral("quitter/2") &&
                       !rows.last().running;
            },
            10000));
        QCOMPARE(server_->log()->rows().last().finishReason, QStringLiteral("abort"));
        QVERIFY(server_->log()->rows().last().completionTokens < 3000);
        // /metrics counts it as aborted.
        const Reply m = get(port(), "/metrics");
        QCOMPARE(m.status, 200);
        QVERIFY(m.body.find("vllm:num_requests_running{model_name=\"") != std::string::npos);
        QVERIFY2(m.body.find("finished_reason=\"abort\"} 1") != std::string::npos, m.body.c_str());
    }

    void reloadEndsALiveRequestWithAbort() {
        auto api = postAsync(port(), "/v1/completions",
                             R"({"prompt":"Reload","max_tokens":30000,"ignore_eos":true})");
        QVERIFY(spinUntil([&] { return worker_->servingBackend()->numLive() == 1; }, 20000));
        QVERIFY(spinUntil(
            [&] {
                const ViewFacts* v = lastView();
                return v && !v->requestLabels.isEmpty();
            },
            20000));
        QVERIFY(loadModel());
        QVERIFY(spinUntil([&] { return ready(api); }, 30000));
        const Reply r = api.get();
        QCOMPARE(r.status, 200);
        const json j = json::parse(r.body);
        QCOMPARE(j["choices"][0]["finish_reason"].get<std::string>(), std::string("abort"));
        QVERIFY(j["usage"]["completion_tokens"].get<int>() < 30000);
        QCOMPARE(worker_->servingBackend()->numLive(), 0);
        // The new model serves.
        auto again = postAsync(port(), "/v1/completions", R"({"prompt":"Hi","max_tokens":3})");
        QVERIFY(spinUntil([&] { return ready(again); }, 30000));
        QCOMPARE(again.get().status, 200);
    }

    // n > 1 runs as one group (Engine::add_request_group): the prompt is prefilled once and
    // the choices forked from it; choice i samples with seed + i, as a single request would.
    void nChoicesShareOnePrefill() {
        // The earlier requests' last steps reach the test thread first.
        QVERIFY(spinUntil([&] { return worker_->servingBackend()->numLive() == 0; }, 5000));
        QTest::qWait(500);
        views_.clear();
        auto f = postAsync(port(), "/v1/completions",
                           R"({"prompt":"Two ways","n":2,"max_tokens":200,"ignore_eos":true,
                               "temperature":0.8,"seed":5})");
        QVERIFY(spinUntil([&] { return ready(f); }, 30000));
        const Reply r = f.get();
        QCOMPARE(r.status, 200);
        const json j = json::parse(r.body);
        QCOMPARE(j["choices"].size(), size_t(2));
        QCOMPARE(j["usage"]["completion_tokens"].get<int>(), 400);
        // Two engine requests, labelled as the same client's two choices.
        QSet<QString> labels;
        for (const ViewFacts& v : std::as_const(views_))
            for (const QString& l : v.requestLabels)
                labels.insert(l);
        QVERIFY2(labels.contains(QStringLiteral("API · tst-agent/1.0 · 127.0.0.1 · n0")) &&
                     labels.contains(QStringLiteral("API · tst-agent/1.0 · 127.0.0.1 · n1")),
                 qPrintable(QStringList(labels.values()).join(", ")));
        // The prompt's tokens were computed once, not once per choice.
        int prefilled = 0;
        for (const ViewFacts& v : std::as_const(views_))
            for (const StepRecord& st : v.steps)
                for (const StepSegment& seg : st.segments)
                    if (seg.prefill)
                        prefilled += seg.tokens;
        QCOMPARE(prefilled, j["usage"]["prompt_tokens"].get<int>());
        QVERIFY(spinUntil([&] { return worker_->servingBackend()->numLive() == 0; }, 5000));
        // Choice 1 is the single request with seed 6.
        auto single = postAsync(port(), "/v1/completions",
                                R"({"prompt":"Two ways","max_tokens":200,"ignore_eos":true,
                                    "temperature":0.8,"seed":6})");
        QVERIFY(spinUntil([&] { return ready(single); }, 60000));
        const Reply one = single.get();
        QCOMPARE(one.status, 200);
        QCOMPARE(json::parse(one.body)["choices"][0]["text"], j["choices"][1]["text"]);
        QVERIFY(spinUntil([&] { return worker_->servingBackend()->numLive() == 0; }, 5000));
    }

    // The request log: a generation's row appears when it starts ("running", its prompt
    // tokens) and the same row is updated when it is answered.
    void logRowAppearsWhenARequestStarts() {
        QVERIFY(spinUntil([&] { return worker_->servingBackend()->numLive() == 0; }, 5000));
        LocalServerLog* log = server_->log();
        const int before = log->rowCount();
        auto api = postAsync(port(), "/v1/completions",
                             R"({"prompt":"Start logging","max_tokens":1500,"ignore_eos":true})",
                             "log-watcher/1");
        QVERIFY(spinUntil([&] { return log->rowCount() == before + 1; }, 20000));
        const int at = before >= LocalServerLog::kMaxRows ? log->rowCount() - 1 : before;
        const LocalServerLogRow started = log->rows()[at];
        QVERIFY(!ready(api)); // still generating
        QVERIFY(started.running);
        QVERIFY(started.id != 0);
        QCOMPARE(started.userAgent, QStringLiteral("log-watcher/1"));
        QCOMPARE(started.path, QStringLiteral("/v1/completions"));
        QVERIFY(started.promptTokens > 0);
        QCOMPARE(log->data(log->index(at, LocalServerLog::Finish)).toString(),
                 QStringLiteral("running"));
        QVERIFY(log->data(log->index(at, LocalServerLog::Status)).toString().isEmpty());
        QVERIFY(spinUntil([&] { return ready(api); }, 120000));
        QCOMPARE(api.get().status, 200);
        QVERIFY(spinUntil([&] { return !log->rows()[at].running; }, 5000));
        QCOMPARE(log->rowCount(), before + 1); // updated, not a second row
        const LocalServerLogRow& done = log->rows()[at];
        QCOMPARE(done.id, started.id);
        QCOMPARE(done.status, 200);
        QCOMPARE(done.completionTokens, qint64(1500));
        QCOMPARE(done.finishReason, QStringLiteral("length"));
        QVERIFY(done.durationMs > 0);
        QCOMPARE(log->data(log->index(at, LocalServerLog::Finish)).toString(),
                 QStringLiteral("length"));
    }

    void portInUseIsExplained() {
        LocalServer other(worker_->servingBackend());
        LocalServerSettings s;
        s.port = port();
        QVERIFY(!other.start(s));
        QVERIFY2(other.error().contains(QStringLiteral("in use")), qPrintable(other.error()));
        QVERIFY(!other.isRunning());
        QVERIFY(server_->isRunning()); // the first one still serves
        QCOMPARE(get(port(), "/health").status, 200);
    }

    void apiKeyIsRequiredWhenSet() {
        LocalServer keyed(worker_->servingBackend());
        LocalServerSettings s;
        s.port = 0;
        s.apiKey = QStringLiteral("sekrit");
        QVERIFY(keyed.start(s));
        httplib::Client c("127.0.0.1", keyed.port());
        auto denied = c.Get("/v1/models");
        QVERIFY(denied);
        QCOMPARE(denied->status, 401);
        auto ok = c.Get("/v1/models", httplib::Headers{{"Authorization", "Bearer sekrit"}});
        QVERIFY(ok);
        QCOMPARE(ok->status, 200);
        keyed.stop();
        QVERIFY(!keyed.isRunning());
        QVERIFY(keyed.baseUrl().isEmpty());
    }

    void loopbackHosts() {
        QVERIFY(LocalServer::isLoopback(QStringLiteral("127.0.0.1")));
        QVERIFY(LocalServer::isLoopback(QStringLiteral("127.1.2.3")));
        QVERIFY(LocalServer::isLoopback(QStringLiteral("localhost")));
        QVERIFY(LocalServer::isLoopback(QStringLiteral("::1")));
        QVERIFY(LocalServer::isLoopback(QStringLiteral("[::1]")));
        QVERIFY(!LocalServer::isLoopback(QStringLiteral("0.0.0.0")));
        QVERIFY(!LocalServer::isLoopback(QStringLiteral("192.168.1.4")));
        QVERIFY(!LocalServer::isLoopback(QStringLiteral("::")));
        QVERIFY(!LocalServer::isLoopback(QStringLiteral("example.com")));
    }

    void settingsPersist() {
        const QString ini = dir_.filePath("settings.ini");
        {
            AppSettings a(ini);
            const LocalServerSettings d = a.localServer();
            QCOMPARE(d.enabled, false);
            QCOMPARE(d.host, QStringLiteral("127.0.0.1"));
            QCOMPARE(d.port, 8000);
            QVERIFY(d.apiKey.isEmpty());
            LocalServerSettings s;
            s.enabled = true;
            s.host = QStringLiteral("0.0.0.0");
            s.port = 9123;
            s.apiKey = QStringLiteral("k-123");
            s.allowedOrigins = {QStringLiteral("http://localhost:3000")};
            s.maxWaiting = 7;
            a.setLocalServer(s);
            a.sync();
        }
        // The file holds the key: readable and writable by its owner only.
        QCOMPARE(QFile::permissions(ini) & ~(QFileDevice::ReadUser | QFileDevice::WriteUser),
                 QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        AppSettings b(ini);
        const LocalServerSettings r = b.localServer();
        QCOMPARE(r.enabled, true);
        QCOMPARE(r.host, QStringLiteral("0.0.0.0"));
        QCOMPARE(r.port, 9123);
        QCOMPARE(r.apiKey, QStringLiteral("k-123"));
        QCOMPARE(r.allowedOrigins, QStringList{QStringLiteral("http://localhost:3000")});
        QCOMPARE(r.maxWaiting, 7);
        b.raw().setValue(QStringLiteral("server/port"), 70000); // out of range: the default
        QCOMPARE(b.localServer().port, 8000);
    }
};

QTEST_GUILESS_MAIN(TestAppLocalServer)
#include "tst_app_local_server.moc"
