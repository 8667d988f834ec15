#include "ui/memory_panel.h"

#include <QEvent>
#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/memory_plan_text.h"
#include "ui/model_panel.h"

namespace llmwb {

namespace {

const QColor kWeights(0x34, 0x6d, 0xc2), kKv(0x16, 0xa0, 0x85), kWorkspace(0xe6, 0x7e, 0x22),
    kWeightCache(0x8e, 0x44, 0xad);

QString swatch(const QColor& c) {
    return QStringLiteral("<span style=\"color:%1\">■</span> ").arg(c.name());
}

} // namespace

MemoryBar::MemoryBar(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void MemoryBar::setParts(const QList<Part>& parts) {
    parts_ = parts;
    update();
}

QPair<int, int> MemoryBar::segment(int i) const {
    qint64 total = 0;
    for (const Part& p : parts_)
        total += std::max<qint64>(0, p.bytes);
    const int w = width() - 2;
    if (total <= 0 || i < 0 || i >= parts_.size() || w <= 0)
        return {0, 0};
    // Every non-empty part gets at least 3 px; the last part takes what is left.
    constexpr int kMin = 3;
    int x = 1;
    for (int k = 0; k < parts_.size(); ++k) {
        const qint64 b = std::max<qint64>(0, parts_[k].bytes);
        int len = int(double(b) / double(total) * w + 0.5);
        if (b > 0)
            len = std::max(len, kMin);
        if (k == parts_.size() - 1)
            len = std::max(0, w + 1 - x);
        len = std::min(len, std::max(0, w + 1 - x));
        if (k == i)
            return {x, x + len};
        x += len;
    }
    return {0, 0};
}

void MemoryBar::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QRect r = rect().adjusted(0, 2, -1, -3);
    p.setPen(Qt::NoPen);
    for (int i = 0; i < parts_.size(); ++i) {
        const auto [x0, x1] = segment(i);
        if (x1 > x0)
            p.fillRect(QRect(x0, r.top() + 1, x1 - x0, r.height() - 1), parts_[i].color);
    }
    p.setPen(palette().color(QPalette::Mid));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r);
}

MemoryPanel::MemoryPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    title_ = new QLabel(this);
    QFont bold = title_->font();
    bold.setBold(true);
    title_->setFont(bold);
    bar_ = new MemoryBar(this);
    bar_->setObjectName(QStringLiteral("memoryBar"));
    layout->addWidget(title_);
    layout->addWidget(bar_);
    form_ = new QFormLayout;
    form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form_->setRowWrapPolicy(QFormLayout::WrapLongRows);
    layout->addLayout(form_);
    device_ = addField("memoryDevice");
    budget_ = addField("memoryBudget");
    weights_ = addField("memoryWeights");
    kv_ = addField("memoryKv");
    workspace_ = addField("memoryWorkspace");
    free_ = addField("memoryFree");
    blocks_ = addField("memoryBlocks");
    capacity_ = addField("memoryCapacity");
    limit_ = addField("memoryLimit");
    kvDtype_ = addField("memoryKvDtype");
    kvSwitch_ = addField("memoryKvSwitch");
    dtypes_ = addField("memoryDtypes");
    draft_ = addField("memoryDraft");
    weightCache_ = addField("memoryWeightCache");
    weightLayout_ = addField("memoryWeightLayout");
    params_ = addField("memoryParameters");
    note_ = new QLabel(this);
    note_->setObjectName(QStringLiteral("memoryNote"));
    note_->setWordWrap(true);
    layout->addWidget(note_);
    layout->addStretch(1);
    retranslate();
}

QLabel* MemoryPanel::addField(const char* objectName) {
    auto* l = new QLabel(this);
    l->setObjectName(QLatin1String(objectName));
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form_->addRow(new QLabel(this), l);
    return l;
}

QString MemoryPanel::fieldText(const char* objectName) const {
    const auto* l = findChild<QLabel*>(QLatin1String(objectName));
    return l ? l->text() : QString();
}

