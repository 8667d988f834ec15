#include "ui/engine_panel.h"

#include <QEvent>
#include <QLabel>
#include <QScrollArea>
#include <QTabWidget>
#include <QVBoxLayout>

#include "ui/batch_timeline_view.h"
#include "ui/charts_panel.h"
#include "ui/kv_block_map_view.h"
#include "ui/memory_panel.h"
#include "ui/speculation_panel.h"

namespace llmwb {

EnginePanel::EnginePanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    figures_ = new QLabel(this);
    figures_->setObjectName(QStringLiteral("engineFigures"));
    figures_->setWordWrap(true);
    // The titles wrap: unwrapped, the timeline's legend alone made the dock ~470 px wide at
    // least (cut off in a 1024-pixel window).
    mapTitle_ = new QLabel(this);
    mapTitle_->setWordWrap(true);
    map_ = new KvBlockMapView(this);
    map_->setObjectName(QStringLiteral("kvBlockMap"));
    timelineTitle_ = new QLabel(this);
    timelineTitle_->setWordWrap(true);
    timeline_ = new BatchTimelineView(this);
    timeline_->setObjectName(QStringLiteral("batchTimeline"));
    layout->addWidget(figures_);
    tabs_ = new QTabWidget(this);
    tabs_->setObjectName(QStringLiteral("engineTabs"));
    tabs_->setDocumentMode(true);
    auto* blocks = new QWidget(tabs_);
    auto* blocksLayout = new QVBoxLayout(blocks);
    blocksLayout->setContentsMargins(0, 4, 0, 0);
    blocksLayout->addWidget(mapTitle_);
    blocksLayout->addWidget(map_, 3);
    blocksLayout->addWidget(timelineTitle_);
    blocksLayout->addWidget(timeline_, 2);
    charts_ = new ChartsPanel(tabs_);
    charts_->setObjectName(QStringLiteral("engineCharts"));
    memory_ = new MemoryPanel;
    memory_->setObjectName(QStringLiteral("memoryPanel"));
    auto* memoryScroll = new QScrollArea(tabs_);
    memoryScroll->setWidgetResizable(true);
    memoryScroll->setFrameShape(QFrame::NoFrame);
    memoryScroll->setWidget(memory_);
    tabs_->addTab(blocks, QString());
    tabs_->addTab(charts_, QString());
    tabs_->addTab(memoryScroll, QString());
    // Scrolls like the memory panel: its charts never raise the dock's minimum height.
    speculation_ = new SpeculationPanel;
    speculation_->setObjectName(QStringLiteral("speculationPanel"));
    auto* speculationScroll = new QScrollArea(tabs_);
    speculationScroll->setWidgetResizable(true);
    speculationScroll->setFrameShape(QFrame::NoFrame);
    speculationScroll->setWidget(speculation_);
    tabs_->addTab(speculationScroll, QString());
    layout->addWidget(tabs_, 1);
    retranslate();
}

void EnginePanel::showTab(Tab t) {
    tabs_->setCurrentIndex(int(t));
}

void EnginePanel::setModel(const ModelMetadata& m) {
    memory_->setModel(m);
}

void EnginePanel::setView(const EngineView& view) {
    last_ = view;
    hasView_ = true;
    map_->setRequestLabels(view.requestLabels); // before the snapshot: the legend's texts
    map_->setSnapshot(view.snapshot);
    timeline_->addRequestLabels(view.requestLabels);
    timeline_->addSteps(view.steps);
    charts_->addView(view);
    speculation_->addView(view);
    memory_->setView(view);
    updateFigures();
}

void EnginePanel::retranslate() {
    tabs_->setTabText(BlocksTab, tr("Blocks && steps"));
    tabs_->setTabText(ChartsTab, tr("Charts"));
    tabs_->setTabText(MemoryTab, tr("Memory"));
    tabs_->setTabText(SpeculationTab, tr("Speculation"));
    mapTitle_->setText(tr("KV cache blocks (hatched: shared, grey: cached)"));
    timelineTitle_->setText(
        tr("Tokens per step, √ scale (solid: prefill, light: decode, red: preemption)"));
    updateFigures();
}

void EnginePanel::updateFigures() {
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

} // namespace llmwb
