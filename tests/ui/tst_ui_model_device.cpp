// The Model panel's device choice: Auto / CPU / CUDA; without CUDA the CUDA entry is disabled and
// the reason is shown (item tooltip, combo tooltip, a note); the device in use appears in the
// metadata; a choice is emitted and, through the main window, saved in the settings.
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
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        Database db(dir.filePath("chat.db"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        AppSettings settings(dir.filePath("settings.ini"));
        settings.setDevice(QStringLiteral("cpu"));
        MainWindow w(controller, settings);
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
};

QTEST_MAIN(TestUiModelDevice)
#include "tst_ui_model_device.moc"
