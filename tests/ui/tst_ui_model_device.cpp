// The Model panel's device choice: Auto / CPU / CUDA; without CUDA the CUDA entry is disabled and
// the reason is shown (item tooltip, combo tooltip, a note); the device in use appears in the
// metadata; a choice is emitted and, through the main window, saved in the settings. The same for
// the weights choice (as stored / bfloat16), whose effect the metadata shows.
#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>

#include "app/services/app_settings.h"
#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "ui/main_window.h"
#include "ui/model_panel.h"

using namespace llmwb;

// What a MainWindow needs: a database in a temporary folder, its store, a controller, settings.
struct WindowFixture {
    QTemporaryDir dir;
    Database db{dir.filePath("chat.db")};
    ConversationStore store{db};
    ChatController controller{store};
    AppSettings settings{dir.filePath("settings.ini")};
};

class TestUiModelDevice : public QObject {
    Q_OBJECT

  private slots:
    void cudaEntryDisabledWithReason() {
        ModelPanel panel;
        QComboBox* combo = panel.deviceCombo();
        QCOMPARE(combo->count(), 3);
        auto* items = qobject_cast<QStandardItemModel*>(combo->model());
        QVERIFY(items);
        QVERIFY(items->item(2)->isEnabled()); // nothing known yet
        const QString reason = QStringLiteral("no CUDA driver (libcuda.so.1 not found)");
        panel.setCudaAvailability(false, reason);
        QVERIFY(!items->item(2)->isEnabled());
        QVERIFY(items->item(0)->isEnabled());
        QVERIFY(items->item(1)->isEnabled());
        QVERIFY(items->item(2)->toolTip().contains(reason));
        QVERIFY(combo->toolTip().contains(reason));
        auto* note = panel.findChild<QLabel*>(QStringLiteral("deviceNote"));
        QVERIFY(note);
        QVERIFY(!note->isHidden());
        QVERIFY(note->text().contains(reason));
        QCOMPARE(panel.cudaUnavailableReason(), reason);

        panel.setCudaAvailability(true, {});
        QVERIFY(items->item(2)->isEnabled());
        QVERIFY(note->isHidden());
    }

    void metadataShowsTheDeviceInUse() {
        ModelPanel panel;
        ModelMetadata m;
        m.name = QStringLiteral("tiny");
        m.devicePreference = QStringLiteral("auto");
        m.device = DeviceKind::Cpu;
        m.deviceName = QStringLiteral("CPU");
        m.cudaUnavailable = QStringLiteral("no CUDA driver (libcuda.so.1 not found)");
        panel.setModel(m);
        const QString shown = panel.fieldText("modelDevice");
        QVERIFY2(shown.startsWith(QLatin1String("CPU")), qPrintable(shown));
        QVERIFY2(shown.contains(m.cudaUnavailable), qPrintable(shown));
        auto* items = qobject_cast<QStandardItemModel*>(panel.deviceCombo()->model());
        QVERIFY(!items->item(2)->isEnabled()); // the load's reason reaches the combo

        m.device = DeviceKind::Cuda;
        m.deviceName = QStringLiteral("NVIDIA H200");
        m.cudaUnavailable.clear();
        panel.setModel(m);
        QCOMPARE(panel.fieldText("modelDevice"), QStringLiteral("CUDA: NVIDIA H200"));
        QVERIFY(items->item(2)->isEnabled());
    }

    void choiceIsEmittedAndSaved() {
        WindowFixture f;
        QVERIFY(f.dir.isValid() && f.db.open());
        AppSettings& settings = f.settings;
        settings.setDevice(QStringLiteral("cpu"));
        MainWindow w(f.controller, settings);
        ModelPanel* panel = w.modelPanel();
        QCOMPARE(panel->devicePreference(), QStringLiteral("cpu")); // restored
        w.onDeviceAvailability(false, QStringLiteral("no CUDA driver"));
        QSignalSpy chosen(&w, &MainWindow::deviceChosen);
        QComboBox* combo = panel->deviceCombo();
        combo->activated(0); // what a user's pick emits
        QCOMPARE(chosen.size(), 1);
        QCOMPARE(chosen.first().first().toString(), QStringLiteral("auto"));
        QCOMPARE(settings.device(), QStringLiteral("auto"));
    }

    // The weights choice (`llmwb --dtype`): restored from the settings without a signal, a pick
    // emitted and saved; the metadata says what the cast did, or why it did not apply.
    void weightsChoiceAndCastShown() {
        WindowFixture f;
        QVERIFY(f.dir.isValid() && f.db.open());
        AppSettings& settings = f.settings;
        settings.setWeightDtype(QStringLiteral("bfloat16"));
        MainWindow w(f.controller, settings);
        ModelPanel* panel = w.modelPanel();
        QComboBox* combo = panel->weightDtypeCombo();
        QCOMPARE(combo->count(), 2);
        QCOMPARE(combo->currentData().toString(), QStringLiteral("bfloat16")); // restored
        QVERIFY(combo->toolTip().contains(QLatin1String("reloads")));
        QSignalSpy chosen(&w, &MainWindow::weightDtypeChosen);
        combo->activated(0);
        QCOMPARE(chosen.size(), 1);
        QCOMPARE(chosen.first().first().toString(), QStringLiteral("auto"));
        QCOMPARE(settings.weightDtype(), QStringLiteral("auto"));
        panel->setWeightDtype(QStringLiteral("bf16")); // shown, not emitted
        QCOMPARE(combo->currentData().toString(), QStringLiteral("bfloat16"));
        QCOMPARE(chosen.size(), 1);

        ModelMetadata m;
        m.name = QStringLiteral("tiny");
        TensorGroupInfo g;
        g.group = QStringLiteral("attention");
        g.typeCounts[QStringLiteral("F16")] = 8;
        g.bytes = 1 << 20;
        g.parameters = 1 << 19;
        m.tensorGroups = {g};
        m.weightDtype = QStringLiteral("bfloat16");
        m.castMatrices = 8;
        m.castSourceBytes = m.castBytes = 1 << 20;
        panel->setModel(m);
        QString shown = panel->fieldText("modelDtypes");
        QVERIFY2(shown.contains(QLatin1String("cast to bfloat16 at load: 8 matrices")),
                 qPrintable(shown));
        m.castMatrices = 0;
        m.weightsNotCast = QStringLiteral("weight layout rows <test>");
        panel->setModel(m);
        shown = panel->fieldText("modelDtypes");
        QVERIFY2(
            shown.contains(QLatin1String("not cast to bfloat16: weight layout rows &lt;test&gt;")),
            qPrintable(shown)); // (rich text: escaped)
    }
};

QTEST_MAIN(TestUiModelDevice)
#include "tst_ui_model_device.moc"
