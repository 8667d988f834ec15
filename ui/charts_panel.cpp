#include "ui/charts_panel.h"

#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QScrollArea>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace llmwb {

namespace {

// A y maximum that reads well on an axis: 1, 2, 2.5, 5 x 10^k above the largest value.
double niceMax(double v) {
    if (!(v > 0))
        return 1;
    v *= 1.1;
    const double p = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (v <= m * p)
            return m * p;
    return 10 * p;
}

QColor seriesColor(ChartsPanel::Series s) {
    switch (s) {
    case ChartsPanel::GenerationTps:
        return QColor(0x2e, 0x86, 0xde);
    case ChartsPanel::PromptTps:
        return QColor(0xe6, 0x7e, 0x22);
    case ChartsPanel::Running:
        return QColor(0x27, 0xae, 0x60);
    case ChartsPanel::Waiting:
        return QColor(0x8e, 0x44, 0xad);
    case ChartsPanel::KvUsage:
        return QColor(0x16, 0xa0, 0x85);
    case ChartsPanel::Ttft:
        return QColor(0xd3, 0x54, 0x00);
    default:
        return Qt::gray;
    }
}

} // namespace

ChartsPanel::ChartsPanel(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    caption_ = new QLabel(this);
    caption_->setObjectName(QStringLiteral("chartsCaption"));
    caption_->setWordWrap(true);
    caption_->setForegroundRole(QPalette::PlaceholderText);
    outer->addWidget(caption_);
    source_ = new QLabel(this);
    source_->setObjectName(QStringLiteral("chartsSource"));
    source_->setWordWrap(true);
    source_->hide();
    outer->addWidget(source_);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* inner = new QWidget(scroll);
    grid_ = new QGridLayout(inner);
    grid_->setContentsMargins(0, 0, 0, 0);
    grid_->setSpacing(4);
    scroll->setWidget(inner);
    outer->addWidget(scroll);

    makeChart(Throughput, {GenerationTps, PromptTps});
    makeChart(Requests, {Running, Waiting});
    makeChart(Kv, {KvUsage});
    charts_[Kv].fixedMax = 100;
    charts_[Kv].y->setRange(0, 100);
    makeChart(Latency, {Ttft}, true);
    charts_[Throughput].view->setObjectName(QStringLiteral("throughputChart"));
    charts_[Requests].view->setObjectName(QStringLiteral("requestsChart"));
    charts_[Kv].view->setObjectName(QStringLiteral("kvUsageChart"));
    charts_[Latency].view->setObjectName(QStringLiteral("ttftChart"));
    applyTheme();
    retranslate();
    arrange();
}

void ChartsPanel::makeChart(Chart c, std::initializer_list<Series> series, bool scatter) {
    ChartBox& box = charts_[c];
    box.chart = new QChart;
    box.chart->setAnimationOptions(QChart::NoAnimation);
    box.chart->setMargins(QMargins(2, 2, 2, 2));
    box.chart->setBackgroundRoundness(0);
    box.chart->legend()->setAlignment(Qt::AlignTop);
    box.x = new QValueAxis;
    box.y = new QValueAxis;
    box.x->setTickCount(5);
    box.y->setTickCount(6); // with niceMax: steps of 1, 2, 5 x 10^k
    box.x->setLabelFormat(QStringLiteral("%.0f"));
    box.x->setRange(-kWindowSeconds, 0);
    box.y->setLabelFormat(QStringLiteral("%.0f"));
    box.y->setRange(0, 1);
    box.chart->addAxis(box.x, Qt::AlignBottom);
    box.chart->addAxis(box.y, Qt::AlignLeft);
    for (Series s : series) {
        QXYSeries* xy = nullptr;
        if (scatter) {
            auto* sc = new QScatterSeries;
            sc->setMarkerSize(7);
            sc->setBorderColor(Qt::transparent);
            xy = sc;
        } else {
            xy = new QLineSeries;
        }
        xy->setUseOpenGL(false);
        box.chart->addSeries(xy);
        xy->attachAxis(box.x);
        xy->attachAxis(box.y);
        tracks_[s].series = xy;
        tracks_[s].chart = c;
    }
    box.box = new QWidget(this);
    auto* boxLayout = new QVBoxLayout(box.box);
    boxLayout->setContentsMargins(0, 0, 0, 0);
    boxLayout->setSpacing(0);
    box.view = new QChartView(box.chart, box.box);
    box.view->setRenderHint(QPainter::Antialiasing);
    box.view->setMinimumHeight(190);
    box.note = new QLabel(box.box);
    box.note->setWordWrap(true);
    box.note->setAlignment(Qt::AlignCenter);
    box.note->setStyleSheet(QStringLiteral("color: #b9770e; font-weight: bold;"));
    box.note->hide();
    boxLayout->addWidget(box.view, 1);
    boxLayout->addWidget(box.note);
    if (series.size() == 1) // the title names the one series
        box.chart->legend()->hide();
    box.view->setMinimumWidth(220);
}

