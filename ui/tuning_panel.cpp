#include "ui/tuning_panel.h"

#include "engine/serving/speculative.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <cmath>

#include "engine/runtime/kv_block_size.h"
#include "ui/memory_plan_text.h"

namespace llmwb {

int TuningPanel::sliderPosition(double u) {
    const double lo = std::log(EngineTuning::kMinUtilization);
    const double x = (std::log(std::clamp(u, EngineTuning::kMinUtilization, 1.0)) - lo) / -lo;
    return int(std::lround(x * kSliderSteps));
}

double TuningPanel::utilizationAt(int position) {
    const double lo = std::log(EngineTuning::kMinUtilization);
    const double x = double(std::clamp(position, 0, kSliderSteps)) / kSliderSteps;
    // Four decimals, as the spin box shows.
    return std::round(std::exp(lo * (1.0 - x)) * 10000.0) / 10000.0;
}

TuningPanel::TuningPanel(AppSettings& settings, QWidget* parent)
    : QWidget(parent), settings_(settings) {
    build();
    loadValues();
    retranslate();
}

QDoubleSpinBox* TuningPanel::makeDouble(double lo, double hi, double step, int decimals) {
    auto* s = new QDoubleSpinBox(this);
    s->setRange(lo, hi);
    s->setSingleStep(step);
    s->setDecimals(decimals);
    s->setKeyboardTracking(false);
    return s;
}

void TuningPanel::build() {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);

    engineBox_ = new QGroupBox(this);
    // A grid, not a QFormLayout: the word-wrapped notes and the pool text change length with
    // the model and the plan, and QFormLayout did not grow with them (after opening a Hugging
    // Face folder the Budget, Pool and "Capped at…" lines were drawn over each other). A grid
    // accounts for their height for the width they get.
    engineForm_ = new QGridLayout(engineBox_);
    engineForm_->setColumnStretch(1, 1);
    utilSlider_ = new QSlider(Qt::Horizontal, this);
    utilSlider_->setObjectName(QStringLiteral("utilizationSlider"));
    utilSlider_->setRange(0, kSliderSteps);
    // Re-planning reallocates the KV pool: apply once the slider is released, not at every
    // pixel of a drag (the spin box follows the drag).
    utilSlider_->setTracking(false);
    utilSpin_ = makeDouble(EngineTuning::kMinUtilization, 1.0, 0.01, 4);
    utilSpin_->setObjectName(QStringLiteral("utilizationSpin"));
    auto* utilRow = new QHBoxLayout;
    utilRow->addWidget(utilSlider_, 1);
    utilRow->addWidget(utilSpin_);
    utilBudget_ = new QLabel(this);
    utilBudget_->setObjectName(QStringLiteral("utilizationBudget"));
    maxSeqs_ = new QSpinBox(this);
    maxSeqs_->setObjectName(QStringLiteral("maxNumSeqsSpin"));
    maxSeqs_->setRange(1, 256);
    maxSeqs_->setKeyboardTracking(false);
    maxTokens_ = new QSpinBox(this);
    maxTokens_->setObjectName(QStringLiteral("maxBatchedTokensSpin"));
    maxTokens_->setRange(16, 8192);
    maxTokens_->setSingleStep(64);
    maxTokens_->setKeyboardTracking(false);
    blockSize_ = new QComboBox(this);
    blockSize_->setObjectName(QStringLiteral("blockSizeCombo"));
    for (int b : kKvBlockSizes)
        blockSize_->addItem(QString::number(b), b);
    blockNote_ = new QLabel(this);
    kvDtype_ = new QComboBox(this);
    kvDtype_->setObjectName(QStringLiteral("kvDtypeCombo"));
    // As wide as the form gives it, not as its longest item: the dock must fit 1024 px windows.
    kvDtype_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    kvDtype_->setMinimumContentsLength(8);
    kvNote_ = new QLabel(this);
    kvNote_->setObjectName(QStringLiteral("kvDtypeNote"));
    fillKvDtypes(); // every type until a view says what the backend stores
    specTokens_ = new QSpinBox(this);
    specTokens_->setObjectName(QStringLiteral("speculativeSpin"));
    specTokens_->setRange(0, kMaxSpeculativeTokens);
    specMethod_ = new QComboBox(this);
    specMethod_->setObjectName(QStringLiteral("speculativeMethod"));
    specMethod_->addItem(QString(), int(SpeculativeMethod::Ngram));
    specMethod_->addItem(QString(), int(SpeculativeMethod::SelfQ4));
    specAuto_ = new QCheckBox(this);
    specAuto_->setObjectName(QStringLiteral("speculativeAuto"));
    auto* specRow = new QHBoxLayout;
    specRow->addWidget(specTokens_, 1);
    specRow->addWidget(specAuto_);
    specNote_ = new QLabel(this);
    plan_ = new QLabel(this);
    plan_->setObjectName(QStringLiteral("tuningPlan"));
    for (QLabel* l : {utilBudget_, blockNote_, kvNote_, specNote_, plan_}) {
        l->setWordWrap(true);
        QFont f = l->font();
        f.setPointSizeF(std::max(7.0, f.pointSizeF() - 1));
        l->setFont(f);
    }
    for (QLabel* l : {blockNote_, kvNote_, specNote_, utilBudget_})
        l->setForegroundRole(QPalette::PlaceholderText);
    int row = 0;
    auto addRow = [&](int labelIndex, QWidget* field, QLayout* fieldLayout = nullptr) {
        if (labelIndex >= 0) {
            auto* l = new QLabel(this);
            engineLabels_[labelIndex] = l;
            engineForm_->addWidget(l, row, 0, Qt::AlignLeft | Qt::AlignVCenter);
        }
        if (fieldLayout)
            engineForm_->addLayout(fieldLayout, row, 1);
        else
            engineForm_->addWidget(field, row, 1);
        ++row;
    };
    addRow(0, nullptr, utilRow);
    addRow(-1, utilBudget_);
    addRow(1, maxSeqs_);
    addRow(2, maxTokens_);
    addRow(3, blockSize_);
    addRow(-1, blockNote_);
    addRow(4, kvDtype_);
    addRow(-1, kvNote_);
    addRow(5, nullptr, specRow);
    addRow(6, specMethod_);
    addRow(-1, specNote_);
    engineForm_->addWidget(plan_, row, 0, 1, 2);
    layout->addWidget(engineBox_);

