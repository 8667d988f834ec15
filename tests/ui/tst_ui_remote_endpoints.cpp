// The remote endpoints' widgets, offscreen: the Engine dock's charts fed from a remote /metrics
// (a server without KV usage: that chart says unavailable instead of drawing zeros; local views
// are ignored meanwhile; the source is named), the block map and timeline replaced by a note
// while a remote endpoint is chosen, the endpoints dialog's model list from /v1/models (a
// refused key and a bad URL explained; OK refuses an unusable entry), and the backend box.
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QXYSeries>
#include <QtTest>

#include "app/services/remote_metrics_poller.h"
#include "app/services/remote_metrics_view.h"
#include "fake_openai_server.h"
#include "ui/charts_panel.h"
#include "ui/chat_backend_box.h"
#include "ui/engine_panel.h"
#include "ui/remote_endpoint_dialog.h"

using namespace llmwb;

namespace {

RemoteMetricsView scrape(qint64 ms, double running, double waiting, double genTps) {
    RemoteMetricsView v;
    v.timeMs = ms;
    v.endpoint = QStringLiteral("cluster");
    v.serverKind = QStringLiteral("vllm");
    v.running = running;
    v.waiting = waiting;
    v.generationTokensPerSecond = genTps;
    v.generationExposed = true;
    v.ttftExposed = true;
    v.ttftMeanMs = 42;
    return v; // no KV usage, no prompt counter
}

} // namespace

class TestUiRemoteEndpoints : public QObject {
    Q_OBJECT

  private slots:
    void chartsFollowTheRemoteMetrics() {
        ChartsPanel charts;
        charts.resize(800, 600);
        charts.show();
        charts.setRemoteSource("cluster");
        QVERIFY(charts.sourceLabel()->isVisibleTo(&charts));
        QVERIFY(charts.sourceLabel()->text().contains("cluster"));
        charts.addRemoteMetrics(scrape(1000, 3, 1, 250));
        charts.addRemoteMetrics(scrape(2500, 4, 0, 300));
        QCOMPARE(charts.pointCount(ChartsPanel::Running), 2);
        QCOMPARE(charts.points(ChartsPanel::Running).last().y(), 4.0);
        QCOMPARE(charts.points(ChartsPanel::Waiting).first().y(), 1.0);
        QCOMPARE(charts.points(ChartsPanel::GenerationTps).last().y(), 300.0);
        QCOMPARE(charts.pointCount(ChartsPanel::Ttft), 2);
        // Not exposed: no points, the series hidden, the chart's note names it.
        QVERIFY(charts.isUnavailable(ChartsPanel::KvUsage));
        QCOMPARE(charts.pointCount(ChartsPanel::KvUsage), 0);
        QVERIFY(!charts.series(ChartsPanel::KvUsage)->isVisible());
        QVERIFY(charts.unavailableNote(ChartsPanel::Kv)->isVisibleTo(&charts));
        QVERIFY(charts.unavailableNote(ChartsPanel::Kv)->text().contains("KV cache usage"));
        QVERIFY(charts.isUnavailable(ChartsPanel::PromptTps));
        QVERIFY(!charts.isUnavailable(ChartsPanel::GenerationTps));
        QVERIFY(!charts.unavailableNote(ChartsPanel::Requests)->isVisibleTo(&charts));
        // Another endpoint's late scrape and local engine views are ignored.
        RemoteMetricsView other = scrape(3000, 9, 9, 9);
        other.endpoint = "old";
        charts.addRemoteMetrics(other);
        EngineView local;
        local.timeMs = 4000;
        local.snapshot.num_running = 7;
        charts.addView(local);
        QCOMPARE(charts.pointCount(ChartsPanel::Running), 2);
        // A failed scrape: every figure unavailable and the reason shown.
        RemoteMetricsView failed;
        failed.timeMs = 4000;
        failed.endpoint = "cluster";
        failed.error = "HTTP 404: no /metrics";
        charts.addRemoteMetrics(failed);
        QVERIFY(charts.isUnavailable(ChartsPanel::Running));
        QVERIFY(charts.sourceLabel()->text().contains("HTTP 404"));
        // Back to the local engine: its views draw again, nothing unavailable.
        charts.setRemoteSource(QString());
        QVERIFY(!charts.sourceLabel()->isVisibleTo(&charts));
        QVERIFY(!charts.isUnavailable(ChartsPanel::KvUsage));
        QVERIFY(!charts.unavailableNote(ChartsPanel::Kv)->isVisibleTo(&charts));
        charts.addView(local);
        QCOMPARE(charts.points(ChartsPanel::Running).last().y(), 7.0);
    }

    // The poller against a server whose /metrics has no KV usage, straight into the charts.
    void pollerFillsTheCharts() {
        test::FakeOpenAiServer fake;
        QVERIFY(fake.ok());
        fake.set_metrics("# TYPE vllm:num_requests_running gauge\n"
                         "vllm:num_requests_running{model_name=\"m\"} 2\n"
                         "# TYPE vllm:num_requests_waiting gauge\n"
                         "vllm:num_requests_waiting{model_name=\"m\"} 0\n");
        ChartsPanel charts;
        charts.show();
        charts.setRemoteSource("fake");
        RemoteMetricsPoller poller;
        poller.setInterval(0.2);
        connect(&poller, &RemoteMetricsPoller::metrics, &charts, &ChartsPanel::addRemoteMetrics);
        poller.start(RemoteEndpoint{"fake", QString::fromStdString(fake.url()), "", "m"});
        QTRY_VERIFY_WITH_TIMEOUT(charts.pointCount(ChartsPanel::Running) >= 2, 10000);
        poller.stop();
        QCOMPARE(charts.points(ChartsPanel::Running).last().y(), 2.0);
        QCOMPARE(charts.series(ChartsPanel::Running)->count(),
                 charts.pointCount(ChartsPanel::Running));
        QVERIFY(charts.isUnavailable(ChartsPanel::KvUsage));
        QVERIFY(charts.isUnavailable(ChartsPanel::GenerationTps));
        QVERIFY(charts.isUnavailable(ChartsPanel::Ttft));
        QCOMPARE(charts.pointCount(ChartsPanel::KvUsage), 0);
    }

