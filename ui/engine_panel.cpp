#include "ui/engine_panel.h"

#include <QEvent>
#include <QLabel>
#include <QScrollArea>
#include <QStackedWidget>
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
    // A remote endpoint has no block map nor step timeline to show: a note takes their place.
    blocksStack_ = new QStackedWidget(tabs_);
    blocksStack_->addWidget(blocks);
    remoteNote_ = new QLabel(blocksStack_);
    remoteNote_->setObjectName(QStringLiteral("remoteBlocksNote"));
    remoteNote_->setWordWrap(true);
    remoteNote_->setAlignment(Qt::AlignCenter);
    remoteNote_->setMargin(12);
    blocksStack_->addWidget(remoteNote_);
    tabs_->addTab(blocksStack_, QString());
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

bool EnginePanel::blocksUnavailable() const {
    return blocksStack_->currentWidget() == remoteNote_;
}

void EnginePanel::setRemoteSource(const QString& endpointName) {
    remoteSource_ = endpointName;
    remoteLast_.reset();
    charts_->setRemoteSource(endpointName);
    blocksStack_->setCurrentIndex(endpointName.isEmpty() ? 0 : 1);
    retranslate();
}

void EnginePanel::setRemoteMetrics(const RemoteMetricsView& view) {
    if (remoteSource_.isEmpty() || view.endpoint != remoteSource_)
        return;
    remoteLast_ = view;
    charts_->addRemoteMetrics(view);
    updateFigures();
}

void EnginePanel::setView(const EngineView& view) {
    last_ = view;
    hasView_ = true;
    map_->setRequestLabels(view.requestLabels); // before the snapshot: the legend's texts
    map_->setSnapshot(view.snapshot); // kept current for when the local engine is chosen again
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
    remoteNote_->setText(
        tr("The KV block map and the batch timeline are not available for a remote endpoint "
           "(%1): its server does not expose them. The Charts tab shows what its /metrics "
           "does.")
            .arg(remoteSource_));
    updateFigures();
}

void EnginePanel::updateFigures() {
    if (!remoteSource_.isEmpty()) {
        const auto num = [this](const std::optional<double>& v, int decimals) {
            return v ? QString::number(*v, 'f', decimals) : tr("n/a");
        };
        if (!remoteLast_) {
            figures_->setText(
                tr("Remote endpoint %1: waiting for its /metrics…").arg(remoteSource_));
        } else if (!remoteLast_->ok()) {
            figures_->setText(
                tr("Remote endpoint %1: no figures (%2)").arg(remoteSource_, remoteLast_->error));
        } else {
            const RemoteMetricsView& r = *remoteLast_;
            figures_->setText(
                tr("Remote endpoint %1 · KV %2 · %3 running / %4 waiting · %5 tokens/s")
                    .arg(remoteSource_,
                         r.kvUsage ? QString::number(*r.kvUsage * 100.0, 'f', 1) + QLatin1Char('%')
                                   : tr("n/a"),
                         num(r.running, 0), num(r.waiting, 0),
                         num(r.generationTokensPerSecond, 0)));
        }
        return;
    }
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