    samplingBox_ = new QGroupBox(this);
    samplingForm_ = new QFormLayout(samplingBox_);
    samplingForm_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    temperature_ = makeDouble(0.0, 2.0, 0.05, 2);
    topP_ = makeDouble(0.01, 1.0, 0.01, 2);
    topK_ = new QSpinBox(this);
    topK_->setRange(0, 1000);
    topK_->setKeyboardTracking(false);
    minP_ = makeDouble(0.0, 1.0, 0.01, 2);
    repetition_ = makeDouble(0.05, 5.0, 0.05, 2);
    presence_ = makeDouble(-2.0, 2.0, 0.1, 2);
    frequency_ = makeDouble(-2.0, 2.0, 0.1, 2);
    temperature_->setObjectName(QStringLiteral("temperatureSpin"));
    topP_->setObjectName(QStringLiteral("topPSpin"));
    topK_->setObjectName(QStringLiteral("topKSpin"));
    minP_->setObjectName(QStringLiteral("minPSpin"));
    repetition_->setObjectName(QStringLiteral("repetitionPenaltySpin"));
    presence_->setObjectName(QStringLiteral("presencePenaltySpin"));
    frequency_->setObjectName(QStringLiteral("frequencyPenaltySpin"));
    samplingNote_ = new QLabel(this);
    samplingNote_->setWordWrap(true);
    samplingNote_->setForegroundRole(QPalette::PlaceholderText);
    samplingForm_->addRow(samplingNote_);
    for (QWidget* w : std::initializer_list<QWidget*>{temperature_, topP_, topK_, minP_,
                                                      repetition_, presence_, frequency_})
        samplingForm_->addRow(new QLabel(this), w);
    layout->addWidget(samplingBox_);

    reset_ = new QPushButton(this);
    reset_->setObjectName(QStringLiteral("tuningReset"));
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(reset_);
    layout->addLayout(buttons);
    layout->addStretch(1);

