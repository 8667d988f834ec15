// ChartsPanel: the Engine dock's charts (Qt Charts), fed with the worker's EngineView stream:
// generation and prompt tokens/s, running / waiting requests, KV usage %, and the time to first
// token of recent requests. A sliding window (the last kWindowSeconds, one point per
// kResolutionSeconds) bounds the points; the x axis is "seconds before the latest view"
// (-window..0); a line breaks where no view came for kGapSeconds (the engine was idle). Each
// update appends to kept point lists and replaces the series' points (no new series or axes),
// and only while the panel is visible (a hidden panel catches up when shown).
// With a remote endpoint as the source (setRemoteSource), the same charts are fed from its
// /metrics scrapes (addRemoteMetrics) and the local views are ignored; "source: <endpoint>" is
// shown above them, and each figure the server does not expose is hidden and named under its
// chart as unavailable (no flat zero line).
#pragma once

#include <QList>
#include <QPointF>
#include <QWidget>
#include <array>

#include "app/services/engine_view.h"
#include "app/services/remote_metrics_view.h"

class QChart;
class QChartView;
class QGridLayout;
class QLabel;
class QValueAxis;
class QXYSeries;

namespace llmwb {

class ChartsPanel : public QWidget {
    Q_OBJECT

  public:
    static constexpr double kWindowSeconds = 60.0;
    static constexpr double kResolutionSeconds = 0.1; // views closer share a point (the max)
    static constexpr int kMaxPoints = 2000;           // per series, whatever the view rate
    // Views further apart than this (the engine idle: it sends no views) break a line: the
    // chart shows a gap, not a ramp from the last busy value to the next.
    static constexpr double kGapSeconds = 2.0;

    enum Series { GenerationTps, PromptTps, Running, Waiting, KvUsage, Ttft, SeriesCount };
    enum Chart { Throughput, Requests, Kv, Latency, ChartCount };

    explicit ChartsPanel(QWidget* parent = nullptr);

    int pointCount(Series s) const { return int(tracks_[s].points.size()); }
    const QList<QPointF>& points(Series s) const { return tracks_[s].points; }
    // The newest run of points (a line broken by idle gaps has one series per run).
    QXYSeries* series(Series s) const { return tracks_[s].series; }
    int segmentCount(Series s) const; // the runs drawn (0 when no points)
    QChart* chart(Chart c) const { return charts_[c].chart; }
    QValueAxis* xAxis(Chart c) const { return charts_[c].x; }
    QValueAxis* yAxis(Chart c) const { return charts_[c].y; }
    // A remote source: the series the server does not expose; the source line; the note under
    // a chart (hidden when all its figures are available).
    bool isUnavailable(Series s) const { return tracks_[s].unavailable; }
    QString remoteSource() const { return remoteSource_; }
    QLabel* sourceLabel() const { return source_; }
    QLabel* unavailableNote(Chart c) const { return charts_[c].note; }

  public slots:
    void addView(const llmwb::EngineView& view);
    // "" = the local engine (the charts follow addView again). Either way the charts restart.
    void setRemoteSource(const QString& endpointName);
    void addRemoteMetrics(const llmwb::RemoteMetricsView& view);
    void clear();

  protected:
    void changeEvent(QEvent* e) override;
    void showEvent(QShowEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;

  private:
    struct Track {
        QList<QPointF> points;
        QXYSeries* series = nullptr; // the newest run
        QList<QXYSeries*> older;     // earlier runs (before idle gaps), reused; no legend entry
        Chart chart = Throughput;
        bool unavailable = false; // a remote source does not expose it
    };
    struct ChartBox {
        QChart* chart = nullptr;
        QChartView* view = nullptr;
        QValueAxis* x = nullptr;
        QValueAxis* y = nullptr;
        double fixedMax = 0;    // > 0: a fixed y range (KV usage %)
        QWidget* box = nullptr; // the view and its note (what the grid lays out)
        QLabel* note = nullptr; // "unavailable: ..." for a remote source
    };
    void makeChart(Chart c, std::initializer_list<Series> series, bool scatter = false);
    void append(Series s, double t, double y, bool merge = true);
    void trim(Series s, double t);
    void refresh();
    void applyTheme();
    void styleSeries(Series s, QXYSeries* xy);
    QXYSeries* olderRun(Series s, int i); // creates it when needed
    void retranslate();
    void arrange();
    void setUnavailable(Series s, bool unavailable);
    void updateNotes();
    QString seriesName(Series s) const;

    std::array<Track, SeriesCount> tracks_;
    std::array<ChartBox, ChartCount> charts_;
    QGridLayout* grid_ = nullptr;
    QLabel* caption_ = nullptr;
    QLabel* source_ = nullptr;
    QString remoteSource_;
    QString remoteError_; // the last failed scrape's reason
    int columns_ = 0;
    double lastT_ = -1;
    bool dirty_ = false;
};

} // namespace llmwb
