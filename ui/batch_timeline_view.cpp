#include "ui/batch_timeline_view.h"

#include <QHelpEvent>
#include <QPainter>
#include <QSet>
#include <QToolTip>
#include <cmath>

#include "ui/request_colors.h"

namespace llmwb {

namespace {
constexpr int kTimelineMargin = 4;
constexpr int kMarkHeight = 4;
} // namespace

BatchTimelineView::BatchTimelineView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void BatchTimelineView::addSteps(const QVector<StepRecord>& steps) {
    // A step number that does not follow the kept ones comes from a new engine (a model
    // loaded, the pool rebuilt): its timeline starts afresh.
    if (!steps.isEmpty() && !steps_.empty() && steps.first().step <= steps_.back().step)
        steps_.clear();
    for (const StepRecord& s : steps)
        steps_.push_back(s);
    while (steps_.size() > size_t(kMaxSteps))
        steps_.pop_front();
    if (!steps.isEmpty())
        update();
}

void BatchTimelineView::clear() {
    steps_.clear();
    labels_.clear();
    update();
}

void BatchTimelineView::addRequestLabels(const QHash<qint64, QString>& labels) {
    for (auto it = labels.cbegin(); it != labels.cend(); ++it)
        labels_.insert(it.key(), it.value());
    if (labels_.size() <= 512)
        return;
    // Keep the labels of the requests in the steps shown.
    QSet<qint64> shown;
    for (const StepRecord& s : steps_)
        for (const StepSegment& seg : s.segments)
            shown.insert(seg.requestId);
    for (auto it = labels_.begin(); it != labels_.end();)
        it = shown.contains(it.key()) || labels.contains(it.key()) ? std::next(it)
                                                                   : labels_.erase(it);
}

int BatchTimelineView::maxTokens() const {
    int m = 1;
    for (const StepRecord& s : steps_)
        m = std::max(m, s.prefillTokens + s.decodeTokens);
    return m;
}

QRect BatchTimelineView::plotRect() const {
    return QRect(kTimelineMargin, kTimelineMargin + kMarkHeight + 2,
                 std::max(1, width() - 2 * kTimelineMargin),
                 std::max(1, height() - 2 * kTimelineMargin - kMarkHeight - 2));
}

QRect BatchTimelineView::columnRect(int index) const {
    if (index < 0 || index >= stepCount())
        return {};
    const QRect p = plotRect();
    // Slot k of kMaxSteps; the newest step sits in the last slot.
    const int slot = kMaxSteps - stepCount() + index;
    const int x0 = p.left() + int(int64_t(slot) * p.width() / kMaxSteps);
    const int x1 = p.left() + int(int64_t(slot + 1) * p.width() / kMaxSteps);
    return QRect(x0, p.top(), std::max(1, x1 - x0), p.height());
}

int BatchTimelineView::indexAt(const QPoint& pos) const {
    const QRect p = plotRect();
    if (stepCount() == 0 || pos.x() < p.left() || pos.x() > p.right() || pos.y() < 0 ||
        pos.y() > height())
        return -1;
    // The slot whose [x0, x1) holds the point, with the same rounding as columnRect().
    const int64_t dx = pos.x() - p.left();
    auto x0 = [&](int64_t slot) { return slot * p.width() / kMaxSteps; };
    int slot = int(dx * kMaxSteps / p.width());
    while (slot + 1 < kMaxSteps && x0(slot + 1) <= dx)
        ++slot;
    while (slot > 0 && x0(slot) > dx)
        --slot;
    const int index = slot - (kMaxSteps - stepCount());
    return index >= 0 && index < stepCount() ? index : -1;
}

QString BatchTimelineView::stepToolTip(int index) const {
    if (index < 0 || index >= stepCount())
        return {};
    const StepRecord& s = steps_[size_t(index)];
    QString text = tr("Step %1: %2 ms").arg(s.step).arg(s.ms, 0, 'f', 1);
    text += QLatin1Char('\n') + tr("Batch: %1 requests").arg(s.segments.size());
    text += QLatin1Char('\n') +
            tr("Prefill: %1 tokens, decode: %2 tokens").arg(s.prefillTokens).arg(s.decodeTokens);
    int drafts = 0, accepted = 0;
    for (const StepSegment& seg : s.segments) {
        drafts += seg.drafts;
        accepted += seg.accepted;
    }
    if (drafts > 0)
        text += QLatin1Char('\n') +
                tr("Speculative drafts: %1 verified, %2 accepted").arg(drafts).arg(accepted);
    if (s.preempted > 0)
        text += QLatin1Char('\n') + tr("Preempted: %1").arg(s.preempted);
    for (const StepSegment& seg : s.segments)
        if (const QString label = labels_.value(seg.requestId); !label.isEmpty())
            text += QLatin1Char('\n') +
                    tr("#%1 %2: %n token(s)", nullptr, seg.tokens).arg(seg.requestId).arg(label);
    return text;
}

void BatchTimelineView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    const QRect plot = plotRect();
    if (steps_.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(plot, Qt::AlignCenter, tr("No steps yet."));
        return;
    }
    const int maxT = maxTokens();
    for (int i = 0; i < stepCount(); ++i) {
        const StepRecord& s = steps_[size_t(i)];
        const QRect col = columnRect(i);
        const int w = col.width() >= 3 ? col.width() - 1 : col.width();
        // Bar height on a square-root scale (a 500-token prefill step and a 16-token decode
        // step both stay visible); the segments split the bar linearly.
        const int total = std::max(1, s.prefillTokens + s.decodeTokens);
        const double barH = plot.height() * std::sqrt(double(total) / maxT);
        int64_t below = 0; // tokens stacked so far
        for (const StepSegment& seg : s.segments) {
            const int y0 = plot.bottom() + 1 - int(barH * double(below) / total);
            below += seg.tokens;
            const int y1 = plot.bottom() + 1 - int(barH * double(below) / total);
            QColor c = requestColor(seg.requestId);
            if (!seg.prefill)
                c = c.lighter(140);
            p.fillRect(QRect(col.left(), y1, w, std::max(1, y0 - y1)), c);
            // Rejected drafts: the top of the segment, hatched (verified, thrown away).
            if (seg.drafts > seg.accepted) {
                const int yr = y1 + int(barH * double(seg.drafts - seg.accepted) / total);
                p.fillRect(QRect(col.left(), y1, w, std::max(1, yr - y1)),
                           QBrush(palette().color(QPalette::Text), Qt::BDiagPattern));
            }
        }
        if (s.preempted > 0)
            p.fillRect(QRect(col.left(), kTimelineMargin, std::max(w, 2), kMarkHeight),
                       QColor(220, 40, 40));
    }
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(plot.bottomLeft(), plot.bottomRight());
}

bool BatchTimelineView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const int i = indexAt(he->pos());
        if (i >= 0)
            QToolTip::showText(he->globalPos(), stepToolTip(i), this, columnRect(i));
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

} // namespace llmwb