    connect(utilSlider_, &QSlider::valueChanged, this, [this](int pos) {
        if (loading_)
            return;
        loading_ = true;
        utilSpin_->setValue(utilizationAt(pos));
        loading_ = false;
        engineEdited();
    });
    connect(utilSlider_, &QSlider::sliderMoved, this, [this](int pos) {
        const bool was = loading_;
        loading_ = true;
        utilSpin_->setValue(utilizationAt(pos));
        loading_ = was;
    });
    connect(utilSpin_, &QDoubleSpinBox::valueChanged, this, [this](double u) {
        if (loading_)
            return;
        loading_ = true;
        utilSlider_->setValue(sliderPosition(u));
        loading_ = false;
        engineEdited();
    });
    connect(maxSeqs_, &QSpinBox::valueChanged, this, [this] { engineEdited(); });
    connect(maxTokens_, &QSpinBox::valueChanged, this, [this] { engineEdited(); });
    connect(blockSize_, &QComboBox::currentIndexChanged, this, [this] { engineEdited(); });
    connect(kvDtype_, &QComboBox::currentIndexChanged, this, [this] {
        if (loading_)
            return;
        updateKvTexts(); // the tooltip of the chosen type
        engineEdited();
    });
    connect(specTokens_, &QSpinBox::valueChanged, this, [this] { engineEdited(); });
    connect(specMethod_, &QComboBox::currentIndexChanged, this, [this] { engineEdited(); });
    connect(specAuto_, &QCheckBox::toggled, this, [this] { engineEdited(); });
    for (QDoubleSpinBox* s : {temperature_, topP_, minP_, repetition_, presence_, frequency_})
        connect(s, &QDoubleSpinBox::valueChanged, this, [this] { samplingEdited(); });
    connect(topK_, &QSpinBox::valueChanged, this, [this] { samplingEdited(); });
    connect(reset_, &QPushButton::clicked, this, &TuningPanel::resetToDefaults);
}

void TuningPanel::loadValues() {
    loading_ = true;
    tuning_ = settings_.engineTuning();
    sampling_ = settings_.defaultSampling();
    utilSpin_->setValue(tuning_.gpuMemoryUtilization);
    utilSlider_->setValue(sliderPosition(tuning_.gpuMemoryUtilization));
    maxSeqs_->setValue(tuning_.maxNumSeqs);
    maxTokens_->setValue(tuning_.maxNumBatchedTokens);
    blockSize_->setCurrentIndex(std::max(0, blockSize_->findData(tuning_.blockSize)));
    fillKvDtypes();
    specTokens_->setValue(tuning_.numSpeculativeTokens);
    specMethod_->setCurrentIndex(
        std::max(0, specMethod_->findData(int(tuning_.speculativeMethod))));
    specAuto_->setChecked(tuning_.speculativeAuto);
    temperature_->setValue(sampling_.temperature);
    topP_->setValue(sampling_.topP);
    topK_->setValue(sampling_.topK);
    minP_->setValue(sampling_.minP);
    repetition_->setValue(sampling_.repetitionPenalty);
    presence_->setValue(sampling_.presencePenalty);
    frequency_->setValue(sampling_.frequencyPenalty);
    loading_ = false;
    updatePlanText();
}

void TuningPanel::engineEdited() {
    if (loading_)
        return;
    EngineTuning t = tuning_;
    t.gpuMemoryUtilization = utilSpin_->value();
    t.maxNumSeqs = maxSeqs_->value();
    t.maxNumBatchedTokens = maxTokens_->value();
    t.blockSize = blockSize_->currentData().toInt();
    t.kvCacheDtype = kvDtype_->currentData().toString();
    t.numSpeculativeTokens = specTokens_->value();
    t.speculativeMethod = SpeculativeMethod(specMethod_->currentData().toInt());
    t.speculativeAuto = specAuto_->isChecked();
    t = t.clamped();
    if (t == tuning_)
        return;
    tuning_ = t;
    settings_.setEngineTuning(tuning_);
    updatePlanText();
    emit tuningChanged(tuning_);
}

void TuningPanel::samplingEdited() {
    if (loading_)
        return;
    SamplingSettings s = sampling_; // keeps max tokens and seed
    s.temperature = temperature_->value();
    s.topP = topP_->value();
    s.topK = topK_->value();
    s.minP = minP_->value();
    s.repetitionPenalty = repetition_->value();
    s.presencePenalty = presence_->value();
    s.frequencyPenalty = frequency_->value();
    if (s == sampling_)
        return;
    sampling_ = s;
    settings_.setDefaultSampling(sampling_);
    emit samplingChanged(sampling_);
}

void TuningPanel::resetToDefaults() {
    settings_.resetTuning();
    loadValues();
    emit tuningChanged(tuning_);
    emit samplingChanged(sampling_);
}

