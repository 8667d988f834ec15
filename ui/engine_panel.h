// EnginePanel: the Engine dock — a figures line (KV usage, running / waiting, tokens/s, step)
// above four tabs: the KV block map with the batch timeline, the charts, the memory &
// quantization panel and speculative decoding; all fed with the worker's EngineView values.
#pragma once

#include <QWidget>
#include <optional>

#include "app/services/engine_view.h"
#include "app/services/remote_metrics_view.h"

class QLabel;
class QStackedWidget;
class QTabWidget;

namespace llmwb {

class BatchTimelineView;
class ChartsPanel;
class KvBlockMapView;
class MemoryPanel;
class SpeculationPanel;

class EnginePanel : public QWidget {
    Q_OBJECT

  public:
    enum Tab { BlocksTab, ChartsTab, MemoryTab, SpeculationTab };

    explicit EnginePanel(QWidget* parent = nullptr);
    void showTab(Tab t);
    ChartsPanel* charts() const { return charts_; }
    MemoryPanel* memory() const { return memory_; }
    SpeculationPanel* speculation() const { return speculation_; }
    QTabWidget* tabs() const { return tabs_; }

    KvBlockMapView* blockMap() const { return map_; }
    BatchTimelineView* timeline() const { return timeline_; }
    QLabel* figures() const { return figures_; }
    bool hasView() const { return hasView_; }
    QString remoteSource() const { return remoteSource_; }
    QLabel* remoteBlocksNote() const { return remoteNote_; }
    bool blocksUnavailable() const; // the remote note is shown instead of the map
    const EngineView& lastView() const { return last_; }

  public slots:
    void setView(const llmwb::EngineView& view);
    void setModel(const llmwb::ModelMetadata& m);
    // A remote endpoint chosen as the chat backend ("" = the local engine): the charts and the
    // figures line follow its /metrics; the block map and the batch timeline, which no remote
    // server exposes, say so instead of drawing the local engine's.
    void setRemoteSource(const QString& endpointName);
    void setRemoteMetrics(const llmwb::RemoteMetricsView& view);

  protected:
    void changeEvent(QEvent* e) override;

  private:
    void retranslate();
    void updateFigures();

    QLabel* figures_;
    QLabel* mapTitle_;
    QLabel* timelineTitle_;
    KvBlockMapView* map_;
    BatchTimelineView* timeline_;
    QTabWidget* tabs_;
    ChartsPanel* charts_;
    MemoryPanel* memory_;
    SpeculationPanel* speculation_;
    QStackedWidget* blocksStack_;
    QLabel* remoteNote_;
    QString remoteSource_;
    std::optional<RemoteMetricsView> remoteLast_;
    EngineView last_;
    bool hasView_ = false;
};

} // namespace llmwb
