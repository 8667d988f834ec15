// The Local server dock: the toggle starts and stops the server (the status names its URL),
// the settings are saved, a host other than loopback shows the warning, the curl example
// carries the key, a port in use is explained in the status; the KV map legend and the
// timeline tooltips name API requests by client.
#include <QCheckBox>
#include <QDockWidget>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "app/services/engine_worker_server.h"
#include "app/services/local_server.h"
#include "ui/batch_timeline_view.h"
#include "ui/kv_block_map_view.h"
#include "ui/local_server_panel.h"

using namespace llmwb;

class TestUiLocalServerPanel : public QObject {
    Q_OBJECT

  private slots:
    void togglesSavesAndWarns() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("settings.ini"));
        LocalServerSettings s;
        s.port = 0; // any free port
        settings.setLocalServer(s);
        auto backend = std::make_shared<WorkerServingBackend>([] {});
        LocalServer server(backend);
        LocalServerPanel panel(server, settings);
        auto* enabled = panel.findChild<QCheckBox*>(QStringLiteral("serverEnabled"));
        auto* host = panel.findChild<QLineEdit*>(QStringLiteral("serverHost"));
        auto* key = panel.findChild<QLineEdit*>(QStringLiteral("serverKey"));
        QVERIFY(enabled && host && key);
        QVERIFY(!enabled->isChecked());
        QVERIFY(!server.isRunning());
        QCOMPARE(key->echoMode(), QLineEdit::Password);
        QVERIFY(!panel.warningShown());

        enabled->setChecked(true);
        QVERIFY2(server.isRunning(), qPrintable(panel.statusText()));
        QVERIFY(panel.statusText().contains(server.baseUrl()));
        QVERIFY(settings.localServer().enabled);
        QVERIFY(panel.curlExample().startsWith(
            QStringLiteral("curl %1/v1/chat/completions").arg(server.baseUrl())));
        QVERIFY(!panel.curlExample().contains(QStringLiteral("Authorization")));

        key->setText(QStringLiteral("sekrit"));
        emit key->editingFinished();
        QCOMPARE(settings.localServer().apiKey, QStringLiteral("sekrit"));
        QVERIFY(panel.curlExample().contains(QStringLiteral("Bearer sekrit")));
        QVERIFY(server.isRunning()); // restarted with the key

        host->setText(QStringLiteral("0.0.0.0"));
        emit host->editingFinished();
        QVERIFY(panel.warningShown());
        QCOMPARE(settings.localServer().host, QStringLiteral("0.0.0.0"));
        host->setText(QStringLiteral("127.0.0.1"));
        emit host->editingFinished();
        QVERIFY(!panel.warningShown());

        enabled->setChecked(false);
        QVERIFY(!server.isRunning());
        QVERIFY(!settings.localServer().enabled);
    }

    void portInUseShowsWhy() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("settings.ini"));
        auto backend = std::make_shared<WorkerServingBackend>([] {});
        LocalServer first(backend);
        LocalServerSettings s;
        s.port = 0;
        QVERIFY(first.start(s));
        s.port = first.port();
        s.enabled = true;
        settings.setLocalServer(s);
        LocalServer second(backend);
        LocalServerPanel panel(second, settings);
        panel.restore();
        QVERIFY(!second.isRunning());
        QVERIFY2(panel.statusText().contains(QStringLiteral("in use")),
                 qPrintable(panel.statusText()));
    }

    void dockJoinsTheViewMenu() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("settings.ini"));
        auto backend = std::make_shared<WorkerServingBackend>([] {});
        LocalServer server(backend);
        QMainWindow window;
        auto* view = new QMenu(&window);
        view->setObjectName(QStringLiteral("viewMenu"));
        view->addSeparator();
        QDockWidget* dock = addLocalServerDock(window, server, settings);
        QCOMPARE(dock->objectName(), QStringLiteral("localServerDock"));
        QCOMPARE(dock->windowTitle(), QStringLiteral("Local server"));
        QCOMPARE(view->actions().first(), dock->toggleViewAction());
    }

    void viewsNameApiRequests() {
        KvBlockMapView map;
        map.setRequestLabels({{5, QStringLiteral("API · curl/8.0 · 127.0.0.1")}});
        QCOMPARE(map.legendText(5), QStringLiteral("#5 API · curl/8.0 · 127.0.0.1"));
        QCOMPARE(map.legendText(6), QStringLiteral("#6"));

        BatchTimelineView timeline;
        timeline.addRequestLabels({{5, QStringLiteral("API · curl/8.0 · 127.0.0.1")}});
        StepRecord rec;
        rec.step = 1;
        rec.segments = {StepSegment{5, 3, false, 0, 0}, StepSegment{6, 1, false, 0, 0}};
        timeline.addSteps({rec});
        const QString tip = timeline.stepToolTip(0);
        QVERIFY2(tip.contains(QStringLiteral("#5 API · curl/8.0 · 127.0.0.1: 3 token")),
                 qPrintable(tip));
        QVERIFY(!tip.contains(QStringLiteral("#6")));
    }
};

QTEST_MAIN(TestUiLocalServerPanel)
#include "tst_ui_local_server_panel.moc"
