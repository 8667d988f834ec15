// EnginePanel: the Engine dock — a figures line (KV usage, running / waiting, tokens/s, step),
// the KV block map and the batch timeline, fed with the worker's EngineView values.
#pragma once

#include <QWidget>

#include "app/services/engine_worker.h"

class QLabel;

namespace llmwb {

class BatchTimelineView;
class KvBlockMapView;

class EnginePanel : public QWidget {
    Q_OBJECT

public:
    explicit EnginePanel(QWidget* parent = nullptr);

    KvBlockMapView* blockMap() const { return map_; }
    BatchTimelineView* timeline() const { return timeline_; }
    QLabel* figures() const { return figures_; }
    bool hasView() const { return hasView_; }
    const EngineView& lastView() const { return last_; }

public slots:
    void setView(const llmwb::EngineView& view);

protected:
    void changeEvent(QEvent* e) override;

private:
    void retranslate();

    QLabel* figures_;
    QLabel* mapTitle_;
    QLabel* timelineTitle_;
    KvBlockMapView* map_;
    BatchTimelineView* timeline_;
    EngineView last_;
    bool hasView_ = false;
};

}  // namespace llmwb