void TuningPanel::setEngineBusy(bool busy) {
    if (busy == busy_)
        return;
    busy_ = busy;
    blockSize_->setEnabled(!busy);
    retranslate();
}

void TuningPanel::setView(const EngineView& view) {
    view_.snapshot.memory = view.snapshot.memory; // the rest of the view is not needed here
    view_.replanError = view.replanError;
    view_.utilizationRefusal = view.utilizationRefusal;
    view_.refusedUtilization = view.refusedUtilization;
    view_.rebuildPending = view.rebuildPending;
    view_.tuning = view.tuning;
    // The engine refused the utilization shown here: back to the one in force (and saved so).
    if (!view.utilizationRefusal.isEmpty() &&
        std::abs(view.refusedUtilization - tuning_.gpuMemoryUtilization) < 1e-9 &&
        std::abs(view.tuning.gpuMemoryUtilization - tuning_.gpuMemoryUtilization) > 1e-9) {
        tuning_.gpuMemoryUtilization = view.tuning.gpuMemoryUtilization;
        settings_.setEngineTuning(tuning_);
        const bool was = loading_;
        loading_ = true;
        utilSpin_->setValue(tuning_.gpuMemoryUtilization);
        utilSlider_->setValue(sliderPosition(tuning_.gpuMemoryUtilization));
        loading_ = was;
    }
    const bool backendChanged =
        !hasView_ || view_.device != view.device || view_.kvDtype != view.kvDtype ||
        view_.autoKvDtype != view.autoKvDtype || view_.supportedKvDtypes != view.supportedKvDtypes;
    // The engine refused the KV type shown here: back to the one in force (and saved so).
    const bool kvRefused = !view.refusedKvDtype.isEmpty() &&
                           view.refusedKvDtype == tuning_.kvCacheDtype &&
                           view.tuning.kvCacheDtype != tuning_.kvCacheDtype;
    if (kvRefused) {
        tuning_.kvCacheDtype = view.tuning.kvCacheDtype;
        settings_.setEngineTuning(tuning_);
    }
    const bool kvChanged = backendChanged || kvRefused || view_.kvDtypeError != view.kvDtypeError ||
                           view_.kvCalibration != view.kvCalibration ||
                           view_.pendingKvDtype != view.pendingKvDtype;
    view_.device = view.device;
    view_.kvDtype = view.kvDtype;
    view_.autoKvDtype = view.autoKvDtype;
    view_.supportedKvDtypes = view.supportedKvDtypes;
    view_.pendingKvDtype = view.pendingKvDtype;
    view_.kvDtypeError = view.kvDtypeError;
    view_.kvCalibration = view.kvCalibration;
    view_.snapshot.speculative = view.snapshot.speculative;
    view_.speculationError = view.speculationError;
    hasView_ = true;
    updateSpeculativeNote();
    if (kvChanged) {
        fillKvDtypes();
        retranslate();
    }
    setEngineBusy(view.snapshot.num_running + view.snapshot.num_waiting > 0);
    updatePlanText();
}

// The KV types the backend can store (all of them before a model is loaded), "auto" first, and
// the tuning's choice even where this backend cannot store it (the note says so).
void TuningPanel::fillKvDtypes() {
    const bool was = loading_;
    loading_ = true;
    kvDtype_->clear();
    kvDtype_->addItem(QString(), QStringLiteral("auto"));
    for (KvDtype t : kAllKvDtypes) {
        const QString name = QString::fromLatin1(kv_dtype_name(t));
        if (!hasView_ || view_.supportedKvDtypes.contains(t) || name == tuning_.kvCacheDtype)
            kvDtype_->addItem(MemoryPlanText::kvDtype(t), name);
    }
    kvDtype_->setCurrentIndex(std::max(0, kvDtype_->findData(tuning_.kvCacheDtype)));
    loading_ = was;
    updateKvTexts();
}