void ChartsPanel::append(Series s, double t, double y, bool merge) {
    QList<QPointF>& p = tracks_[s].points;
    // Views closer than kResolutionSeconds share a point (the highest value, so that a one-view
    // spike such as a prefill burst stays visible): a chart a few hundred pixels wide cannot
    // show more, and fewer points keep each update cheap.
    if (merge && !p.isEmpty() && t - p.last().x() < kResolutionSeconds && t >= p.last().x())
        p.last().setY(std::max(p.last().y(), y));
    else
        p.append(QPointF(t, y));
    trim(s, t);
}

void ChartsPanel::trim(Series s, double t) {
    QList<QPointF>& p = tracks_[s].points;
    // Drop what left the window, and bound the count whatever the rate of views.
    qsizetype drop = 0;
    while (drop < p.size() && p[drop].x() < t - kWindowSeconds)
        ++drop;
    drop = std::max(drop, p.size() - kMaxPoints);
    if (drop > 0)
        p.remove(0, drop);
}

void ChartsPanel::addView(const EngineView& v) {
    if (!remoteSource_.isEmpty()) // the charts show the remote endpoint's figures
        return;
    const double t = double(v.timeMs) / 1000.0;
    if (t < lastT_) // another worker (or a restarted clock): start over
        clear();
    lastT_ = t;
    const EngineSnapshot& s = v.snapshot;
    append(GenerationTps, t, v.tokensPerSecond);
    append(PromptTps, t, v.promptTokensPerSecond);
    append(Running, t, s.num_running);
    append(Waiting, t, s.num_waiting);
    append(KvUsage, t, s.kv_usage * 100.0);
    for (const TtftSample& f : v.ttfts)
        append(Ttft, t, f.ttftMs, false); // one point per request
    trim(Ttft, t);                        // the scatter has points only when first tokens came
    dirty_ = true;
    if (isVisible())
        refresh();
}

void ChartsPanel::setRemoteSource(const QString& endpointName) {
    remoteSource_ = endpointName;
    remoteError_.clear();
    clear();
    for (int s = 0; s < SeriesCount; ++s)
        setUnavailable(Series(s), false);
    source_->setVisible(!endpointName.isEmpty());
    retranslate();
    dirty_ = true;
    refresh();
}

void ChartsPanel::addRemoteMetrics(const RemoteMetricsView& v) {
    if (remoteSource_.isEmpty() || v.endpoint != remoteSource_)
        return;
    const double t = double(v.timeMs) / 1000.0;
    if (t < lastT_)
        clear();
    lastT_ = t;
    remoteError_ = v.error;
    // A failed scrape (no /metrics, unreachable): every figure is unavailable until one works.
    setUnavailable(Running, !v.ok() || !v.running);
    setUnavailable(Waiting, !v.ok() || !v.waiting);
    setUnavailable(KvUsage, !v.ok() || !v.kvUsage);
    setUnavailable(PromptTps, !v.ok() || !v.promptExposed);
    setUnavailable(GenerationTps, !v.ok() || !v.generationExposed);
    setUnavailable(Ttft, !v.ok() || !v.ttftExposed);
    if (v.running)
        append(Running, t, *v.running, false);
    if (v.waiting)
        append(Waiting, t, *v.waiting, false);
    if (v.kvUsage)
        append(KvUsage, t, *v.kvUsage * 100.0, false);
    if (v.promptTokensPerSecond)
        append(PromptTps, t, *v.promptTokensPerSecond, false);
    if (v.generationTokensPerSecond)
        append(GenerationTps, t, *v.generationTokensPerSecond, false);
    if (v.ttftMeanMs)
        append(Ttft, t, *v.ttftMeanMs, false);
    for (int s = 0; s < SeriesCount; ++s)
        trim(Series(s), t);
    updateNotes();
    dirty_ = true;
    if (isVisible())
        refresh();
}

