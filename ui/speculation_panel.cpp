#include "ui/speculation_panel.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QLabel>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace llmwb {

namespace {

QChart* makeChart() {
    auto* c = new QChart;
    c->setAnimationOptions(QChart::NoAnimation);
    c->setMargins(QMargins(2, 2, 2, 2));
    c->setBackgroundRoundness(0);
    c->legend()->setAlignment(Qt::AlignTop);
    return c;
}

QChartView* makeView(QChart* c, QWidget* parent) {
    auto* v = new QChartView(c, parent);
    v->setRenderHint(QPainter::Antialiasing);
    v->setMinimumHeight(180);
    v->setMinimumWidth(220);
    return v;
}

} // namespace

SpeculationPanel::SpeculationPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    summary_ = new QLabel(this);
    summary_->setObjectName(QStringLiteral("speculationSummary"));
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary_);

    timeChart_ = makeChart();
    timeX_ = new QValueAxis;
    timeX_->setRange(-kWindowSeconds, 0);
    timeX_->setTickCount(5);
    timeX_->setLabelFormat(QStringLiteral("%.0f"));
    rateY_ = new QValueAxis;
    rateY_->setRange(0, 100);
    rateY_->setTickCount(6);
    rateY_->setLabelFormat(QStringLiteral("%.0f"));
    lengthY_ = new QValueAxis;
    lengthY_->setRange(0, 1);
    lengthY_->setTickCount(6);
    lengthY_->setLabelFormat(QStringLiteral("%.1f"));
    timeChart_->addAxis(timeX_, Qt::AlignBottom);
    timeChart_->addAxis(rateY_, Qt::AlignLeft);
    timeChart_->addAxis(lengthY_, Qt::AlignRight);
    rateSeries_ = new QScatterSeries;
    lengthSeries_ = new QScatterSeries;
    for (QScatterSeries* s : {rateSeries_, lengthSeries_}) {
        s->setMarkerSize(6);
        s->setBorderColor(Qt::transparent);
        timeChart_->addSeries(s);
        s->attachAxis(timeX_);
    }
    rateSeries_->attachAxis(rateY_);
    lengthSeries_->attachAxis(lengthY_);
    rateSeries_->setColor(QColor(0x2e, 0x7d, 0x32));
    lengthSeries_->setColor(QColor(0x15, 0x65, 0xc0));
    timeView_ = makeView(timeChart_, this);
    timeView_->setObjectName(QStringLiteral("speculationTimeChart"));
    layout->addWidget(timeView_, 3);

    posChart_ = makeChart();
    bars_ = new QBarSet(QString());
    bars_->setColor(QColor(0x2e, 0x7d, 0x32));
    barSeries_ = new QBarSeries;
    barSeries_->append(bars_);
    posChart_->addSeries(barSeries_);
    posX_ = new QBarCategoryAxis;
    posY_ = new QValueAxis;
    posY_->setRange(0, 100);
    posY_->setTickCount(6);
    posY_->setLabelFormat(QStringLiteral("%.0f"));
    posChart_->addAxis(posX_, Qt::AlignBottom);
    posChart_->addAxis(posY_, Qt::AlignLeft);
    barSeries_->attachAxis(posX_);
    barSeries_->attachAxis(posY_);
    posChart_->legend()->hide();
    posView_ = makeView(posChart_, this);
    posView_->setObjectName(QStringLiteral("speculationPositionChart"));
    layout->addWidget(posView_, 2);

    applyTheme();
    retranslate();
}

void SpeculationPanel::append(QList<QPointF>& p, double t, double y) {
    p.append(QPointF(t, y));
    qsizetype drop = 0;
    while (drop < p.size() && p[drop].x() < t - kWindowSeconds)
        ++drop;
    drop = std::max(drop, p.size() - kMaxPoints);
    if (drop > 0)
        p.remove(0, drop);
}

void SpeculationPanel::addView(const EngineView& view) {
    const double t = double(view.timeMs) / 1000.0;
    const SpeculativeStats& s = view.snapshot.speculative;
    // A new engine (rebuilt, another model) or another worker restarts the counters.
    if (t < lastT_ || s.num_drafts < last_.num_drafts)
        clear();
    const int64_t drafts = s.num_drafts - last_.num_drafts;
    const int64_t draftTokens = s.num_draft_tokens - last_.num_draft_tokens;
    const int64_t accepted = s.num_accepted_tokens - last_.num_accepted_tokens;
    if (draftTokens > 0) {
        append(rate_, t, 100.0 * double(accepted) / double(draftTokens));
        append(length_, t, 1.0 + double(accepted) / double(std::max<int64_t>(1, drafts)));
    }
    last_ = s;
    lastT_ = t;
    k_ = view.tuning.numSpeculativeTokens;
    hasView_ = true;
    refresh();
    updateSummary();
}