void MemoryPanel::setView(const EngineView& v) {
    // Only the plan and its settings matter here: skip the relayout when they did not change.
    const MemoryPlan& m = v.snapshot.memory;
    const bool same =
        hasView_ && m.num_blocks == plan_.num_blocks && m.block_size == plan_.block_size &&
        m.kv_bytes == plan_.kv_bytes && m.device_bytes == plan_.device_bytes &&
        m.workspace_bytes == plan_.workspace_bytes && m.limit == plan_.limit &&
        m.weight_cache_bytes == plan_.weight_cache_bytes &&
        m.weight_cache_matrices == plan_.weight_cache_matrices &&
        m.weight_cache_candidates == plan_.weight_cache_candidates &&
        m.panel_matrices == plan_.panel_matrices && m.panel_bytes == plan_.panel_bytes &&
        m.cap_blocks == plan_.cap_blocks && m.note == plan_.note && v.replanError == replanError_ &&
        v.tuning.maxNumSeqs == maxNumSeqs_ && v.device == viewDevice_ &&
        v.deviceName == deviceName_ && v.kvDtype == viewKvDtype_ &&
        m.utilization == plan_.utilization && m.base_bytes == plan_.base_bytes &&
        m.budget_bytes == plan_.budget_bytes && m.cap_seqs == plan_.cap_seqs &&
        v.utilizationRefusal == refusal_ && v.draftWeightBytes == draftWeightBytes_ &&
        v.draftKvBytes == draftKvBytes_ && m.bytes_per_block == plan_.bytes_per_block &&
        v.pendingKvDtype == kvState_.pendingKvDtype &&
        v.kvSwitch.valid == kvState_.kvSwitch.valid && v.kvSwitch.from == kvState_.kvSwitch.from &&
        v.kvSwitch.blocks == kvState_.kvSwitch.blocks &&
        v.kvSwitch.bytesPerBlock == kvState_.kvSwitch.bytesPerBlock &&
        v.kvDtypeError == kvState_.kvDtypeError && v.kvCalibration == kvState_.kvCalibration;
    if (same)
        return;
    plan_ = m;
    replanError_ = v.replanError;
    maxNumSeqs_ = v.tuning.maxNumSeqs;
    refusal_ = v.utilizationRefusal;
    viewDevice_ = v.device;
    deviceName_ = v.deviceName;
    viewKvDtype_ = v.kvDtype;
    draftWeightBytes_ = v.draftWeightBytes;
    draftKvBytes_ = v.draftKvBytes;
    kvState_.pendingKvDtype = v.pendingKvDtype;
    kvState_.kvSwitch = v.kvSwitch;
    kvState_.kvDtypeError = v.kvDtypeError;
    kvState_.kvCalibration = v.kvCalibration;
    hasView_ = true;
    refreshTexts();
}

void MemoryPanel::setModel(const ModelMetadata& m) {
    model_ = m;
    hasModel_ = true;
    refreshTexts();
}

void MemoryPanel::retranslate() {
    title_->setText(tr("Memory plan"));
    const char* names[] = {QT_TR_NOOP("Device"),        QT_TR_NOOP("Budget"),
                           QT_TR_NOOP("Weights"),       QT_TR_NOOP("KV cache"),
                           QT_TR_NOOP("Workspace"),     QT_TR_NOOP("Free"),
                           QT_TR_NOOP("KV blocks"),     QT_TR_NOOP("Capacity"),
                           QT_TR_NOOP("Limited by"),    QT_TR_NOOP("KV-cache dtype"),
                           QT_TR_NOOP("KV switch"),     QT_TR_NOOP("Weight dtypes"),
                           QT_TR_NOOP("Draft model"),   QT_TR_NOOP("bf16 weight cache"),
                           QT_TR_NOOP("Weight layout"), QT_TR_NOOP("Parameters")};
    for (int row = 0; row < form_->rowCount() && row < int(std::size(names)); ++row)
        if (auto* item = form_->itemAt(row, QFormLayout::LabelRole))
            if (auto* label = qobject_cast<QLabel*>(item->widget()))
                label->setText(tr(names[row]));
    refreshTexts();
}

