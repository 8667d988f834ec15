// KvBlockMapView: the paged KV cache as a grid, one cell per block, painted in one pass with
// fillRect (scales to tens of thousands of blocks). Colour = owning request (legend of the
// live requests on top); shared blocks (ref count > 1) hatched; cached-free blocks (evictable
// prefix-cache entries) dimmed grey; free blocks empty. Hover shows the block's figures;
// clicking a legend entry highlights that request's blocks (clicking again clears it).
//
// A pool larger than the grid holds at kMinCell pixels per cell is aggregated: each cell stands
// for blocksPerCell() consecutive blocks, coloured by its most frequent owner and faded toward
// the free colour by the share of its blocks in use (a cell with one used block of eight is
// still visibly coloured), and its tooltip counts the mix. A caption says "1 cell = N blocks".
// So one short chat stays visible in a pool of tens of thousands of blocks.
#pragma once

#include <QHash>
#include <QVector>
#include <QWidget>
#include <algorithm>

#include "engine/serving/engine_snapshot.h"

namespace llmwb {

class KvBlockMapView : public QWidget {
    Q_OBJECT

  public:
    explicit KvBlockMapView(QWidget* parent = nullptr);

    void setSnapshot(const EngineSnapshot& snapshot);
    // Who the live requests that are not chats belong to (EngineView::requestLabels): shown in
    // the legend and the block tooltips beside the request's number.
    void setRequestLabels(const QHash<qint64, QString>& labels);
    QString legendText(qint64 requestId) const; // "#12" or "#12 API · curl/8.5.0 · 127.0.0.1"
    int blockCount() const { return int(blocks_.size()); }
    static constexpr int kMinCell = 5; // pixels per cell side before cells aggregate blocks
    // The map shows the pool's blocks 0..shownCount()-1: up to a quarter past the last used or
    // cached block, in steps of kMinShownBlocks (the rest of the pool is free); the caption says
    // so. A chat in a large, mostly free pool gets large cells.
    static constexpr int kMinShownBlocks = 256;
    int shownCount() const { return shown_; }
    QString captionText() const;

    // Blocks per cell (1: one cell per block) and the number of cells.
    int blocksPerCell() const;
    int cellCount() const;
    int cellOf(int block) const { return block / std::max(1, blocksPerCell()); }

    // Geometry (valid for the current size and snapshot).
    QRect gridRect() const;
    int cellSize() const; // pixels per cell side, gap included
    int columns() const;
    QRect cellRect(int block) const;
    int blockAt(const QPoint& pos) const; // the cell's first block; -1: none
    QString blockToolTip(int block) const;
    // The tooltip of the cell holding `block`: blockToolTip, or the mix of an aggregated cell.
    QString cellToolTip(int block) const;
    int tokensHeld(int block) const; // -1: unknown

    // Legend: one entry per live request, in snapshot order.
    QVector<qint64> legendRequests() const { return legend_; }
    QRect legendRect(int index) const;
    qint64 highlighted() const { return highlighted_; }
    void setHighlighted(qint64 requestId); // -1: none
    // Fill colour (before highlight dimming) of the cell holding `block`.
    QColor cellColor(int block) const;

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
    QHash<qint64, QString> labels_;
    void layoutLegend();
    int captionHeight() const;
    QRect gridArea(int captionH) const;
    int blocksPerCellIn(const QRect& g) const;
    QColor blockColor(int block) const;

    std::vector<SnapshotBlock> blocks_;
    std::vector<int> tokens_; // per block, -1 unknown
    int blockSize_ = 0;
    int shown_ = 0;
    QVector<qint64> legend_;
    QVector<QRect> legendRects_;
    int legendHeight_ = 0;
    qint64 highlighted_ = -1;
};

} // namespace llmwb
