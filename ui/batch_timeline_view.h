// BatchTimelineView: one column per engine step (latest at the right, the last kMaxSteps
// kept), a stacked bar per step with one segment per scheduled request in the request's
// colour: prefill tokens solid, decode tokens lighter; bar heights on a square-root scale. Steps
// that preempted a request carry a red mark on top. Hover shows the step's figures.
#pragma once

#include <QWidget>
#include <deque>

#include "app/services/engine_view.h"

namespace llmwb {

class BatchTimelineView : public QWidget {
    Q_OBJECT

  public:
    static constexpr int kMaxSteps = 300;

    explicit BatchTimelineView(QWidget* parent = nullptr);

    // Appends; steps numbered at or below the newest kept one (a rebuilt engine) replace them.
    void addSteps(const QVector<StepRecord>& steps);
    void clear();
    // Labels of requests that are not chats (EngineView::requestLabels), kept while their steps
    // are shown: the step tooltips name them.
    void addRequestLabels(const QHash<qint64, QString>& labels);
    int stepCount() const { return int(steps_.size()); }
    const StepRecord& stepAtIndex(int i) const { return steps_[size_t(i)]; }
    int maxTokens() const; // tallest bar, in tokens (the vertical scale)

    QRect plotRect() const;
    QRect columnRect(int index) const;    // the full column of step `index` (0 = oldest kept)
    int indexAt(const QPoint& pos) const; // -1: none
    QString stepToolTip(int index) const;

    QSize sizeHint() const override { return {320, 140}; }
    QSize minimumSizeHint() const override { return {120, 60}; }

  protected:
    void paintEvent(QPaintEvent* e) override;
    bool event(QEvent* e) override;

  private:
    std::deque<StepRecord> steps_;
    QHash<qint64, QString> labels_;
};

} // namespace llmwb
