// A model whose chat template runs away (a program from a stranger): the worker reports the
// limit it hit as the request's error, Stop ends the render (not the wall-time limit, raised
// here to a minute), and quitting joins the worker thread while such a render runs.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "app/services/engine_worker.h"
#include "engine/model/model_writer.h"
#include "tests/app/worker_relay.h"

using namespace llmwb;

namespace {

// About 10^6 comparisons of two 100,000-item lists: minutes of work within every other limit
// (few steps, few loop iterations, nothing allocated per iteration).
const char* kSlowTemplate =
    "{% set a = range(100000) | list %}{% set b = range(100000) | list %}"
    "{% for i in range(1000) %}{% for j in range(1000) %}{% if a == b %}{% endif %}"
    "{% endfor %}{% endfor %}{{ messages[0]['content'] }}";

// Writes the `enable_thinking` it was given (Qwen3's templates test `is defined` the same way):
// "default" when absent, a longer text when false, so the prompt's length tells them apart.
const char* kThinkingTemplate =
    "{{ messages[0]['content'] }}{% if enable_thinking is defined %}"
    "{% if enable_thinking %} think{% else %} no thinking here please just answer{% endif %}"
    "{% else %} default{% endif %}";

} // namespace

class TestAppHostileTemplate : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString modelPath_, thinkingModelPath_;

    // A safetensors model folder whose tokenizer_config.json carries `chatTemplate`.
    static bool writeModelWithTemplate(const QString& path, const char* chatTemplate) {
        ModelWriterSpec spec;
        spec.format = ModelFileFormat::Safetensors;
        if (!write_model(spec, path.toStdString()).ok())
            return false;
        QFile cfg(QDir(path).filePath("tokenizer_config.json"));
        if (!cfg.open(QIODevice::ReadOnly))
            return false;
        QJsonObject o = QJsonDocument::fromJson(cfg.readAll()).object();
        cfg.close();
        o["chat_template"] = QString::fromUtf8(chatTemplate);
        return cfg.open(QIODevice::WriteOnly | QIODevice::Truncate) &&
               cfg.write(QJsonDocument(o).toJson()) > 0;
    }

    GenerationRequest request(quint64 id) {
        GenerationRequest r;
        r.requestId = id;
        r.conversationId = 500 + qint64(id);
        r.messages = {{QStringLiteral("user"), QStringLiteral("Hello")}};
        r.sampling.temperature = 0.0;
        r.sampling.maxTokens = 4;
        return r;
    }

    // A started worker with the model loaded.
    EngineWorker* startWorker(QThread& thread, WorkerRelay& relay, QString path = {}) {
        EngineWorker* w = startRelayedWorker(thread, relay, 1);
        QSignalSpy loaded(&relay, &WorkerRelay::modelLoaded);
        QMetaObject::invokeMethod(w, "loadModel", Qt::QueuedConnection,
                                  Q_ARG(QString, path.isEmpty() ? modelPath_ : path));
        if (!waitFor(loaded, 1, 30000))
            return nullptr;
        if (!loaded.first().first().value<ModelMetadata>().hasChatTemplate)
            return nullptr;
        return w;
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        modelPath_ = dir_.filePath("hostile");
        QVERIFY(writeModelWithTemplate(modelPath_, kSlowTemplate));
        thinkingModelPath_ = dir_.filePath("thinking");
        QVERIFY(writeModelWithTemplate(thinkingModelPath_, kThinkingTemplate));
    }

    // A chat's Thinking setting reaches the template as enable_thinking (absent by default);
    // a thinking budget on a model without <think> tokens is refused with the reason.
    void chatThinkingSettingsReachTheTemplate() {
        QThread thread;
        WorkerRelay relay;
        EngineWorker* w = startWorker(thread, relay, thinkingModelPath_);
        QVERIFY(w);
        QSignalSpy finished(&relay, &WorkerRelay::finished);
        QSignalSpy failed(&relay, &WorkerRelay::failed);
        qint64 promptTokens[3] = {}; // by setting + 1: template default, off, on
        for (int setting : {-1, 1, 0}) {
            GenerationRequest r = request(quint64(20 + setting));
            r.sampling.enableThinking = setting;
            finished.clear();
            QMetaObject::invokeMethod(w, "generate", Qt::QueuedConnection,
                                      Q_ARG(llmwb::GenerationRequest, r));
            QVERIFY(waitFor(finished, 1, 30000));
            promptTokens[setting + 1] =
                finished.first().first().value<GenerationStats>().promptTokens;
        }
        QCOMPARE(failed.size(), 0);
        // " no thinking here please just answer" is longer than " think" and " default".
        const qint64 byDefault = promptTokens[0], off = promptTokens[1], on = promptTokens[2];
        QVERIFY2(off > byDefault && off > on && on != byDefault,
                 qPrintable(
                     QStringLiteral("default %1, off %2, on %3").arg(byDefault).arg(off).arg(on)));
        GenerationRequest budget = request(30);
        budget.sampling.thinkingBudget = 16;
        QMetaObject::invokeMethod(w, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, budget));
        QVERIFY(waitFor(failed, 1, 30000));
        QCOMPARE(failed.first().at(0).value<quint64>(), quint64(30));
        QVERIFY2(failed.first().at(2).toString().contains("think"),
                 qPrintable(failed.first().at(2).toString()));
        w->stopAll();
        thread.quit();
        QVERIFY(thread.wait(10000));
    }

    // The chat's settings (stored as JSON in the database file: external input).
    void thinkingSettingsJson() {
        SamplingSettings s;
        QVERIFY(!s.toJson().contains("enable_thinking") && !s.toJson().contains("thinking_budget"));
        s.enableThinking = 0;
        s.thinkingBudget = 512;
        QCOMPARE(SamplingSettings::fromJson(s.toJson()), s);
        QJsonObject bad;
        bad["enable_thinking"] = QStringLiteral("yes");
        bad["thinking_budget"] = -50;
        const SamplingSettings b = SamplingSettings::fromJson(bad);
        QCOMPARE(b.enableThinking, -1);
        QCOMPARE(b.thinkingBudget, -1);
        bad["thinking_budget"] = 1e12;
        QCOMPARE(SamplingSettings::fromJson(bad).thinkingBudget, 1 << 20);
    }

    void runawayTemplateFailsNamingTheLimit() {
        QThread thread;
        WorkerRelay relay;
        EngineWorker* w = startWorker(thread, relay);
        QVERIFY(w);
        w->setTemplateTimeLimit(0.3);
        QSignalSpy failed(&relay, &WorkerRelay::failed);
        QMetaObject::invokeMethod(w, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(1)));
        QVERIFY(waitFor(failed, 1, 30000));
        QCOMPARE(failed.first().at(0).value<quint64>(), quint64(1));
        const QString message = failed.first().at(2).toString();
        QVERIFY2(message.contains("chat template") && message.contains("0.3 s of rendering time"),
                 qPrintable(message));
        w->stopAll();
        thread.quit();
        QVERIFY(thread.wait(10000));
    }

    void stopEndsTheRender() {
        QThread thread;
        WorkerRelay relay;
        EngineWorker* w = startWorker(thread, relay);
        QVERIFY(w);
        w->setTemplateTimeLimit(60); // only Stop can end it within the test's wait
        QSignalSpy finished(&relay, &WorkerRelay::finished);
        QSignalSpy failed(&relay, &WorkerRelay::failed);
        QMetaObject::invokeMethod(w, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(2)));
        QTest::qWait(300); // the render is running
        QElapsedTimer sinceStop;
        sinceStop.start();
        w->stop(2);
        QVERIFY(waitFor(finished, 1, 30000));
        const auto stats = finished.first().first().value<GenerationStats>();
        QCOMPARE(stats.requestId, quint64(2));
        QCOMPARE(stats.finishReason, FinishReason::Aborted);
        QCOMPARE(failed.size(), 0);
        qInfo("stop ended the template render after %lld ms", sinceStop.elapsed());
        // The worker is usable afterwards: the next request renders (and fails on the limit).
        w->setTemplateTimeLimit(0.2);
        QMetaObject::invokeMethod(w, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(3)));
        QVERIFY(waitFor(failed, 1, 30000));
        QCOMPARE(failed.first().at(0).value<quint64>(), quint64(3));
        w->stopAll();
        thread.quit();
        QVERIFY(thread.wait(10000));
    }

    void quitDuringTheRender() {
        QThread thread;
        WorkerRelay relay;
        EngineWorker* w = startWorker(thread, relay);
        QVERIFY(w);
        w->setTemplateTimeLimit(60);
        QMetaObject::invokeMethod(w, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, request(4)));
        QTest::qWait(300);
        QElapsedTimer quitting;
        quitting.start();
        // What main() does on aboutToQuit.
        w->stopAll();
        thread.quit();
        QVERIFY(thread.wait(20000));
        qInfo("the worker thread ended %lld ms after stopAll", quitting.elapsed());
    }
};

QTEST_GUILESS_MAIN(TestAppHostileTemplate)
#include "tst_app_hostile_template.moc"
