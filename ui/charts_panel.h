// ChartsPanel: the Engine dock's charts (Qt Charts), fed with the worker's EngineView stream:
// generation and prompt tokens/s, running / waiting requests, KV usage %, and the time to first
// token of recent requests. A sliding window (the last kWindowSeconds, one point per
// kResolutionSeconds) bounds the points; the x axis is "seconds before the latest view"
// (-window..0); a line breaks where no view came for kGapSeconds (the engine was idle). Each
// update appends to kept point lists and replaces the series' points (no new series or axes),
// and only while the panel is visible (a hidden panel catches up when shown).
#pragma once

#include <QList>
#include <QPointF>
#include <QWidget>
#include <array>

#include "app/services/engine_view.h"

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

  public slots:
    void addView(const llmwb::EngineView& view);
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
    };
    struct ChartBox {
        QChart* chart = nullptr;
        QChartView* view = nullptr;
        QValueAxis* x = nullptr;
        QValueAxis* y = nullptr;
        double fixedMax = 0; // > 0: a fixed y range (KV usage %)
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

    std::array<Track, SeriesCount> tracks_;
    std::array<ChartBox, ChartCount> charts_;
    QGridLayout* grid_ = nullptr;
    QLabel* caption_ = nullptr;
    int columns_ = 0;
    double lastT_ = -1;
    bool dirty_ = false;
};

} // namespace llmwb