void ChartsPanel::setUnavailable(Series s, bool unavailable) {
    Track& tr = tracks_[s];
    if (tr.unavailable == unavailable)
        return;
    tr.unavailable = unavailable;
    if (unavailable) {
        tr.points.clear();
        dirty_ = true;
    }
    tr.series->setVisible(!unavailable);
    for (QXYSeries* xy : std::as_const(tr.older))
        xy->setVisible(!unavailable);
}

void ChartsPanel::updateNotes() {
    for (int c = 0; c < ChartCount; ++c) {
        QStringList missing;
        for (int s = 0; s < SeriesCount; ++s)
            if (tracks_[s].chart == c && tracks_[s].unavailable)
                missing.append(seriesName(Series(s)));
        ChartBox& box = charts_[c];
        box.note->setVisible(!missing.isEmpty());
        box.note->setText(missing.isEmpty()
                              ? QString()
                              : tr("Unavailable: %1 is not exposed by this server's /metrics.")
                                    .arg(missing.join(QStringLiteral(", "))));
    }
    if (remoteSource_.isEmpty())
        return;
    QString text = tr("Source: %1 (its /metrics, every 1.5 s)").arg(remoteSource_);
    if (!remoteError_.isEmpty())
        text += QLatin1Char('\n') + tr("Last scrape failed: %1").arg(remoteError_);
    source_->setText(text);
}

QString ChartsPanel::seriesName(Series s) const {
    switch (s) {
    case GenerationTps:
        return tr("generation throughput");
    case PromptTps:
        return tr("prompt throughput");
    case Running:
        return tr("running requests");
    case Waiting:
        return tr("waiting requests");
    case KvUsage:
        return tr("KV cache usage");
    case Ttft:
        return tr("time to first token");
    default:
        return {};
    }
}

void ChartsPanel::clear() {
    for (Track& tr : tracks_) {
        tr.points.clear();
        tr.series->clear();
        for (QXYSeries* xy : std::as_const(tr.older))
            xy->clear();
    }
    lastT_ = -1;
    dirty_ = false;
}

// The series show the points relative to the latest view (x = seconds before it, -window..0):
// the newest data sits at the right edge and moves left as views come.
void ChartsPanel::refresh() {
    if (!dirty_)
        return;
    dirty_ = false;
    std::array<double, ChartCount> maxY{};
    QList<QPointF> shifted;
    // Remote scrapes come every 1.5 s: a gap is a few missed scrapes, not an idle engine.
    const double gap = remoteSource_.isEmpty() ? kGapSeconds : 3 * kGapSeconds;
    for (int s = 0; s < SeriesCount; ++s) {
        Track& tr = tracks_[s];
        const bool line = !qobject_cast<QScatterSeries*>(tr.series);
        // Runs of points without an idle gap; the newest goes to the main series.
        QList<QList<QPointF>> runs(1);
        for (qsizetype i = 0; i < tr.points.size(); ++i) {
            const QPointF& p = tr.points[i];
            if (line && i > 0 && p.x() - tr.points[i - 1].x() > gap)
                runs.append(QList<QPointF>());
            runs.last().append(QPointF(p.x() - lastT_, p.y()));
            maxY[tr.chart] = std::max(maxY[tr.chart], p.y());
        }
        tr.series->replace(runs.last());
        for (int i = 0; i + 1 < runs.size(); ++i)
            olderRun(Series(s), i)->replace(runs[i]);
        for (qsizetype i = runs.size() - 1; i < tr.older.size(); ++i)
            tr.older[i]->clear();
    }
    for (int c = 0; c < ChartCount; ++c) {
        ChartBox& box = charts_[c];
        if (box.fixedMax <= 0) {
            const double top = niceMax(maxY[c]);
            box.y->setRange(0, top);
            box.y->setLabelFormat(top < 5 ? QStringLiteral("%.1f") : QStringLiteral("%.0f"));
        }
    }
}

