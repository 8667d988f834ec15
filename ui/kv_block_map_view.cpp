#include "ui/kv_block_map_view.h"

#include <QHelpEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "ui/request_colors.h"

namespace llmwb {

namespace {
constexpr int kMaxCell = 22;
constexpr int kLegendSwatch = 10;
constexpr int kBlockMapMargin = 4;
} // namespace

KvBlockMapView::KvBlockMapView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void KvBlockMapView::setSnapshot(const EngineSnapshot& s) {
    blocks_ = s.blocks;
    // Zoom to the used start of the pool: every block past the last used or cached one is free,
    // so a chat in a pool of thousands of blocks gets large cells. Shown in steps of
    // kMinShownBlocks, so the map does not rescale at every block a request takes.
    int lastBusy = -1;
    for (int b = int(blocks_.size()) - 1; b >= 0; --b)
        if (blocks_[size_t(b)].state != BlockState::Free) {
            lastBusy = b;
            break;
        }
    const int64_t want = int64_t(lastBusy + 1) + (lastBusy + 1) / 4; // some room to grow
    const int64_t step = kMinShownBlocks;
    shown_ = int(std::min<int64_t>(int64_t(blocks_.size()),
                                   std::max<int64_t>(step, (want + step - 1) / step * step)));
    blockSize_ = s.block_size;
    tokens_.assign(blocks_.size(), -1);
    // Tokens held: known for the blocks of the requests scheduled in the step (their tables);
    // the other used and cached blocks are full unless they are a request's last block.
    for (const SnapshotScheduled& r : s.scheduled) {
        for (size_t i = 0; i < r.blocks.size(); ++i) {
            const int32_t b = r.blocks[i];
            if (b < 0 || size_t(b) >= tokens_.size())
                continue;
            const int64_t held = int64_t(r.num_computed) - int64_t(i) * blockSize_;
            tokens_[size_t(b)] = int(std::clamp<int64_t>(held, 0, blockSize_));
        }
    }
    for (size_t b = 0; b < blocks_.size(); ++b) {
        if (tokens_[b] >= 0)
            continue;
        if (blocks_[b].state == BlockState::Free)
            tokens_[b] = 0;
        else if (blocks_[b].hash != 0) // hashed blocks are full blocks
            tokens_[b] = blockSize_;
    }
    legend_.clear();
    for (const SnapshotRequest& r : s.requests)
        if (r.status != RequestStatus::Finished)
            legend_.push_back(r.id);
    if (highlighted_ >= 0 && !legend_.contains(highlighted_)) {
        highlighted_ = -1;
        emit highlightChanged(-1);
    }
    layoutLegend();
    update();
}

void KvBlockMapView::layoutLegend() {
    legendRects_.clear();
    const QFontMetrics fm(font());
    const int rowH = fm.height() + 2;
    int x = kBlockMapMargin, y = kBlockMapMargin;
    for (qint64 id : legend_) {
        const int w = kLegendSwatch + 4 + fm.horizontalAdvance(legendText(id)) + 8;
        if (x + w > width() - kBlockMapMargin && x > kBlockMapMargin) {
            x = kBlockMapMargin;
            y += rowH;
        }
        legendRects_.push_back(QRect(x, y, w, rowH));
        x += w;
    }
    legendHeight_ = legend_.isEmpty() ? 0 : y + rowH + kBlockMapMargin;
}

void KvBlockMapView::resizeEvent(QResizeEvent* e) {
    layoutLegend();
    QWidget::resizeEvent(e);
}

QRect KvBlockMapView::gridArea(int captionH) const {
    return QRect(kBlockMapMargin, legendHeight_ + kBlockMapMargin + captionH,
                 std::max(1, width() - 2 * kBlockMapMargin),
                 std::max(1, height() - legendHeight_ - captionH - 2 * kBlockMapMargin));
}

int KvBlockMapView::blocksPerCellIn(const QRect& g) const {
    const int64_t n = shownCount();
    const int64_t fit =
        int64_t(std::max(1, g.width() / kMinCell)) * std::max(1, g.height() / kMinCell);
    return n <= fit ? 1 : int((n + fit - 1) / fit);
}

// Room for the caption ("1 cell = N blocks", "blocks 0–255 of 8,192"), only when the cells
// aggregate or the map shows the start of the pool.
int KvBlockMapView::captionHeight() const {
    if (shownCount() == 0 || (blocksPerCellIn(gridArea(0)) == 1 && shownCount() == blockCount()))
        return 0;
    return QFontMetrics(font()).height() + 2;
}

QRect KvBlockMapView::gridRect() const {
    return gridArea(captionHeight());
}

int KvBlockMapView::blocksPerCell() const {
    return shownCount() == 0 ? 1 : blocksPerCellIn(gridRect());
}

int KvBlockMapView::cellCount() const {
    const int per = blocksPerCell();
    return (shownCount() + per - 1) / per;
}

int KvBlockMapView::cellSize() const {
    const int n = cellCount();
    if (n == 0)
        return 0;
    const QRect g = gridRect();
    int s = int(std::sqrt(double(g.width()) * g.height() / n));
    s = std::clamp(s, 1, kMaxCell);
    while (s > 1) {
        const int cols = std::max(1, g.width() / s);
        const int rows = (n + cols - 1) / cols;
        if (int64_t(rows) * s <= g.height())
            break;
        --s;
    }
    return s;
}

int KvBlockMapView::columns() const {
    const int s = cellSize();
    return s > 0 ? std::max(1, gridRect().width() / s) : 0;
}

QRect KvBlockMapView::cellRect(int block) const {
    if (block < 0 || block >= shownCount())
        return {};
    const int s = cellSize(), cols = columns();
    const QRect g = gridRect();
    const int gap = s >= 5 ? 1 : 0;
    const int cell = cellOf(block);
    return QRect(g.left() + (cell % cols) * s, g.top() + (cell / cols) * s, s - gap, s - gap);
}

int KvBlockMapView::blockAt(const QPoint& pos) const {
    const int s = cellSize();
    if (s <= 0)
        return -1;
    const QRect g = gridRect();
    if (pos.x() < g.left() || pos.y() < g.top())
        return -1;
    const int col = (pos.x() - g.left()) / s, row = (pos.y() - g.top()) / s;
    const int cols = columns();
    if (col >= cols)
        return -1;
    const int64_t cell = int64_t(row) * cols + col;
    return cell < cellCount() ? int(cell * blocksPerCell()) : -1;
}

int KvBlockMapView::tokensHeld(int block) const {
    return block >= 0 && block < blockCount() ? tokens_[size_t(block)] : -1;
}

QRect KvBlockMapView::legendRect(int index) const {
    return index >= 0 && index < legendRects_.size() ? legendRects_[index] : QRect();
}

void KvBlockMapView::setRequestLabels(const QHash<qint64, QString>& labels) {
    if (labels == labels_)
        return;
    labels_ = labels;
    layoutLegend();
    update();
}

QString KvBlockMapView::legendText(qint64 requestId) const {
    const QString label = labels_.value(requestId);
    return label.isEmpty() ? QStringLiteral("#%1").arg(requestId)
                           : QStringLiteral("#%1 %2").arg(requestId).arg(label);
}

void KvBlockMapView::setHighlighted(qint64 requestId) {
    if (requestId == highlighted_)
        return;
    highlighted_ = requestId;
    emit highlightChanged(requestId);
    update();
}

QColor KvBlockMapView::cellColor(int block) const {
    const int per = blocksPerCell();
    if (per == 1)
        return blockColor(block);
    // The mix of an aggregated cell: its most frequent owner (the highlighted request when it
    // has blocks here), faded toward the free colour by the share of blocks in use; cached
    // blocks alone give grey.
    const int first = cellOf(block) * per, last = std::min(shownCount(), first + per);
    QHash<qint64, int> owners;
    int used = 0, cached = 0;
    for (int b = first; b < last; ++b) {
        const SnapshotBlock& blk = blocks_[size_t(b)];
        if (blk.state == BlockState::Used) {
            ++used;
            ++owners[blk.owner];
        } else if (blk.state == BlockState::CachedFree) {
            ++cached;
        }
    }
    const QColor free = palette().color(QPalette::AlternateBase);
    QColor full;
    int count = 0;
    if (used > 0) {
        qint64 best = -1;
        for (auto it = owners.cbegin(); it != owners.cend(); ++it)
            if (it.value() > owners.value(best, 0) ||
                (it.value() == owners.value(best, 0) && it.key() < best))
                best = it.key();
        if (highlighted_ >= 0 && owners.contains(highlighted_))
            best = highlighted_;
        full = requestColor(best);
        count = used;
    } else if (cached > 0) {
        full = palette().color(QPalette::Mid);
        count = cached;
    } else {
        return free;
    }
    const double a = 0.4 + 0.6 * double(count) / double(last - first);
    auto mix = [a](int f, int c) { return int(std::lround(f * (1.0 - a) + c * a)); };
    return QColor(mix(free.red(), full.red()), mix(free.green(), full.green()),
                  mix(free.blue(), full.blue()));
}

QColor KvBlockMapView::blockColor(int block) const {
    const SnapshotBlock& b = blocks_[size_t(block)];
    switch (b.state) {
    case BlockState::Free:
        return palette().color(QPalette::AlternateBase);
    case BlockState::CachedFree:
        return palette().color(QPalette::Mid);
    case BlockState::Used:
        break;
    }
    return requestColor(b.owner);
}

QString KvBlockMapView::blockToolTip(int block) const {
    if (block < 0 || block >= blockCount())
        return {};
    const SnapshotBlock& b = blocks_[size_t(block)];
    const int held = tokens_[size_t(block)];
    const QString state = b.state == BlockState::Free         ? tr("free")
                          : b.state == BlockState::CachedFree ? tr("cached (free)")
                                                              : tr("in use");
    QString text = tr("Block %1 (%2)").arg(block).arg(state);
    text += QLatin1Char('\n') + tr("Ref count: %1").arg(b.ref_count);
    text += QLatin1Char('\n') + tr("Tokens: %1 / %2")
                                    .arg(held >= 0 ? QString::number(held) : QStringLiteral("?"))
                                    .arg(blockSize_);
    if (b.owner >= 0) {
        text += QLatin1Char('\n') + tr("Owner: request #%1").arg(b.owner);
        if (const QString label = labels_.value(b.owner); !label.isEmpty())
            text += QStringLiteral(" (%1)").arg(label);
    }
    if (b.hash != 0)
        text += QLatin1Char('\n') +
                tr("Hash: %1…")
                    .arg(QString::number(b.hash, 16).rightJustified(16, QLatin1Char('0')).left(8));
    return text;
}

QString KvBlockMapView::captionText() const {
    const QLocale loc = locale();
    const int per = blocksPerCell();
    QStringList parts;
    if (shownCount() < blockCount())
        parts << tr("Blocks 0–%1 of %2 (the rest are free)")
                     .arg(loc.toString(shownCount() - 1), loc.toString(blockCount()));
    if (per > 1)
        parts << tr("1 cell = %1 blocks (hover for the mix)").arg(loc.toString(per));
    return parts.join(QStringLiteral(" · "));
}

QString KvBlockMapView::cellToolTip(int block) const {
    const int per = blocksPerCell();
    if (block < 0 || block >= blockCount())
        return {};
    if (per == 1 || block >= shownCount())
        return blockToolTip(block);
    const int first = cellOf(block) * per, last = std::min(shownCount(), first + per);
    int used = 0, cached = 0, free = 0, shared = 0;
    int64_t tokens = 0;
    QVector<qint64> owners;
    for (int b = first; b < last; ++b) {
        const SnapshotBlock& blk = blocks_[size_t(b)];
        if (blk.state == BlockState::Used) {
            ++used;
            if (blk.ref_count > 1)
                ++shared;
            if (!owners.contains(blk.owner))
                owners.push_back(blk.owner);
        } else if (blk.state == BlockState::CachedFree) {
            ++cached;
        } else {
            ++free;
        }
        tokens += std::max(0, tokens_[size_t(b)]);
    }
    const QLocale loc = locale();
    QString text = tr("Blocks %1–%2 (1 cell = %3 blocks)")
                       .arg(loc.toString(first), loc.toString(last - 1), loc.toString(per));
    text += QLatin1Char('\n') + tr("In use: %1 (shared: %2)").arg(used).arg(shared);
    text += QLatin1Char('\n') + tr("Cached (free): %1").arg(cached);
    text += QLatin1Char('\n') + tr("Free: %1").arg(free);
    text += QLatin1Char('\n') + tr("Tokens: about %1 / %2")
                                    .arg(loc.toString(tokens))
                                    .arg(loc.toString(qint64(last - first) * blockSize_));
    if (!owners.isEmpty()) {
        QStringList ids;
        for (qint64 id : owners)
            ids << QStringLiteral("#%1").arg(id);
        text += QLatin1Char('\n') + tr("Owners: %1").arg(ids.join(QStringLiteral(", ")));
    }
    return text;
}

void KvBlockMapView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    // Legend.
    const QFontMetrics fm(font());
    for (int i = 0; i < legend_.size(); ++i) {
        const QRect r = legendRects_[i];
        const qint64 id = legend_[i];
        if (id == highlighted_)
            p.fillRect(r.adjusted(-2, 0, -4, 0), palette().color(QPalette::Highlight).lighter(170));
        const QRect sw(r.left(), r.center().y() - kLegendSwatch / 2, kLegendSwatch, kLegendSwatch);
        p.fillRect(sw, requestColor(id));
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(sw.right() + 4, r.top(), r.width(), r.height()), Qt::AlignVCenter,
                   legendText(id));
    }
    if (blocks_.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(gridRect(), Qt::AlignCenter, tr("No KV cache yet: load a model."));
        return;
    }
    const QBrush hatch(palette().color(QPalette::Base), Qt::BDiagPattern);
    const bool dimOthers = highlighted_ >= 0;
    const int per = blocksPerCell();
    if (captionHeight() > 0) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        const QRect g = gridRect();
        p.drawText(QRect(g.left(), g.top() - captionHeight(), g.width(), captionHeight()),
                   Qt::AlignLeft | Qt::AlignVCenter, captionText());
    }
    for (int first = 0; first < shownCount(); first += per) {
        const int last = std::min(shownCount(), first + per);
        int used = 0, shared = 0;
        bool mine = false;
        for (int b = first; b < last; ++b) {
            const SnapshotBlock& blk = blocks_[size_t(b)];
            if (blk.state != BlockState::Used)
                continue;
            ++used;
            shared += blk.ref_count > 1 ? 1 : 0;
            mine = mine || blk.owner == highlighted_;
        }
        const QRect r = cellRect(first);
        QColor c = cellColor(first);
        if (dimOthers && !mine)
            c.setAlpha(60);
        p.fillRect(r, c);
        // Hatched: shared blocks (in an aggregated cell, when most of its used blocks are).
        if (used > 0 && shared * 2 > used && r.width() >= 3)
            p.fillRect(r, hatch);
    }
}

bool KvBlockMapView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const int b = blockAt(he->pos());
        if (b >= 0)
            QToolTip::showText(he->globalPos(), cellToolTip(b), this, cellRect(b));
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

void KvBlockMapView::mousePressEvent(QMouseEvent* e) {
    for (int i = 0; i < legendRects_.size(); ++i) {
        if (legendRects_[i].contains(e->position().toPoint())) {
            setHighlighted(legend_[i] == highlighted_ ? -1 : legend_[i]);
            return;
        }
    }
    QWidget::mousePressEvent(e);
}

} // namespace llmwb