void TuningPanel::updateKvTexts() {
    kvDtype_->setItemText(
        0, hasView_ ? tr("auto (%1)").arg(MemoryPlanText::kvDtype(view_.autoKvDtype)) : tr("auto"));
    const QString autoTip =
        hasView_ ? tr("The backend's own type.") + QLatin1Char(' ') +
                       MemoryPlanText::backendNote(view_.device, view_.autoKvDtype) +
                       QLatin1Char(' ') + MemoryPlanText::kvDtypeCost(view_.autoKvDtype)
                 : tr("The backend's own type: fp16 on the CPU and on CUDA.");
    kvDtype_->setItemData(0, autoTip, Qt::ToolTipRole);
    for (int i = 1; i < kvDtype_->count(); ++i)
        if (auto t = parse_kv_dtype(kvDtype_->itemData(i).toString().toStdString()))
            kvDtype_->setItemData(i, MemoryPlanText::kvDtypeCost(*t), Qt::ToolTipRole);
    kvDtype_->setToolTip(
        tr("How the KV cache stores keys and values. Changing it re-plans the pool while "
           "requests run: more or fewer blocks for the same memory; running requests are "
           "recomputed in the new type and keep what they streamed.") +
        QLatin1Char('\n') +
        kvDtype_->itemData(kvDtype_->currentIndex(), Qt::ToolTipRole).toString());
    QString note;
    if (!hasView_) {
        note = tr("Applies when a model is loaded.");
    } else {
        note = tr("In use: %1.").arg(MemoryPlanText::kvDtype(view_.kvDtype));
        if (view_.pendingKvDtype != view_.kvDtype)
            note += QLatin1Char(' ') + tr("Switching to %1 at the next step.")
                                           .arg(MemoryPlanText::kvDtype(view_.pendingKvDtype));
        if (kv_dtype_is_fp8(view_.pendingKvDtype) && !view_.kvCalibration.isEmpty())
            note += QLatin1Char(' ') + view_.kvCalibration;
    }
    const bool error = hasView_ && !view_.kvDtypeError.isEmpty();
    if (error)
        note = view_.kvDtypeError + QLatin1Char('\n') + note;
    kvNote_->setText(note);
    // A failure is red, where the user looks (the note under the box), until the next choice.
    kvNote_->setStyleSheet(error ? QStringLiteral("color: #c0392b;") : QString());
}

void TuningPanel::updateSpeculativeNote() {
    const SpeculativeStats& st = view_.snapshot.speculative;
    const QLocale loc = locale();
    QString text;
    if (tuning_.numSpeculativeTokens == 0)
        text = tr("Off: one token per request and step.");
    else if (tuning_.speculativeMethod == SpeculativeMethod::SelfQ4)
        text = tr("Drafts by the model's own weights at 4 bits, verified in the batch.");
    else
        text = tr("Drafts by n-gram prompt lookup, verified in the batch.");
    if (tuning_.numSpeculativeTokens > 0 && tuning_.speculativeAuto)
        text += QLatin1Char(' ') + tr("Auto: up to %1 per request and step, none where they do "
                                      "not pay.")
                                       .arg(tuning_.numSpeculativeTokens);
    if (!view_.speculationError.isEmpty())
        text = tr("Speculation is off: %1").arg(view_.speculationError);
    if (st.num_draft_tokens > 0)
        text += QLatin1Char(' ') +
                tr("So far %1 of %2 draft tokens accepted (%3%), %4 tokens per verify step.")
                    .arg(loc.toString(st.num_accepted_tokens), loc.toString(st.num_draft_tokens),
                         loc.toString(100.0 * st.acceptance_rate(), 'f', 0),
                         loc.toString(st.mean_acceptance_length(), 'f', 2));
    specNote_->setText(text);
}

void TuningPanel::updatePlanText() {
    const QLocale loc = locale();
    const MemoryPlan& m = view_.snapshot.memory;
    // The budget of the plan in force (the engine's, not the slider's while a change is on its
    // way), and what the utilization multiplies on this backend.
    if (hasView_ && m.base_bytes > 0 && m.from_utilization())
        utilBudget_->setText(MemoryPlanText::budget(m, view_.device));
    else
        utilBudget_->setText(tr("Budget: %1% of the device memory (weights, workspace and KV "
                                "cache)")
                                 .arg(loc.toString(tuning_.gpuMemoryUtilization * 100, 'f', 2)));
    if (!hasView_) {
        plan_->setText(tr("Pool: applies when a model is loaded."));
        return;
    }
    QString text = tr("Pool: %1 blocks × %2 tokens = %3 tokens · KV %4")
                       .arg(loc.toString(m.num_blocks))
                       .arg(m.block_size)
                       .arg(loc.toString(qint64(m.num_blocks) * m.block_size))
                       .arg(loc.formattedDataSize(m.kv_bytes, 1));
    text += QLatin1Char('\n') +
            tr("Limited by: %1").arg(MemoryPlanText::limit(m, view_.tuning.maxNumSeqs));
    if (view_.rebuildPending)
        text +=
            QLatin1Char('\n') +
            tr("Block size %1 applies when the running requests finish.").arg(tuning_.blockSize);
    if (!view_.utilizationRefusal.isEmpty())
        text += QLatin1Char('\n') + view_.utilizationRefusal;
    if (!view_.replanError.isEmpty())
        text += QLatin1Char('\n') +
                tr("Re-planning failed (the previous pool stays): %1").arg(view_.replanError);
    plan_->setText(text);
}