void SpeculationPanel::clear() {
    rate_.clear();
    length_.clear();
    last_ = SpeculativeStats{};
    lastT_ = -1;
    rateSeries_->clear();
    lengthSeries_->clear();
    bars_->remove(0, bars_->count());
    posX_->clear();
}

void SpeculationPanel::refresh() {
    QList<QPointF> shifted;
    double maxLen = 1;
    for (const QPointF& p : rate_)
        shifted.append(QPointF(p.x() - lastT_, p.y()));
    rateSeries_->replace(shifted);
    shifted.clear();
    for (const QPointF& p : length_) {
        shifted.append(QPointF(p.x() - lastT_, p.y()));
        maxLen = std::max(maxLen, p.y());
    }
    lengthSeries_->replace(shifted);
    lengthY_->setRange(0, std::ceil(maxLen));

    const std::vector<int64_t>& per = last_.accepted_per_pos;
    if (bars_->count() != int(per.size())) {
        bars_->remove(0, bars_->count());
        QStringList cats;
        for (size_t j = 0; j < per.size(); ++j) {
            bars_->append(0);
            cats << QString::number(j + 1);
        }
        posX_->clear();
        posX_->append(cats);
    }
    for (size_t j = 0; j < per.size(); ++j)
        bars_->replace(
            int(j), last_.num_drafts > 0 ? 100.0 * double(per[j]) / double(last_.num_drafts) : 0.0);
}

void SpeculationPanel::updateSummary() {
    if (!hasView_) {
        summary_->setText(tr("No model loaded."));
        return;
    }
    const SpeculativeStats& s = last_;
    if (s.num_drafts == 0) {
        summary_->setText(
            k_ > 0 ? tr("Speculative decoding is on (up to %1 draft tokens per step); no drafts "
                        "verified yet. Prompt lookup proposes drafts when the text repeats "
                        "itself.")
                         .arg(k_)
                   : tr("Speculative decoding is off. Set Speculative tokens in the Tuning dock "
                        "to verify draft tokens inside the batch."));
        return;
    }
    summary_->setText(tr("Up to %1 draft tokens per step · %2 drafts · %3 of %4 draft tokens "
                         "accepted (%5%) · mean acceptance length %6")
                          .arg(k_)
                          .arg(s.num_drafts)
                          .arg(s.num_accepted_tokens)
                          .arg(s.num_draft_tokens)
                          .arg(100.0 * s.acceptance_rate(), 0, 'f', 1)
                          .arg(s.mean_acceptance_length(), 0, 'f', 2));
}

void SpeculationPanel::applyTheme() {
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    const QColor text = palette().color(QPalette::Text);
    QColor grid = text;
    grid.setAlpha(40);
    for (QChart* c : {timeChart_, posChart_}) {
        c->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
        c->setBackgroundBrush(palette().color(QPalette::Base));
        c->setPlotAreaBackgroundVisible(false);
        c->legend()->setLabelColor(text);
        c->setTitleBrush(text);
        QFont title = font();
        title.setBold(true);
        c->setTitleFont(title);
    }
    QFont small = font();
    small.setPointSizeF(std::max(7.0, small.pointSizeF() - 1));
    for (QAbstractAxis* a :
         std::initializer_list<QAbstractAxis*>{timeX_, rateY_, lengthY_, posX_, posY_}) {
        a->setLabelsColor(text);
        a->setLabelsFont(small);
        a->setTitleBrush(text);
        a->setTitleFont(small);
        a->setGridLineColor(grid);
    }
    // setTheme resets the series colours.
    rateSeries_->setColor(QColor(0x2e, 0x7d, 0x32));
    rateSeries_->setBorderColor(Qt::transparent);
    lengthSeries_->setColor(QColor(0x15, 0x65, 0xc0));
    lengthSeries_->setBorderColor(Qt::transparent);
    bars_->setColor(QColor(0x2e, 0x7d, 0x32));
    bars_->setBorderColor(Qt::transparent);
}

void SpeculationPanel::retranslate() {
    timeChart_->setTitle(tr("Acceptance over time"));
    rateSeries_->setName(tr("acceptance rate (%)"));
    lengthSeries_->setName(tr("mean acceptance length (tokens)"));
    timeX_->setTitleText(tr("seconds before the latest update"));
    posChart_->setTitle(tr("Acceptance per draft position (%)"));
    posX_->setTitleText(tr("draft position"));
    updateSummary();
}

void SpeculationPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    else if (e->type() == QEvent::PaletteChange)
        applyTheme();
    QWidget::changeEvent(e);
}

} // namespace llmwb
