// SpeculationPanel: the Engine dock's view of speculative decoding, from the engine's counters
// (vLLM's spec_decode_* meanings) in each EngineView:
//   - a summary line: k, drafts, draft tokens, accepted tokens, acceptance rate and mean
//     acceptance length since the engine started (or why there is nothing to show);
//   - acceptance rate (%) and mean acceptance length over the last kWindowSeconds, one point per
//     view that verified drafts (points, not lines: a view without drafts is a gap, not a ramp);
//   - acceptance per draft position (bars): accepted at position j / drafts, as vLLM's
//     per-position acceptance rate.
#pragma once

#include <QList>
#include <QPointF>
#include <QWidget>

#include "app/services/engine_view.h"

class QBarSet;
class QBarSeries;
class QBarCategoryAxis;
class QChart;
class QChartView;
class QLabel;
class QScatterSeries;
class QValueAxis;

namespace llmwb {

class SpeculationPanel : public QWidget {
    Q_OBJECT

  public:
    static constexpr double kWindowSeconds = 60.0;
    static constexpr int kMaxPoints = 2000;

    explicit SpeculationPanel(QWidget* parent = nullptr);

    QLabel* summary() const { return summary_; }
    const QList<QPointF>& ratePoints() const { return rate_; }     // (s, %)
    const QList<QPointF>& lengthPoints() const { return length_; } // (s, tokens)
    QBarSet* positionBars() const { return bars_; }                // % per draft position

  public slots:
    void addView(const llmwb::EngineView& view);
    void clear();

  protected:
    void changeEvent(QEvent* e) override;

  private:
    void retranslate();
    void applyTheme();
    void refresh();
    void updateSummary();
    static void append(QList<QPointF>& p, double t, double y);

    QLabel* summary_;
    QChart* timeChart_;
    QChartView* timeView_;
    QScatterSeries* rateSeries_;
    QScatterSeries* lengthSeries_;
    QValueAxis* timeX_;
    QValueAxis* rateY_;
    QValueAxis* lengthY_;
    QChart* posChart_;
    QChartView* posView_;
    QBarSeries* barSeries_;
    QBarSet* bars_;
    QBarCategoryAxis* posX_;
    QValueAxis* posY_;

    QList<QPointF> rate_, length_;
    SpeculativeStats last_; // counters of the previous view
    double lastT_ = -1;
    int k_ = 0;
    bool hasView_ = false;
};

} // namespace llmwb