void TuningPanel::retranslate() {
    engineBox_->setTitle(tr("Engine (applies live)"));
    samplingBox_->setTitle(tr("Default sampling for new conversations"));
    auto label = [](QFormLayout* form, int row, const QString& text) {
        if (auto* item = form->itemAt(row, QFormLayout::LabelRole))
            if (auto* l = qobject_cast<QLabel*>(item->widget()))
                l->setText(text);
    };
    engineLabels_[0]->setText(tr("GPU memory utilization"));
    engineLabels_[1]->setText(tr("Max sequences (max_num_seqs)"));
    engineLabels_[2]->setText(tr("Max batched tokens"));
    engineLabels_[3]->setText(tr("Block size (tokens)"));
    engineLabels_[4]->setText(tr("KV-cache dtype"));
    engineLabels_[5]->setText(tr("Speculative tokens"));
    engineLabels_[6]->setText(tr("Drafts from"));
    utilSlider_->setToolTip(MemoryPlanText::utilizationMeaning(view_.device) + QLatin1Char(' ') +
                            tr("Changing it re-plans the KV pool while requests run: requests "
                               "that no longer fit are preempted and resume later; a value too "
                               "small for the running requests is refused."));
    utilSpin_->setToolTip(utilSlider_->toolTip());
    maxSeqs_->setToolTip(tr("Most requests in one batch (applies from the next step)."));
    maxTokens_->setToolTip(tr("Token budget of one step: prefill chunks and decode tokens share "
                              "it (applies from the next step)."));
    const QString blockTip = busy_ ? tr("The block size can change only while the engine is "
                                        "idle: wait for the running requests to finish.")
                                   : tr("Tokens per KV block. Changing it rebuilds the engine "
                                        "(the prefix cache is emptied).");
    blockSize_->setToolTip(blockTip);
    blockNote_->setText(busy_ ? tr("Disabled while requests run.")
                              : tr("Applies when idle (rebuilds the engine)."));
    updateKvTexts();
    specTokens_->setToolTip(tr("Speculative decoding: up to this many draft tokens per step, "
                               "found by looking up the last few tokens earlier in the "
                               "conversation (n-gram prompt lookup), are checked by the model in "
                               "the same step. Greedy answers stay identical and sampled ones "
                               "keep their distribution. Applies from the next step."));
    specTokens_->setSpecialValueText(tr("off"));
    specMethod_->setItemText(0, tr("prompt lookup"));
    specMethod_->setItemText(1, tr("self-q4 draft"));
    specMethod_->setToolTip(tr("Where drafts come from: prompt lookup finds the last few tokens "
                               "earlier in the conversation (free, helps when text repeats); "
                               "self-q4 runs the model's own weights re-quantized to 4 bits "
                               "(made when first chosen, about a quarter of F16 memory)."));
    specAuto_->setText(tr("auto"));
    specAuto_->setToolTip(tr("Choose the number of drafts per request and step from the "
                             "measured acceptance and step cost; none where they do not pay."));
    updateSpeculativeNote();
    samplingNote_->setText(tr("Used by conversations created from now on; each conversation "
                              "keeps its own settings (Chat > Conversation settings)."));
    label(samplingForm_, 1, tr("Temperature"));
    label(samplingForm_, 2, tr("Top-p"));
    label(samplingForm_, 3, tr("Top-k (0: off)"));
    label(samplingForm_, 4, tr("Min-p"));
    label(samplingForm_, 5, tr("Repetition penalty"));
    label(samplingForm_, 6, tr("Presence penalty"));
    label(samplingForm_, 7, tr("Frequency penalty"));
    reset_->setText(tr("Reset to defaults"));
    updatePlanText();
}

void TuningPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(e);
}

} // namespace llmwb