void ChartsPanel::applyTheme() {
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    for (ChartBox& box : charts_) {
        box.chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
        box.chart->setBackgroundBrush(palette().color(QPalette::Base));
        box.chart->setPlotAreaBackgroundVisible(false);
        const QColor text = palette().color(QPalette::Text);
        box.chart->legend()->setLabelColor(text);
        box.chart->setTitleBrush(text);
        for (QValueAxis* a : {box.x, box.y}) {
            a->setLabelsColor(text);
            a->setTitleBrush(text);
            QColor grid = text;
            grid.setAlpha(40);
            a->setGridLineColor(grid);
        }
    }
    // setTheme resets the fonts and the series colours.
    QFont small = font();
    small.setPointSizeF(std::max(7.0, small.pointSizeF() - 1));
    QFont title = font();
    title.setBold(true);
    for (ChartBox& box : charts_) {
        box.chart->setTitleFont(title);
        box.chart->legend()->setFont(small);
        for (QValueAxis* a : {box.x, box.y}) {
            a->setLabelsFont(small);
            a->setTitleFont(small);
        }
    }
    for (int s = 0; s < SeriesCount; ++s) {
        styleSeries(Series(s), tracks_[s].series);
        for (QXYSeries* xy : std::as_const(tracks_[s].older))
            styleSeries(Series(s), xy);
    }
}

void ChartsPanel::styleSeries(Series s, QXYSeries* xy) {
    QPen pen(seriesColor(s));
    pen.setWidthF(1.8);
    xy->setPen(pen);
    xy->setColor(seriesColor(s));
    if (auto* sc = qobject_cast<QScatterSeries*>(xy))
        sc->setBorderColor(Qt::transparent);
}

QXYSeries* ChartsPanel::olderRun(Series s, int i) {
    Track& tr = tracks_[s];
    while (tr.older.size() <= i) {
        ChartBox& box = charts_[tr.chart];
        auto* xy = new QLineSeries;
        xy->setUseOpenGL(false);
        box.chart->addSeries(xy);
        xy->attachAxis(box.x);
        xy->attachAxis(box.y);
        // One legend entry per quantity: the main series has it.
        for (QLegendMarker* m : box.chart->legend()->markers(xy))
            m->setVisible(false);
        styleSeries(s, xy);
        tr.older.append(xy);
    }
    return tr.older[i];
}

int ChartsPanel::segmentCount(Series s) const {
    const Track& tr = tracks_[s];
    int n = tr.series->count() > 0 ? 1 : 0;
    for (const QXYSeries* xy : tr.older)
        n += xy->count() > 0 ? 1 : 0;
    return n;
}

void ChartsPanel::retranslate() {
    charts_[Throughput].chart->setTitle(tr("Throughput (tokens/s)"));
    charts_[Requests].chart->setTitle(tr("Requests"));
    charts_[Kv].chart->setTitle(tr("KV cache usage (%)"));
    charts_[Latency].chart->setTitle(tr("Time to first token (ms)"));
    caption_->setText(tr("The last %1 seconds; the x axis counts seconds before the latest "
                         "update.")
                          .arg(kWindowSeconds));
    tracks_[GenerationTps].series->setName(tr("generation"));
    tracks_[PromptTps].series->setName(tr("prompt"));
    tracks_[Running].series->setName(tr("running"));
    tracks_[Waiting].series->setName(tr("waiting"));
    tracks_[KvUsage].series->setName(tr("used blocks"));
    tracks_[Ttft].series->setName(remoteSource_.isEmpty() ? tr("per request")
                                                          : tr("mean per scrape"));
    updateNotes();
}

// Two columns when there is room, otherwise one (the scroll area takes the rest).
void ChartsPanel::arrange() {
    const int cols = width() >= 640 ? 2 : 1;
    if (cols == columns_)
        return;
    columns_ = cols;
    for (const ChartBox& box : charts_)
        grid_->removeWidget(box.box);
    for (int c = 0; c < ChartCount; ++c)
        grid_->addWidget(charts_[c].box, c / cols, c % cols);
}

void ChartsPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    else if (e->type() == QEvent::PaletteChange)
        applyTheme();
    QWidget::changeEvent(e);
}

void ChartsPanel::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    refresh();
}

void ChartsPanel::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    arrange();
}

} // namespace llmwb
