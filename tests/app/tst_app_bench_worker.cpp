// Benchmarks through the engine worker in its thread, on a tiny model written with the model
// writer: a plan's runs (policies, a sweep) with their figures and rows, Cancel mid-run (the run
// is kept as cancelled, the engine serves chats afterwards), a chat sent during a run waits and
// then answers; and the BenchController storing the runs in a real SQLite file, exporting them
// as a report zip and importing it again with identical figures.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "app/report/report_compare.h"
#include "app/services/bench_controller.h"
#include "app/services/bench_store.h"
#include "app/services/database.h"
#include "app/services/engine_worker.h"
#include "engine/model/model_writer.h"
#include "tests/app/worker_relay.h"

using namespace llmwb;

class TestAppBenchWorker : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QThread thread_;
    EngineWorker* worker_ = nullptr;
    WorkerRelay relay_;
    qint64 nextPlan_ = 1;

    BenchPlan smallPlan(int prompts, int outputLen) {
        BenchPlan p;
        p.id = nextPlan_++;
        p.workload.numPrompts = prompts;
        p.workload.inputLen = 12;
        p.workload.outputLen = outputLen;
        p.workload.seed = 3;
        return p;
    }

    // Runs a plan to its end; returns its outcomes.
    QList<BenchRunOutcome> runPlan(const BenchPlan& plan, QString* message,
                                   int timeoutMs = 120000) {
        QSignalSpy runs(&relay_, &WorkerRelay::benchRunFinished);
        QSignalSpy done(&relay_, &WorkerRelay::benchFinished);
        QMetaObject::invokeMethod(worker_, "runBenchmark", Qt::QueuedConnection,
                                  Q_ARG(llmwb::BenchPlan, plan));
        if (!waitFor(done, 1, timeoutMs))
            return {};
        [&] { QCOMPARE(done.first().at(0).toLongLong(), plan.id); }();
        *message = done.first().at(1).toString();
        QList<BenchRunOutcome> out;
        for (const auto& args : runs)
            out << args.first().value<BenchRunOutcome>();
        return out;
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
        registerBenchTypes();
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
        t.maxNumSeqs = 8;
        QMetaObject::invokeMethod(worker_, "setTuning", Qt::QueuedConnection,
                                  Q_ARG(llmwb::EngineTuning, t));
        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        QMetaObject::invokeMethod(worker_, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, model));
        QVERIFY(waitFor(loaded, 1, 30000));
    }

    void cleanupTestCase() {
        worker_->stopAll();
        thread_.quit();
        QVERIFY(thread_.wait(10000));
    }

    void policiesRunTheSameWorkload() {
        BenchPlan plan = smallPlan(6, 8);
        plan.policies = {QStringLiteral("continuous"), QStringLiteral("sequential")};
        QString message;
        const QList<BenchRunOutcome> runs = runPlan(plan, &message);
        QCOMPARE(message, QString());
        QCOMPARE(runs.size(), 2);
        for (int i = 0; i < 2; ++i) {
            const BenchRun& r = runs[i].run;
            QCOMPARE(runs[i].index, i);
            QCOMPARE(r.status, BenchRunStatus::Completed);
            QCOMPARE(QString::fromStdString(r.policy), plan.policies[i]);
            QCOMPARE(QString::fromStdString(r.name), plan.policies[i]);
            QCOMPARE(r.figures.completed, 6);
            QCOMPARE(r.figures.failed, 0);
            QCOMPARE(r.figures.total_output_tokens, int64_t(6 * 8));
            QCOMPARE(int(r.requests.size()), 6);
            QVERIFY(!r.steps.empty());
            int64_t decoded = 0, out = 0;
            for (const BenchStepRow& s : r.steps)
                decoded += s.decode_tokens;
            for (const BenchRequestRow& q : r.requests) {
                QVERIFY(q.arrival_s <= q.first_token_s && q.first_token_s <= q.finish_s);
                QCOMPARE(q.output_tokens, 8);
                out += q.output_tokens;
            }
            QCOMPARE(out, r.figures.total_output_tokens);
            QVERIFY(decoded > 0 && decoded <= out);
            QVERIFY(r.figures.output_throughput > 0);
            // The percentiles asked for, in order.
            QCOMPARE(int(r.figures.ttft_ms.percentiles.size()), 3);
            QCOMPARE(r.figures.ttft_ms.percentiles[0].first, 50.0);
            QCOMPARE(r.figures.ttft_ms.percentiles[2].first, 99.0);
            QCOMPARE(r.settings["engine"]["scheduling_policy"].get<std::string>(),
                     plan.policies[i].toStdString());
            QCOMPARE(r.settings["workload"]["num_prompts"].get<int>(), 6);
            QVERIFY(!runs[i].environment.empty());
        }
        // Sequential runs one request at a time: never more than one in a step.
        for (const BenchStepRow& s : runs[1].run.steps)
            QVERIFY2(s.running <= 1, "sequential ran two requests at once");
        // The same workload: the same prompt lengths in both runs.
        for (int k = 0; k < 6; ++k)
            QCOMPARE(runs[0].run.requests[k].input_tokens, runs[1].run.requests[k].input_tokens);
    }

    void sweepGivesOneRunPerValue() {
        BenchPlan plan = smallPlan(6, 6);
        plan.sweepSetting = QStringLiteral("max_num_seqs");
        plan.sweepValues = {1, 4};
        QString message;
        const QList<BenchRunOutcome> runs = runPlan(plan, &message);
        QCOMPARE(message, QString());
        QCOMPARE(runs.size(), 2);
        QCOMPARE(QString::fromStdString(runs[0].run.name), QStringLiteral("max_num_seqs=1"));
        QCOMPARE(QString::fromStdString(runs[1].run.name), QStringLiteral("max_num_seqs=4"));
        QCOMPARE(runs[0].run.sweep_setting, std::string("max_num_seqs"));
        QCOMPARE(runs[0].run.sweep_value, 1.0);
        QCOMPARE(runs[1].run.sweep_value, 4.0);
        QCOMPARE(runs[0].run.settings["engine"]["max_num_seqs"].get<int>(), 1);
        QCOMPARE(runs[1].run.settings["engine"]["max_num_seqs"].get<int>(), 4);
        int most0 = 0, most1 = 0;
        for (const BenchStepRow& s : runs[0].run.steps)
            most0 = std::max(most0, s.running);
        for (const BenchStepRow& s : runs[1].run.steps)
            most1 = std::max(most1, s.running);
        QCOMPARE(most0, 1);
        QVERIFY(most1 > 1 && most1 <= 4);
    }

    // The user's own messages run as the chat sends them: through the chat template.
    void conversationPromptsUseTheChatTemplate() {
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, chat(5)));
        QVERIFY(waitFor(finished, 1, 30000));
        const qint64 chatPromptTokens =
            finished.first().first().value<GenerationStats>().promptTokens;
        BenchPlan plan = smallPlan(1, 4);
        plan.workload.prompts = {QStringLiteral("Hello there"), QStringLiteral("Hello there")};
        QCOMPARE(plan.workload.datasetName(), QStringLiteral("conversations"));
        QString message;
        const QList<BenchRunOutcome> runs = runPlan(plan, &message);
        QCOMPARE(message, QString());
        QCOMPARE(runs.size(), 1);
        QCOMPARE(int(runs[0].run.requests.size()), 2);
        for (const BenchRequestRow& r : runs[0].run.requests)
            QCOMPARE(qint64(r.input_tokens), chatPromptTokens);
        QCOMPARE(runs[0].run.settings["workload"]["dataset_name"].get<std::string>(),
                 std::string("conversations"));
    }

    void cancelKeepsTheRunAndTheEngineServes() {
        BenchPlan plan = smallPlan(2000, 64);
        plan.policies = {QStringLiteral("continuous"), QStringLiteral("static")};
        QSignalSpy progress(&relay_, &WorkerRelay::benchProgress);
        QSignalSpy runs(&relay_, &WorkerRelay::benchRunFinished);
        QSignalSpy done(&relay_, &WorkerRelay::benchFinished);
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        QMetaObject::invokeMethod(worker_, "runBenchmark", Qt::QueuedConnection,
                                  Q_ARG(llmwb::BenchPlan, plan));
        // Progress with requests done, then a chat (it waits), then Cancel.
        QElapsedTimer t;
        t.start();
        bool some = false;
        while (!some && t.elapsed() < 60000) {
            progress.wait(50);
            for (const auto& args : progress) {
                const auto p = args.first().value<BenchProgress>();
                QCOMPARE(p.planId, plan.id);
                QCOMPARE(p.runs, 2);
                some = some || p.completed > 0;
            }
        }
        QVERIFY(some);
        QVERIFY(worker_->isBenchmarking());
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, chat(77)));
        QTest::qWait(100);
        QCOMPARE(finished.size(), 0); // it waits for the benchmark
        worker_->cancelBenchmark();
        QVERIFY(waitFor(done, 1, 30000));
        QVERIFY(!done.first().at(1).toString().isEmpty()); // says it was cancelled
        QCOMPARE(runs.size(), 1);                          // the second run never started
        const auto out = runs.first().first().value<BenchRunOutcome>();
        QCOMPARE(out.run.status, BenchRunStatus::Cancelled);
        QVERIFY(!out.run.error.empty());
        QVERIFY(out.run.figures.completed > 0);
        QVERIFY(out.run.figures.completed < 2000);
        QCOMPARE(int(out.run.requests.size()), 2000);
        int unfinished = 0;
        for (const BenchRequestRow& r : out.run.requests)
            unfinished += r.finish_s < 0 ? 1 : 0;
        QCOMPARE(unfinished, 2000 - out.run.figures.completed);
        // The chat that waited answers now, on the chat engine.
        QVERIFY(waitFor(finished, 1, 30000));
        const auto stats = finished.first().first().value<GenerationStats>();
        QCOMPARE(stats.requestId, quint64(77));
        QCOMPARE(stats.completionTokens, qint64(6));
        QVERIFY(!worker_->isBenchmarking());
    }

    void controllerStoresExportsAndImports() {
        Database db(dir_.filePath("bench.sqlite"));
        QVERIFY2(db.open(), qPrintable(db.errorString()));
        BenchStore store(db);
        BenchController controller(store);
        connect(&controller, &BenchController::startRequested, worker_, &EngineWorker::runBenchmark,
                Qt::QueuedConnection);
        connect(&relay_, &WorkerRelay::benchRunFinished, &controller,
                &BenchController::onRunFinished);
        connect(&relay_, &WorkerRelay::benchFinished, &controller, &BenchController::onFinished);
        QSignalSpy finished(&controller, &BenchController::finished);
        BenchPlan plan = smallPlan(5, 5);
        plan.name = QStringLiteral("mine");
        plan.policies = {QStringLiteral("continuous"), QStringLiteral("static")};
        QCOMPARE(controller.start(plan), QString());
        QVERIFY(controller.isRunning());
        QVERIFY(!controller.start(plan).isEmpty()); // one plan at a time
        QVERIFY(waitFor(finished, 1, 120000));
        QCOMPARE(finished.first().first().toString(), QString());
        const QList<qint64> ids = controller.planRuns();
        QCOMPARE(ids.size(), 2);
        const QList<BenchRunEntry> listed = store.runs();
        QCOMPARE(listed.size(), 2);
        QCOMPARE(listed[0].groupId, listed[1].groupId);

        const QString zip = dir_.filePath("report.zip");
        QCOMPARE(controller.exportReport(ids, zip, QStringLiteral("Two policies")), QString());
        QVERIFY(QFileInfo(zip).size() > 0);
        QString error;
        const QList<qint64> imported = controller.importReport(zip, &error);
        QCOMPARE(error, QString());
        QCOMPARE(imported.size(), 2);
        for (int i = 0; i < 2; ++i) {
            const auto a = store.run(ids[i]);
            const auto b = store.run(imported[i]);
            QVERIFY(a && b);
            QCOMPARE(b->entry.importedFrom, QStringLiteral("report.zip"));
            QCOMPARE(b->run.name, a->run.name);
            QCOMPARE(b->run.requests.size(), a->run.requests.size());
            QCOMPARE(b->run.steps.size(), a->run.steps.size());
            // Every figure identical: a comparison shows no difference.
            for (const CompareRow& row : compare_runs({&a->run, &b->run}))
                if (row.diff_pct.size() == 2 && row.diff_pct[1])
                    QVERIFY2(*row.diff_pct[1] == 0.0, row.key.c_str());
            QCOMPARE(b->run.figures.output_throughput, a->run.figures.output_throughput);
            QCOMPARE(b->run.figures.ttft_ms.percentiles, a->run.figures.ttft_ms.percentiles);
        }
        // A damaged report changes nothing stored.
        QFile bad(dir_.filePath("bad.zip"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("PK\x03\x04 not really a zip");
        bad.close();
        QVERIFY(controller.importReport(bad.fileName(), &error).isEmpty());
        QVERIFY(error.contains(QStringLiteral("bad.zip")));
        QCOMPARE(store.runs().size(), 4);
    }
};

QTEST_GUILESS_MAIN(TestAppBenchWorker)
#include "tst_app_bench_worker.moc"
