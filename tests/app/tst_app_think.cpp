// Think harder through the engine worker in its thread, on a tiny model written with the model
// writer: a ladder (samples with a vote, beam search) with token counts and accuracy consistent
// with the samples the engine produced; a chat sent meanwhile answers; Cancel ends a long ladder
// and keeps the rungs done; a thinking budget on a model without <think> and a broken task file
// are refused with the reason; and the ThinkController storing a run in a real SQLite file,
// reading it back after the file is reopened, and exporting it in a report zip.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "app/report/zip/report_zip.h"
#include "app/services/database.h"
#include "app/services/engine_worker.h"
#include "app/services/think_controller.h"
#include "app/services/think_store.h"
#include "engine/model/model_writer.h"
#include "engine/serving/answer_vote.h"
#include "tests/app/worker_relay.h"

using namespace llmwb;
using tj = nlohmann::ordered_json;

class TestAppThink : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QThread thread_;
    EngineWorker* worker_ = nullptr;
    WorkerRelay relay_;
    std::unique_ptr<Database> db_;
    std::unique_ptr<ThinkStore> store_;
    std::unique_ptr<ThinkController> controller_;

    ThinkPlan smallPlan() {
        ThinkPlan p;
        p.taskKind = QStringLiteral("arith");
        p.level = 2;
        p.count = 3;
        p.ladder = QStringLiteral("n=1,4;beam=2");
        p.maxTokens = 6;
        p.temperature = 0.8;
        p.seed = 5;
        return p;
    }

    // Starts through the controller and waits for its end; the run's JSON.
    tj runPlan(const ThinkPlan& plan, qint64* storedId = nullptr, int timeoutMs = 60000) {
        QSignalSpy done(controller_.get(), &ThinkController::finished);
        const QString why = controller_->start(plan);
        if (!why.isEmpty()) {
            qWarning("start: %s", qPrintable(why));
            return {};
        }
        if (!waitFor(done, 1, timeoutMs))
            return {};
        if (storedId)
            *storedId = done.first().at(1).toLongLong();
        return done.first().at(0).value<tj>();
    }

    GenerationRequest chat(quint64 id) {
        GenerationRequest r;
        r.requestId = id;
        r.conversationId = 7;
        r.messages = {{QStringLiteral("user"), QStringLiteral("Hello there")}};
        r.sampling.temperature = 0.0;
        r.sampling.maxTokens = 6;
        return r;
    }

  private slots:
    void initTestCase() {
        qRegisterMetaType<tj>("nlohmann::ordered_json");
        registerThinkTypes();
        QVERIFY(dir_.isValid());
        const QString model = dir_.filePath("tiny.gguf");
        ModelWriterSpec spec;
        spec.seed = 11;
        spec.max_position = 1024;
        const Status st = write_model(spec, model.toStdString());
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        worker_ = startRelayedWorker(thread_, relay_, 2);
        EngineTuning t;
        t.deviceBytes = qint64(512) << 20;
        t.maxNumSeqs = 16;
        QMetaObject::invokeMethod(worker_, "setTuning", Qt::QueuedConnection,
                                  Q_ARG(llmwb::EngineTuning, t));
        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        QMetaObject::invokeMethod(worker_, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, model));
        QVERIFY(waitFor(loaded, 1, 30000));
        QVERIFY(!loaded.first().at(0).value<ModelMetadata>().hasThinkTokens);

        db_ = std::make_unique<Database>(dir_.filePath("think.sqlite"));
        QVERIFY2(db_->open(), qPrintable(db_->errorString()));
        store_ = std::make_unique<ThinkStore>(*db_);
        controller_ = std::make_unique<ThinkController>(*store_);
        connect(controller_.get(), &ThinkController::startRequested, worker_,
                &EngineWorker::runThink, Qt::QueuedConnection);
        EngineWorker* w = worker_;
        connect(
            controller_.get(), &ThinkController::cancelRequested, this, [w] { w->cancelThink(); },
            Qt::DirectConnection);
        connect(worker_, &EngineWorker::thinkProgress, controller_.get(),
                &ThinkController::onProgress, Qt::QueuedConnection);
        connect(worker_, &EngineWorker::thinkFinished, controller_.get(),
                &ThinkController::onFinished, Qt::QueuedConnection);
    }

    void cleanupTestCase() {
        worker_->stopAll();
        thread_.quit();
        QVERIFY(thread_.wait(10000));
    }

    // Every rung over every task; the counts are those of the samples kept.
    void ladderCountsWhatTheEngineProduced() {
        QSignalSpy progress(controller_.get(), &ThinkController::progress);
        qint64 id = 0;
        const tj run = runPlan(smallPlan(), &id);
        QVERIFY(run.is_object());
        QCOMPARE(QString::fromStdString(run["status"].get<std::string>()),
                 QStringLiteral("completed"));
        QVERIFY(id > 0);
        QVERIFY(progress.size() >= 1);
        const tj& tasks = run["tasks"];
        QCOMPARE(tasks.size(), size_t(3));
        const tj& rungs = run["rungs"];
        QCOMPARE(rungs.size(), size_t(3));
        QCOMPARE(rungs[0]["rung"].get<std::string>(), std::string("n=1"));
        QCOMPARE(rungs[1]["rung"].get<std::string>(), std::string("n=4"));
        QCOMPARE(rungs[2]["rung"].get<std::string>(), std::string("beam=2"));
        const int expectSamples[] = {1, 4, 1};
        for (size_t r = 0; r < rungs.size(); ++r) {
            const tj& rung = rungs[r];
            QCOMPARE(rung["tasks"].get<int>(), 3);
            QCOMPARE(rung["questions"].size(), size_t(3));
            int correct = 0;
            int64_t tokens = 0;
            for (const tj& q : rung["questions"]) {
                const tj& ss = q["samples"];
                QCOMPARE(int(ss.size()), expectSamples[r]);
                int64_t sampleTokens = 0;
                std::vector<std::optional<std::string>> answers;
                for (const tj& s : ss) {
                    QVERIFY(s["tokens"].get<int>() >= 1);
                    QVERIFY(s["tokens"].get<int>() <= 6);
                    sampleTokens += s["tokens"].get<int>();
                    answers.push_back(s["answer"].is_string()
                                          ? std::optional(s["answer"].get<std::string>())
                                          : std::nullopt);
                }
                if (r < 2) // sampling: the question spent what its samples hold
                    QCOMPARE(q["tokens"].get<int64_t>(), sampleTokens);
                else // beam: every beam's tokens, width x rounds >= the best hypothesis
                    QVERIFY(q["tokens"].get<int64_t>() >= sampleTokens);
                // The vote is the majority of the answers the samples show.
                const VoteResult v = tally_answers(answers);
                QCOMPARE(q["vote"].is_null(), !v.winner.has_value());
                if (v.winner)
                    QCOMPARE(q["vote"].get<std::string>(), *v.winner);
                const std::string expected =
                    tasks[q["task"].get<size_t>()]["answer"].get<std::string>();
                const bool ok = v.winner && normalize_number(*v.winner) == expected;
                QCOMPARE(q["correct"].get<bool>(), ok);
                correct += ok ? 1 : 0;
                tokens += q["tokens"].get<int64_t>();
            }
            QCOMPARE(rung["correct"].get<int>(), correct);
            QCOMPARE(rung["tokens"].get<int64_t>(), tokens);
            QCOMPARE(rung["accuracy"].get<double>(), correct / 3.0);
            QVERIFY(rung["wall_ms"].get<double>() > 0);
        }
        // Four samples per question spend more than one.
        QVERIFY(rungs[1]["tokens"].get<int64_t>() > rungs[0]["tokens"].get<int64_t>());
    }

    // A chat sent while a ladder runs shares the batch and answers.
    void chatAnswersDuringALadder() {
        ThinkPlan p = smallPlan();
        p.count = 6;
        p.ladder = QStringLiteral("n=8");
        p.maxTokens = 24;
        QSignalSpy done(controller_.get(), &ThinkController::finished);
        QSignalSpy chatDone(&relay_, &WorkerRelay::finished);
        QVERIFY(controller_->start(p).isEmpty());
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, chat(501)));
        QVERIFY(waitFor(chatDone, 1, 30000));
        QCOMPARE(chatDone.first().at(0).value<GenerationStats>().requestId, quint64(501));
        QVERIFY(waitFor(done, 1, 60000));
        const tj run = done.first().at(0).value<tj>();
        QCOMPARE(run["status"].get<std::string>(), std::string("completed"));
    }

    // Cancel ends a long ladder; the rungs finished are kept; the engine serves chats after.
    void cancelEndsTheRun() {
        ThinkPlan p = smallPlan();
        p.count = 40;
        p.ladder = QStringLiteral("n=1,16");
        p.maxTokens = 200;
        QSignalSpy progress(controller_.get(), &ThinkController::progress);
        QSignalSpy done(controller_.get(), &ThinkController::finished);
        QVERIFY(controller_->start(p).isEmpty());
        QVERIFY(waitFor(progress, 1, 30000));
        QVERIFY(controller_->isRunning());
        controller_->cancel();
        QVERIFY(waitFor(done, 1, 30000));
        const tj run = done.first().at(0).value<tj>();
        QCOMPARE(run["status"].get<std::string>(), std::string("cancelled"));
        QVERIFY(run["rungs"].size() < 2);
        QVERIFY(!controller_->isRunning());
        QSignalSpy chatDone(&relay_, &WorkerRelay::finished);
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, chat(502)));
        QVERIFY(waitFor(chatDone, 1, 30000));
        QVERIFY(!chatDone.first().at(0).value<GenerationStats>().cancelled());
    }

    void refusalsSayWhy() {
        ThinkPlan p = smallPlan();
        p.ladder = QStringLiteral("think=0,256");
        tj run = runPlan(p);
        QCOMPARE(run["status"].get<std::string>(), std::string("failed"));
        QVERIFY(run["error"].get<std::string>().find("<think>") != std::string::npos);

        const QString bad = dir_.filePath("bad.jsonl");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"question\": \"1 + 1?\", \"answer\": 2}\n{\"question\": 5}\n");
        f.close();
        p = smallPlan();
        p.taskKind = QStringLiteral("file");
        p.taskFile = bad;
        run = runPlan(p);
        QCOMPARE(run["status"].get<std::string>(), std::string("failed"));
        QVERIFY2(run["error"].get<std::string>().find("bad.jsonl:2") != std::string::npos,
                 run["error"].get<std::string>().c_str());
    }

    // A task file of the user's: its questions and answers, number answers compared normalised.
    void taskFileRuns() {
        const QString path = dir_.filePath("tasks.jsonl");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"question\": \"What is 6 times 7?\", \"answer\": 42}\n\n"
                "{\"question\": \"Capital of France?\", \"answer\": \"Paris\"}\n");
        f.close();
        ThinkPlan p = smallPlan();
        p.taskKind = QStringLiteral("file");
        p.taskFile = path;
        p.ladder = QStringLiteral("n=2");
        const tj run = runPlan(p);
        QCOMPARE(run["status"].get<std::string>(), std::string("completed"));
        QCOMPARE(run["task_set"].get<std::string>(), std::string("file:tasks.jsonl"));
        QCOMPARE(run["tasks"].size(), size_t(2));
        QCOMPARE(run["tasks"][0]["answer"].get<std::string>(), std::string("42"));
        QCOMPARE(run["rungs"][0]["questions"].size(), size_t(2));
    }

    // Stored in the SQLite file, read back after reopening it, exported in a report zip.
    void storedReloadedAndExported() {
        qint64 id = 0;
        const tj run = runPlan(smallPlan(), &id);
        QVERIFY(id > 0);
        const QString dbPath = db_->filePath();
        controller_.reset();
        store_.reset();
        db_.reset();
        db_ = std::make_unique<Database>(dbPath);
        QVERIFY2(db_->open(), qPrintable(db_->errorString()));
        QCOMPARE(db_->schemaVersion(), Database::kLatestVersion);
        store_ = std::make_unique<ThinkStore>(*db_);
        const auto back = store_->run(id);
        QVERIFY2(back.has_value(), qPrintable(store_->lastError()));
        QCOMPARE(QString::fromStdString(back->dump()), QString::fromStdString(run.dump()));
        bool listed = false;
        for (const ThinkRunEntry& e : store_->runs())
            listed = listed || (e.id == id && e.ladder == QStringLiteral("n=1,4;beam=2"));
        QVERIFY(listed);

        ThinkController c(*store_);
        const QString zip = dir_.filePath("think.zip");
        QCOMPARE(c.exportReport({id}, {}, zip, QStringLiteral("t")), QString());
        auto files = read_report_zip(zip.toStdString());
        QVERIFY2(files.ok(), files.ok() ? "" : files.message().c_str());
        std::string thinkJson, thinkCsv, html;
        for (const auto& [name, bytes] : *files) {
            if (name == "think.json")
                thinkJson = bytes;
            else if (name == "think.csv")
                thinkCsv = bytes;
            else if (name == "report.html")
                html = bytes;
        }
        const auto j = nlohmann::json::parse(thinkJson, nullptr, false);
        QVERIFY(!j.is_discarded() && j.is_array() && j.size() == 1);
        QCOMPARE(j[0]["rungs"].size(), size_t(3));
        QCOMPARE(j[0]["rungs"][1]["tokens"].get<int64_t>(),
                 run["rungs"][1]["tokens"].get<int64_t>());
        QCOMPARE(int(std::count(thinkCsv.begin(), thinkCsv.end(), '\n')), 1 + 3);
        QVERIFY(html.find("Think harder") != std::string::npos);
        QVERIFY(html.find("<svg") != std::string::npos);
        QCOMPARE(store_->deleteRun(id), true);
        QVERIFY(!store_->run(id).has_value());
    }
};

QTEST_GUILESS_MAIN(TestAppThink)
#include "tst_app_think.moc"
