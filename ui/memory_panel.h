// MemoryPanel: the Engine dock's memory & quantization view: the device (CPU and its RAM), the
// memory plan (weights / KV cache / workspace / free) as a stacked bar with a legend and the
// numbers, the KV pool (blocks, tokens of capacity, what limited its size), the KV-cache dtype of
// the backend and the weight dtypes per tensor group of the loaded model.
#pragma once

#include <QWidget>

#include "app/services/engine_view.h"
#include "app/services/generation_types.h"

class QFormLayout;
class QLabel;

namespace llmwb {

// The stacked bar alone (one segment per part of the plan; tiny parts keep a visible sliver).
class MemoryBar : public QWidget {
    Q_OBJECT
  public:
    struct Part {
        QString name;
        qint64 bytes = 0;
        QColor color;
    };
    explicit MemoryBar(QWidget* parent = nullptr);
    void setParts(const QList<Part>& parts);
    const QList<Part>& parts() const { return parts_; }
    // Pixel extent [x0, x1) of part i at the current width (for tests).
    QPair<int, int> segment(int i) const;
    QSize sizeHint() const override { return {320, 26}; }
    QSize minimumSizeHint() const override { return {120, 22}; }

  protected:
    void paintEvent(QPaintEvent* e) override;

  private:
    QList<Part> parts_;
};

class MemoryPanel : public QWidget {
    Q_OBJECT

  public:
    explicit MemoryPanel(QWidget* parent = nullptr);

    MemoryBar* bar() const { return bar_; }
    // Text of a figure label by object name (memoryDevice, memoryBudget, memoryWeights, memoryKv,
    // memoryWorkspace, memoryFree, memoryBlocks, memoryCapacity, memoryLimit, memoryKvDtype,
    // memoryKvSwitch (the pool before and after the last KV-type switch), memoryDtypes,
    // memoryParameters (active / total for a mixture of experts), memoryNote).
    QString fieldText(const char* objectName) const;
    bool hasPlan() const { return hasView_; }

  public slots:
    void setView(const llmwb::EngineView& view);
    void setModel(const llmwb::ModelMetadata& m);

  protected:
    void changeEvent(QEvent* e) override;

  private:
    QLabel* addField(const char* objectName);
    void retranslate();
    void refreshTexts();

    QFormLayout* form_;
    QLabel* title_;
    MemoryBar* bar_;
    QLabel *device_, *budget_, *weights_, *kv_, *workspace_, *free_, *blocks_, *capacity_, *limit_,
        *kvDtype_, *kvSwitch_, *dtypes_, *draft_, *weightCache_, *weightLayout_, *params_, *note_;
    EngineView kvState_; // its KV-type fields only (the pending type, the last switch, notes)
    MemoryPlan plan_;
    int maxNumSeqs_ = 0;
    QString refusal_; // the last utilization the engine refused, and why
    QString replanError_, deviceName_;
    qint64 draftWeightBytes_ = 0, draftKvBytes_ = 0;
    DeviceKind viewDevice_ = DeviceKind::Cpu;
    KvDtype viewKvDtype_ = KvDtype::F32;
    ModelMetadata model_;
    bool hasView_ = false, hasModel_ = false;
};

} // namespace llmwb
