// TuningPanel: the Tuning dock. Engine settings that apply live (gpu_memory_utilization re-plans
// the KV pool, max_num_seqs, max_num_batched_tokens), the block size (applies when the engine is
// idle; disabled while it works), the KV-cache dtype (the types the backend stores; switches
// live, with what each costs in its tooltip and failures shown under it), num_speculative_tokens,
// and the default sampling of new conversations. Every change is written
// to the settings and emitted at once; Reset restores the defaults. The resulting pool (from the
// worker's views) is shown under the engine settings.
#pragma once

#include <QWidget>

#include "app/services/app_settings.h"
#include "app/services/engine_view.h"
#include "app/services/generation_types.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGridLayout;
class QGroupBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;

namespace llmwb {

class TuningPanel : public QWidget {
    Q_OBJECT

  public:
    static constexpr int kSliderSteps = 1000;

    TuningPanel(AppSettings& settings, QWidget* parent = nullptr);

    EngineTuning tuning() const { return tuning_; }
    SamplingSettings sampling() const { return sampling_; }
    // Utilization <-> slider position: logarithmic from kMinUtilization to 1 (on the CPU the
    // interesting budgets are small fractions of the RAM).
    static int sliderPosition(double utilization);
    static double utilizationAt(int position);

    QSlider* utilizationSlider() const { return utilSlider_; }
    QDoubleSpinBox* utilizationSpin() const { return utilSpin_; }
    QSpinBox* maxNumSeqsSpin() const { return maxSeqs_; }
    QSpinBox* maxBatchedTokensSpin() const { return maxTokens_; }
    QComboBox* blockSizeCombo() const { return blockSize_; }
    QComboBox* kvDtypeCombo() const { return kvDtype_; }
    QSpinBox* speculativeSpin() const { return specTokens_; }
    QComboBox* speculativeMethod() const { return specMethod_; }
    QCheckBox* speculativeAuto() const { return specAuto_; }
    QLabel* speculativeNote() const { return specNote_; }
    QDoubleSpinBox* temperatureSpin() const { return temperature_; }
    QDoubleSpinBox* topPSpin() const { return topP_; }
    QSpinBox* topKSpin() const { return topK_; }
    QDoubleSpinBox* minPSpin() const { return minP_; }
    QDoubleSpinBox* repetitionSpin() const { return repetition_; }
    QDoubleSpinBox* presenceSpin() const { return presence_; }
    QDoubleSpinBox* frequencySpin() const { return frequency_; }
    QPushButton* resetButton() const { return reset_; }
    QLabel* planLabel() const { return plan_; }
    QLabel* kvDtypeNote() const { return kvNote_; }

  public slots:
    // The engine is busy (requests running or waiting): the block size cannot change now.
    void setEngineBusy(bool busy);
    void setView(const llmwb::EngineView& view);
    void resetToDefaults();

  signals:
    void tuningChanged(const llmwb::EngineTuning& tuning);
    void samplingChanged(const llmwb::SamplingSettings& sampling);

  protected:
    void changeEvent(QEvent* e) override;

  private:
    void build();
    void loadValues(); // settings -> widgets (no signals)
    void engineEdited();
    void samplingEdited();
    void retranslate();
    void updatePlanText();
    void updateSpeculativeNote();
    void fillKvDtypes();
    void updateKvTexts();
    QDoubleSpinBox* makeDouble(double lo, double hi, double step, int decimals);

    AppSettings& settings_;
    EngineTuning tuning_;
    SamplingSettings sampling_;
    bool loading_ = false;
    bool busy_ = false;
    EngineView view_;
    bool hasView_ = false;

    QGroupBox *engineBox_, *samplingBox_;
    QGridLayout* engineForm_;
    QLabel* engineLabels_[7] = {}; // the engine settings' row labels, in row order
    QFormLayout* samplingForm_;
    QSlider* utilSlider_;
    QDoubleSpinBox* utilSpin_;
    QLabel* utilBudget_;
    QSpinBox *maxSeqs_, *maxTokens_, *specTokens_, *topK_;
    QComboBox* specMethod_ = nullptr;
    QCheckBox* specAuto_ = nullptr;
    QComboBox *blockSize_, *kvDtype_;
    QLabel *blockNote_, *kvNote_, *specNote_, *plan_, *samplingNote_;
    QDoubleSpinBox *temperature_, *topP_, *minP_, *repetition_, *presence_, *frequency_;
    QPushButton* reset_;
};

} // namespace llmwb