    void blockMapSaysUnavailableForARemoteEndpoint() {
        EnginePanel panel;
        panel.show();
        QVERIFY(!panel.blocksUnavailable());
        panel.setRemoteSource("cluster");
        QVERIFY(panel.blocksUnavailable());
        QVERIFY(panel.remoteBlocksNote()->text().contains("not available for a remote endpoint"));
        QVERIFY(panel.figures()->text().contains("cluster"));
        panel.setRemoteMetrics(scrape(1000, 2, 5, 10));
        QVERIFY2(panel.figures()->text().contains("2 running / 5 waiting"),
                 qPrintable(panel.figures()->text()));
        QVERIFY(panel.figures()->text().contains("n/a")); // KV usage unavailable
        panel.setRemoteSource(QString());
        QVERIFY(!panel.blocksUnavailable());
    }

    void dialogFetchesModelsAndExplainsErrors() {
        test::FakeOpenAiServer fake("sk-right");
        QVERIFY(fake.ok());
        RemoteEndpointDialog dialog({});
        QCOMPARE(dialog.list()->count(), 1); // an empty list starts with a new entry
        dialog.urlEdit()->setText(QString::fromStdString(fake.url()) + "/v1");
        dialog.keyEdit()->setText("sk-wrong");
        QSignalSpy fetched(&dialog, &RemoteEndpointDialog::modelsFetched);
        dialog.fetchModels();
        QTRY_COMPARE_WITH_TIMEOUT(fetched.size(), 1, 10000);
        QCOMPARE(fetched.takeFirst().at(0).toBool(), false);
        QVERIFY2(dialog.statusLabel()->text().contains("refused the API key"),
                 qPrintable(dialog.statusLabel()->text()));
        QCOMPARE(dialog.keyEdit()->echoMode(), QLineEdit::Password);
        dialog.keyEdit()->setText("sk-right");
        dialog.fetchModels();
        QTRY_COMPARE_WITH_TIMEOUT(fetched.size(), 1, 10000);
        QCOMPARE(fetched.takeFirst().at(0).toBool(), true);
        QCOMPARE(dialog.modelCombo()->currentText(), QStringLiteral("fake-model"));
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(dialog.endpoints().size(), 1);
        QCOMPARE(dialog.endpoints()[0].model, QStringLiteral("fake-model"));
        QCOMPARE(dialog.endpoints()[0].apiKey, QStringLiteral("sk-right"));
    }

    void dialogShowsAndKeepsTheStoredEndpoints() {
        const QList<RemoteEndpoint> stored{{"a", "http://10.0.0.1:8000/v1", "k1", "m1"},
                                           {"b", "http://10.0.0.2:8000", "", "m2"}};
        RemoteEndpointDialog dialog(stored);
        QCOMPARE(dialog.list()->count(), 2);
        QCOMPARE(dialog.nameEdit()->text(), QStringLiteral("a"));
        QCOMPARE(dialog.urlEdit()->text(), QStringLiteral("http://10.0.0.1:8000/v1"));
        QCOMPARE(dialog.modelCombo()->currentText(), QStringLiteral("m1"));
        dialog.list()->setCurrentRow(1);
        QCOMPARE(dialog.nameEdit()->text(), QStringLiteral("b"));
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QVERIFY(dialog.endpoints() == stored);
    }

    void dialogRefusesAnUnusableEntry() {
        RemoteEndpointDialog dialog({});
        dialog.show();
        dialog.urlEdit()->setText("ftp://example");
        dialog.modelCombo()->setEditText("m");
        dialog.accept();
        QVERIFY(dialog.isVisible()); // not accepted
        QVERIFY2(dialog.statusLabel()->text().contains("base URL"),
                 qPrintable(dialog.statusLabel()->text()));
        QSignalSpy fetched(&dialog, &RemoteEndpointDialog::modelsFetched);
        dialog.fetchModels(); // a bad URL is explained without a request
        QCOMPARE(fetched.size(), 1);
        QCOMPARE(fetched.first().at(0).toBool(), false);
    }

    void backendBoxEmitsTheChoice() {
        ChatBackendBox box;
        RemoteEndpoint e{"cluster", "http://10.0.0.1:8000/v1", "secret", "qwen"};
        box.setEndpoints({e}, "cluster");
        QCOMPARE(box.combo()->count(), 2);
        QCOMPARE(box.combo()->currentIndex(), 1);
        QVERIFY(!box.combo()->itemData(1, Qt::ToolTipRole).toString().contains("secret"));
        QSignalSpy chosen(&box, &ChatBackendBox::backendChosen);
        box.combo()->activated(0);
        QCOMPARE(chosen.size(), 1);
        QCOMPARE(chosen.first().at(0).toString(), QString());
    }
};

QTEST_MAIN(TestUiRemoteEndpoints)
#include "tst_ui_remote_endpoints.moc"
