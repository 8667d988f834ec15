// The engine worker's device choice (the Model panel's Auto / CPU / CUDA, like `llmwb
// --device`): without a usable CUDA backend (this machine), Auto loads on the CPU and says why
// CUDA is not used; an explicit CUDA choice fails the load with a message naming CUDA and keeps
// the previous model loaded and usable; the choice persists in AppSettings. The weights choice
// (`llmwb --dtype`) reloads the model with its float matrices cast, and persists too.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "app/services/app_settings.h"
#include "app/services/engine_worker.h"
#include "engine/model/model_writer.h"
#include "tests/app/worker_relay.h"

using namespace llmwb;

class TestAppEngineDevice : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString modelPath_, otherPath_;
    QThread thread_;
    EngineWorker* worker_ = nullptr;
    WorkerRelay relay_; // spies listen here (see worker_relay.h)
    QString reason_;    // why CUDA is unavailable, from probeDevices()

    void invoke(const char* method, const QString& arg) {
        QMetaObject::invokeMethod(worker_, method, Qt::QueuedConnection, Q_ARG(QString, arg));
    }

    // One greedy generation; its stats (completionTokens 0 when it failed or timed out).
    GenerationStats generateOne(quint64 id) {
        QSignalSpy finished(&relay_, &WorkerRelay::finished);
        QSignalSpy failed(&relay_, &WorkerRelay::failed);
        GenerationRequest r;
        r.requestId = id;
        r.conversationId = 7;
        r.messages = {{QStringLiteral("user"), QStringLiteral("Which device runs this?")}};
        r.sampling.temperature = 0.0;
        r.sampling.maxTokens = 6;
        QMetaObject::invokeMethod(worker_, "generate", Qt::QueuedConnection,
                                  Q_ARG(llmwb::GenerationRequest, r));
        QElapsedTimer t;
        t.start();
        while (finished.isEmpty() && failed.isEmpty() && t.elapsed() < 30000)
            finished.wait(20);
        return finished.isEmpty() ? GenerationStats{}
                                  : finished.first().first().value<GenerationStats>();
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        ModelWriterSpec spec;
        spec.seed = 21;
        spec.max_position = 512;
        modelPath_ = dir_.filePath("first.gguf");
        Status st = write_model(spec, modelPath_.toStdString());
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        spec.seed = 22;
        spec.num_layers = 3;
        otherPath_ = dir_.filePath("second.gguf");
        st = write_model(spec, otherPath_.toStdString());
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());

        worker_ = startRelayedWorker(thread_, relay_, 2);

        QSignalSpy avail(&relay_, &WorkerRelay::deviceAvailability);
        QMetaObject::invokeMethod(worker_, "probeDevices", Qt::QueuedConnection);
        QVERIFY(waitFor(avail, 1, 30000));
        if (avail.first().at(0).toBool())
            QSKIP("CUDA is usable here: these tests check the machine without it");
        reason_ = avail.first().at(1).toString();
        QVERIFY2(!reason_.isEmpty(), "an unavailable CUDA backend comes with a reason");
    }

    void cleanupTestCase() {
        if (!worker_)
            return;
        worker_->stopAll();
        thread_.quit();
        QVERIFY(thread_.wait(10000));
    }

    // Auto falls back to the CPU and says why CUDA is not used, in the metadata and the view.
    void autoLoadsOnTheCpuWithTheReason() {
        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        QSignalSpy failed(&relay_, &WorkerRelay::loadFailed);
        QSignalSpy views(&relay_, &WorkerRelay::engineView);
        QSignalSpy avail(&relay_, &WorkerRelay::deviceAvailability);
        invoke("setDevice", QStringLiteral("auto"));
        invoke("loadModel", modelPath_);
        QVERIFY(waitFor(loaded, 1, 30000));
        QCOMPARE(failed.size(), 0);
        const auto m = loaded.first().first().value<ModelMetadata>();
        QCOMPARE(m.devicePreference, QStringLiteral("auto"));
        QCOMPARE(m.device, DeviceKind::Cpu);
        QCOMPARE(m.deviceName, QStringLiteral("CPU"));
        QCOMPARE(m.cudaUnavailable, reason_);
        QVERIFY(waitFor(views, 1, 5000));
        const auto v = views.last().first().value<EngineView>();
        QCOMPARE(v.device, DeviceKind::Cpu);
        QCOMPARE(v.deviceName, m.deviceName);
        QCOMPARE(v.cudaUnavailable, reason_);
        QCOMPARE(v.kvDtype, KvDtype::F16); // the CPU's auto
        // The load itself found CUDA unusable and said so.
        QVERIFY(waitFor(avail, 1, 5000));
        QCOMPARE(avail.last().at(0).toBool(), false);
        QCOMPARE(avail.last().at(1).toString(), reason_);
        QVERIFY(generateOne(1).completionTokens > 0);
    }

    // Choosing CUDA reloads the loaded model there, which fails with the reason; a new model
    // asked for on CUDA fails the same way. Both times the first model stays loaded and usable.
    void explicitCudaFailsAndKeepsThePreviousModel() {
        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        QSignalSpy failed(&relay_, &WorkerRelay::loadFailed);
        invoke("setDevice", QStringLiteral("cuda"));
        QVERIFY(waitFor(failed, 1, 30000));
        QString msg = failed.first().first().toString();
        QVERIFY2(msg.contains(QLatin1String("CUDA")), qPrintable(msg));
        QVERIFY2(msg.contains(reason_), qPrintable(msg));

        invoke("loadModel", otherPath_);
        QVERIFY(waitFor(failed, 2, 30000));
        msg = failed.at(1).first().toString();
        QVERIFY2(msg.contains(QLatin1String("CUDA")), qPrintable(msg));
        QCOMPARE(loaded.size(), 0);

        const GenerationStats s = generateOne(2);
        QVERIFY(s.completionTokens > 0);
        QVERIFY(s.finishReason == FinishReason::Length || s.finishReason == FinishReason::Stop);
    }

    // Back to the CPU: the next load works again and records the preference.
    void cpuLoadsAgain() {
        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        QSignalSpy failed(&relay_, &WorkerRelay::loadFailed);
        invoke("setDevice", QStringLiteral("cpu"));
        invoke("loadModel", otherPath_);
        QVERIFY(waitFor(loaded, 1, 30000));
        QCOMPARE(failed.size(), 0);
        const auto m = loaded.first().first().value<ModelMetadata>();
        QCOMPARE(m.devicePreference, QStringLiteral("cpu"));
        QCOMPARE(m.device, DeviceKind::Cpu);
        QCOMPARE(m.layers, 3);
        QVERIFY(generateOne(3).completionTokens > 0);
    }

    // The Model panel's weights choice (`llmwb --dtype`): bfloat16 reloads the loaded CPU model
    // with its F32 matrices cast (counted, half the bytes) and it still generates; the same
    // choice again does not reload; "auto" reloads it as stored.
    void weightDtypeReloadsWithTheCast() {
        QSignalSpy loaded(&relay_, &WorkerRelay::modelLoaded);
        QSignalSpy failed(&relay_, &WorkerRelay::loadFailed);
        invoke("setWeightDtype", QStringLiteral("bfloat16"));
        QVERIFY(waitFor(loaded, 1, 30000));
        QCOMPARE(failed.size(), 0);
        auto m = loaded.first().first().value<ModelMetadata>();
        QCOMPARE(m.weightDtype, QStringLiteral("bfloat16"));
        QCOMPARE(m.layers, 3);
        // 3 layers x 7 matrices, the embedding and the lm_head (untied), all F32.
        QCOMPARE(m.castMatrices, 3 * 7 + 2);
        QVERIFY(m.castBytes > 0);
        QCOMPARE(m.castBytes * 2, m.castSourceBytes);
        QVERIFY(m.weightsNotCast.isEmpty());
        QVERIFY(generateOne(4).completionTokens > 0);

        invoke("setWeightDtype", QStringLiteral("bf16")); // the same type: no reload
        QTest::qWait(500);
        QCOMPARE(loaded.size(), 1);

        invoke("setWeightDtype", QStringLiteral("auto"));
        QVERIFY(waitFor(loaded, 2, 30000));
        m = loaded.at(1).first().value<ModelMetadata>();
        QCOMPARE(m.weightDtype, QStringLiteral("auto"));
        QCOMPARE(m.castMatrices, 0);
        QVERIFY(generateOne(5).completionTokens > 0);
    }

    void settingPersists() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString ini = dir.filePath("settings.ini");
        {
            AppSettings s(ini);
            QCOMPARE(s.device(), QStringLiteral("auto"));
            s.setDevice(QStringLiteral("cuda"));
            s.sync();
        }
        {
            AppSettings s(ini);
            QCOMPARE(s.device(), QStringLiteral("cuda"));
            s.setDevice(QStringLiteral("cpu"));
            s.sync();
        }
        {
            AppSettings s(ini);
            QCOMPARE(s.device(), QStringLiteral("cpu"));
            s.raw().setValue(QStringLiteral("engine/device"), QStringLiteral("tpu"));
            QCOMPARE(s.device(), QStringLiteral("auto")); // unknown values read as auto
            QCOMPARE(s.weightDtype(), QStringLiteral("auto"));
            s.setWeightDtype(QStringLiteral("bf16"));
            s.sync();
        }
        {
            AppSettings s(ini);
            QCOMPARE(s.weightDtype(), QStringLiteral("bfloat16"));
            s.raw().setValue(QStringLiteral("engine/weightDtype"), QStringLiteral("float8"));
            QCOMPARE(s.weightDtype(), QStringLiteral("auto"));
        }
    }
};

QTEST_GUILESS_MAIN(TestAppEngineDevice)
#include "tst_app_engine_device.moc"
