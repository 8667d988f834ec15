// KvBlockMapView: the paged KV cache as a grid, one cell per block, painted in one pass with
// fillRect (scales to tens of thousands of blocks). Colour = owning request (legend of the
// live requests on top); shared blocks (ref count > 1) hatched; cached-free blocks (evictable
// prefix-cache entries) dimmed grey; free blocks empty. Hover shows the block's figures;
// clicking a legend entry highlights that request's blocks (clicking again clears it).
#pragma once

#include <QHash>
#include <QVector>
#include <QWidget>

#include "engine/serving/engine_snapshot.h"

namespace llmwb {

class KvBlockMapView : public QWidget {
    Q_OBJECT

  public:
    explicit KvBlockMapView(QWidget* parent = nullptr);

    void setSnapshot(const EngineSnapshot& snapshot);
    int blockCount() const { return int(blocks_.size()); }

    // Geometry (valid for the current size and snapshot).
    QRect gridRect() const;
    int cellSize() const; // pixels per cell side, gap included
    int columns() const;
    QRect cellRect(int block) const;
    int blockAt(const QPoint& pos) const; // -1: none
    QString blockToolTip(int block) const;
    int tokensHeld(int block) const; // -1: unknown

    // Legend: one entry per live request, in snapshot order.
    QVector<qint64> legendRequests() const { return legend_; }
    QRect legendRect(int index) const;
    qint64 highlighted() const { return highlighted_; }
    void setHighlighted(qint64 requestId); // -1: none
    QColor cellColor(int block) const;     // fill colour before highlight dimming

    QSize sizeHint() const override { return {320, 220}; }
    QSize minimumSizeHint() const override { return {120, 80}; }

  signals:
    void highlightChanged(qint64 requestId);

  protected:
    void paintEvent(QPaintEvent* e) override;
    bool event(QEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;

  private:
    void layoutLegend();

    std::vector<SnapshotBlock> blocks_;
    std::vector<int> tokens_; // per block, -1 unknown
    int blockSize_ = 0;
    QVector<qint64> legend_;
    QVector<QRect> legendRects_;
    int legendHeight_ = 0;
    qint64 highlighted_ = -1;
};

} // namespace llmwb