void MemoryPanel::refreshTexts() {
    const QLocale loc = locale();
    auto size = [&](qint64 b) { return loc.formattedDataSize(b, 1); };
    auto share = [&](qint64 b) {
        return plan_.device_bytes > 0 ? loc.toString(100.0 * double(b) / double(plan_.device_bytes),
                                                     'f', b * 1000 < plan_.device_bytes ? 2 : 1)
                                      : QStringLiteral("0");
    };
    if (!hasView_) {
        device_->setText(tr("No model loaded."));
        for (QLabel* l : {budget_, weights_, kv_, workspace_, free_, blocks_, capacity_, limit_,
                          kvDtype_, kvSwitch_, weightCache_, weightLayout_})
            l->setText(QStringLiteral("–"));
        bar_->setParts({});
    } else {
        device_->setText(tr("%1 · %2 %3")
                             .arg(MemoryPlanText::device(viewDevice_, deviceName_),
                                  size(plan_.device_bytes),
                                  MemoryPlanText::memoryName(viewDevice_)));
        // The plan in force: its own utilization and base, never the slider's value.
        if (plan_.from_utilization() && plan_.base_bytes > 0)
            budget_->setText(
                (viewDevice_ == DeviceKind::Cuda
                     ? tr("%1 = gpu_memory_utilization %2 × %3 of GPU memory")
                     : tr("%1 = gpu_memory_utilization %2 × %3 of RAM available to the engine"))
                    .arg(size(plan_.budget_bytes), loc.toString(plan_.utilization, 'g', 4),
                         size(plan_.base_bytes)));
        else
            budget_->setText(tr("%1 (weights, workspace and KV cache as planned)")
                                 .arg(size(plan_.weight_bytes + plan_.workspace_bytes +
                                           plan_.kv_bytes + plan_.weight_cache_bytes)));
        const QColor freeColor = palette().color(QPalette::Base);
        QList<MemoryBar::Part> parts = {{tr("Weights"), plan_.weight_bytes, kWeights},
                                        {tr("KV cache"), plan_.kv_bytes, kKv},
                                        {tr("Workspace"), plan_.workspace_bytes, kWorkspace}};
        if (plan_.weight_cache_bytes > 0)
            parts.append({tr("bf16 weight cache"), plan_.weight_cache_bytes, kWeightCache});
        parts.append({tr("Free"), plan_.free_bytes, freeColor});
        bar_->setParts(parts);
        const QString fmt = tr("%1 (%2% of the device)");
        weights_->setText(swatch(kWeights) +
                          fmt.arg(size(plan_.weight_bytes), share(plan_.weight_bytes)));
        kv_->setText(swatch(kKv) + fmt.arg(size(plan_.kv_bytes), share(plan_.kv_bytes)));
        workspace_->setText(swatch(kWorkspace) +
                            fmt.arg(size(plan_.workspace_bytes), share(plan_.workspace_bytes)));
        free_->setText(swatch(palette().color(QPalette::Mid)) +
                       fmt.arg(size(plan_.free_bytes), share(plan_.free_bytes)));
        // The bf16 copies of quantized matrices that prefill GEMMs use (CUDA; memory_plan.h).
        if (plan_.weight_cache_candidates == 0)
            weightCache_->setText(viewDevice_ == DeviceKind::Cuda
                                      ? tr("none (no quantized matrices)")
                                      : tr("none (CUDA backend only)"));
        else
            weightCache_->setText(swatch(kWeightCache) + tr("%1 (%2 of %3 matrices)")
                                                             .arg(size(plan_.weight_cache_bytes))
                                                             .arg(plan_.weight_cache_matrices)
                                                             .arg(plan_.weight_cache_candidates));
        // The CPU kernels' panel layout (engine/runtime/panel_weights.h).
        if (plan_.panel_matrices > 0)
            weightLayout_->setText(tr("panels: %1 matrices (%2) rearranged at load, no copy kept")
                                       .arg(plan_.panel_matrices)
                                       .arg(size(plan_.panel_bytes)));
        else
            weightLayout_->setText(viewDevice_ == DeviceKind::Cpu ? tr("rows, as stored")
                                                                  : tr("as stored"));
        weightLayout_->setToolTip(
            tr("On the CPU, weight matrices of the types with a panel layout (Q8_0, Q4_0, Q4_K, "
               "Q5_K, Q6_K, F16, BF16) are rearranged once at load into 16-row panels read by "
               "both the decode and the batched kernels: nothing is repacked per step, and a "
               "token's result does not depend on what shares its batch. "
               "LLMWB_WEIGHT_LAYOUT=rows keeps the file's order."));
        weightCache_->setToolTip(
            tr("bf16 copies of quantized weight matrices, made at load when the memory plan "
               "has room after a minimum KV pool (largest first): prefill runs cuBLAS on them "
               "instead of dequantizing on every call; decode keeps reading the quantized "
               "bytes."));
        blocks_->setText(tr("%1 blocks × %2 tokens, %3 per block")
                             .arg(loc.toString(plan_.num_blocks))
                             .arg(plan_.block_size)
                             .arg(size(plan_.bytes_per_block)));
        capacity_->setText(
            tr("%1 tokens").arg(loc.toString(qint64(plan_.num_blocks) * plan_.block_size)));
        limit_->setText(MemoryPlanText::limit(plan_, maxNumSeqs_));
        kvDtype_->setText(MemoryPlanText::kvDtype(viewKvDtype_));
        kvDtype_->setToolTip(MemoryPlanText::kvDtypeCost(viewKvDtype_));
        // After a switch: the pool now, and before it.
        const KvDtypeSwitch& sw = kvState_.kvSwitch;
        const QString now = MemoryPlanText::kvPool(viewKvDtype_, plan_.num_blocks, plan_.block_size,
                                                   plan_.bytes_per_block);
        if (kvState_.pendingKvDtype != viewKvDtype_)
            kvSwitch_->setText(tr("switching to %1 at the next step (now %2)")
                                   .arg(MemoryPlanText::kvDtype(kvState_.pendingKvDtype), now));
        else if (sw.valid)
            kvSwitch_->setText(
                tr("%1, was %2")
                    .arg(now, MemoryPlanText::kvPool(sw.from, sw.blocks, sw.blockSize,
                                                     sw.bytesPerBlock)));
        else
            kvSwitch_->setText(tr("none since the model was loaded (Tuning dock: KV-cache "
                                  "dtype)"));
    }
    // The self-q4 draft lives outside the plan: its weights in RAM, its KV pool committed by the
    // OS only as drafts write it.
    draft_->setText(draftWeightBytes_ > 0
                        ? tr("self-q4: %1 of 4-bit weights (RAM) + a KV pool of up to %2, "
                             "committed as drafts write it")
                              .arg(size(draftWeightBytes_), size(draftKvBytes_))
                        : tr("none (prompt lookup needs no memory)"));
    // Mixture of experts: the parameters one token uses (router + k of n experts) of the total.
    if (!hasModel_ || model_.parameterCount <= 0)
        params_->setText(QStringLiteral("–"));
    else if (model_.activeParameterCount > 0 && model_.activeParameterCount < model_.parameterCount)
        params_->setText(
            tr("active / total: %1 / %2")
                .arg(formatCount(model_.activeParameterCount), formatCount(model_.parameterCount)));
    else
        params_->setText(formatCount(model_.parameterCount));
    dtypes_->setText(hasModel_ && !model_.dtypeSummary.isEmpty()
                         ? model_.dtypeSummary.join(QLatin1Char('\n'))
                         : QStringLiteral("–"));
    QString note = hasView_ ? MemoryPlanText::backendNote(viewDevice_, viewKvDtype_) +
                                  QLatin1Char(' ') + MemoryPlanText::utilizationMeaning(viewDevice_)
                            : QString();
    if (hasView_ && kv_dtype_is_fp8(viewKvDtype_) && !kvState_.kvCalibration.isEmpty())
        note = kvState_.kvCalibration + QLatin1Char(' ') + note;
    if (!refusal_.isEmpty())
        note = refusal_ + QLatin1Char('\n') + note;
    if (hasView_ && !kvState_.kvDtypeError.isEmpty())
        note = kvState_.kvDtypeError + QLatin1Char('\n') + note;
    if (!replanError_.isEmpty())
        note =
            tr("Re-planning the KV pool failed (the previous pool stays): %1").arg(replanError_) +
            QLatin1Char('\n') + note;
    note_->setText(note);
}

void MemoryPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    else if (e->type() == QEvent::PaletteChange && hasView_)
        refreshTexts();
    QWidget::changeEvent(e);
}

} // namespace llmwb
