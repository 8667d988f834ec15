#include "ui/engine_panel.h"

#include <QEvent>
#include <QLabel>
#include <QVBoxLayout>

#include "ui/batch_timeline_view.h"
#include "ui/kv_block_map_view.h"

namespace llmwb {

EnginePanel::EnginePanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    figures_ = new QLabel(this);
    figures_->setObjectName(QStringLiteral("engineFigures"));
    figures_->setWordWrap(true);
    mapTitle_ = new QLabel(this);
    map_ = new KvBlockMapView(this);
    map_->setObjectName(QStringLiteral("kvBlockMap"));
    timelineTitle_ = new QLabel(this);
    timeline_ = new BatchTimelineView(this);
    timeline_->setObjectName(QStringLiteral("batchTimeline"));
    layout->addWidget(figures_);
    layout->addWidget(mapTitle_);
    layout->addWidget(map_, 3);
    layout->addWidget(timelineTitle_);
    layout->addWidget(timeline_, 2);
    retranslate();
}

void EnginePanel::setView(const EngineView& view) {
    last_ = view;
    hasView_ = true;
    map_->setSnapshot(view.snapshot);
    timeline_->addSteps(view.steps);
    retranslate();
}

void EnginePanel::retranslate() {
    mapTitle_->setText(tr("KV cache blocks (hatched: shared, grey: cached)"));
    timelineTitle_->setText(tr("Tokens per step, √ scale (solid: prefill, light: decode, red: preemption)"));
    if (!hasView_) {
        figures_->setText(tr("No model loaded."));
        return;
    }
    const EngineSnapshot& s = last_.snapshot;
    figures_->setText(tr("KV %1% of %2 blocks · %3 running / %4 waiting · %5 tokens/s · step %6")
                          .arg(s.kv_usage * 100.0, 0, 'f', 1)
                          .arg(s.blocks.size())
                          .arg(s.num_running)
                          .arg(s.num_waiting)
                          .arg(last_.tokensPerSecond, 0, 'f', 0)
                          .arg(s.step_index));
}

void EnginePanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(e);
}

}  // namespace llmwb
