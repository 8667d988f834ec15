#include "ui/model_panel.h"

#include <algorithm>

#include <QComboBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSignalBlocker>
#include <QStandardItemModel>
#include <QStyle>
#include <QUrl>
#include <QVBoxLayout>

#include "ui/memory_plan_text.h"

namespace llmwb {

QString formatCount(qint64 n) {
    const QLocale loc;
    if (n >= 1'000'000'000)
        return QStringLiteral("%1 B").arg(loc.toString(n / 1e9, 'f', 2));
    if (n >= 1'000'000)
        return QStringLiteral("%1 M").arg(loc.toString(n / 1e6, 'f', 1));
    if (n >= 1'000)
        return QStringLiteral("%1 K").arg(loc.toString(n / 1e3, 'f', 1));
    return loc.toString(n);
}

QString formatBytes(qint64 bytes) {
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeIecFormat);
}

QString tensorGroupName(const QString& group) {
    static const struct {
        const char* key;
        const char* name;
    } kNames[] = {
        {"embedding", QT_TRANSLATE_NOOP("llmwb::ModelPanel", "Embedding")},
        {"attention", QT_TRANSLATE_NOOP("llmwb::ModelPanel", "Attention")},
        {"ffn", QT_TRANSLATE_NOOP("llmwb::ModelPanel", "Feed-forward")},
        {"norm", QT_TRANSLATE_NOOP("llmwb::ModelPanel", "Norms")},
        {"output", QT_TRANSLATE_NOOP("llmwb::ModelPanel", "Output")},
        {"rope_freqs", QT_TRANSLATE_NOOP("llmwb::ModelPanel", "RoPE frequencies")},
    };
    for (const auto& n : kNames)
        if (group == QLatin1String(n.key))
            return ModelPanel::tr(n.name);
    return group;
}

QString tensorGroupsHtml(const QList<TensorGroupInfo>& groups) {
    const QLocale loc;
    QString html = QStringLiteral("<table cellspacing=\"0\" cellpadding=\"1\">");
    for (const TensorGroupInfo& g : groups) {
        QStringList types;
        for (auto it = g.typeCounts.cbegin(); it != g.typeCounts.cend(); ++it)
            types << QStringLiteral("%1&nbsp;×%2").arg(it.key().toHtmlEscaped()).arg(it.value());
        html += QStringLiteral("<tr><td>%1&nbsp;&nbsp;</td><td>%2&nbsp;&nbsp;</td>"
                               "<td align=\"right\">%3</td></tr>")
                    .arg(tensorGroupName(g.group).toHtmlEscaped(), types.join(QStringLiteral(", ")),
                         ModelPanel::tr("%1 bpw").arg(loc.toString(g.bitsPerWeight(), 'f', 2)));
    }
    return html + QStringLiteral("</table>");
}

ModelPanel::ModelPanel(QWidget* parent) : QWidget(parent) {
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("modelStatus"));
    status_->setWordWrap(true);
    busy_ = new QProgressBar(this);
    busy_->setRange(0, 0);
    busy_->setObjectName(QStringLiteral("loadProgress"));
    busy_->setTextVisible(false);
    busy_->hide();
    cancel_ = new QPushButton(this);
    cancel_->setObjectName(QStringLiteral("cancelLoad"));
    cancel_->hide();
    form_ = new QFormLayout;
    form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // In a narrow dock a value goes below its label instead of widening the panel.
    form_->setRowWrapPolicy(QFormLayout::WrapLongRows);
    name_ = addField("modelName");
    arch_ = addField("modelArchitecture");
    deviceInUse_ = addField("modelDevice");
    params_ = addField("modelParameters");
    dtypes_ = addField("modelDtypes");
    dtypes_->setWordWrap(false); // one short line per tensor group (wrapping clipped them)
    dtypes_->setTextFormat(Qt::RichText);
    bpw_ = addField("modelBitsPerWeight");
    context_ = addField("modelContext");
    shape_ = addField("modelShape");
    tmpl_ = addField("modelTemplate");
    path_ = addField("modelPath");
    openFile_ = new QPushButton(this);
    openFolder_ = new QPushButton(this);
    recentTitle_ = new QLabel(this);
    recent_ = new QListWidget(this);
    recent_->setObjectName(QStringLiteral("recentModels"));
    recent_->setSelectionMode(QAbstractItemView::SingleSelection);
    removeRecent_ = new QPushButton(this);
    removeRecent_->setObjectName(QStringLiteral("removeRecent"));
    removeRecent_->setEnabled(false);
    deviceTitle_ = new QLabel(this);
    device_ = new QComboBox(this);
    device_->setObjectName(QStringLiteral("deviceCombo"));
    for (const QString& p : devicePreferences())
        device_->addItem(QString(), p);
    deviceTitle_->setBuddy(device_);
    deviceNote_ = new QLabel(this);
    deviceNote_->setObjectName(QStringLiteral("deviceNote"));
    deviceNote_->setWordWrap(true);
    deviceNote_->hide();
    weightsTitle_ = new QLabel(this);
    weights_ = new QComboBox(this);
    weights_->setObjectName(QStringLiteral("weightDtypeCombo"));
    for (const QString& w : weightDtypes())
        weights_->addItem(QString(), w);
    weightsTitle_->setBuddy(weights_);
    setAcceptDrops(true);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(openFile_);
    buttons->addWidget(openFolder_);
    buttons->addStretch();
    // The content scrolls when the dock is shorter than it (instead of squeezing the rows).
    auto* content = new QWidget;
    auto* layout = new QVBoxLayout(content);
    layout->setContentsMargins(6, 6, 6, 6);
    auto* progressRow = new QHBoxLayout;
    progressRow->addWidget(busy_, 1);
    progressRow->addWidget(cancel_);
    layout->addWidget(status_);
    layout->addLayout(progressRow);
    layout->addLayout(form_);
    auto* deviceRow = new QHBoxLayout;
    deviceRow->addWidget(deviceTitle_);
    deviceRow->addWidget(device_, 1);
    layout->addLayout(deviceRow);
    layout->addWidget(deviceNote_);
    auto* weightsRow = new QHBoxLayout;
    weightsRow->addWidget(weightsTitle_);
    weightsRow->addWidget(weights_, 1);
    layout->addLayout(weightsRow);
    layout->addLayout(buttons);
    layout->addWidget(recentTitle_);
    layout->addWidget(recent_, 1);
    auto* recentButtons = new QHBoxLayout;
    recentButtons->addStretch();
    recentButtons->addWidget(removeRecent_);
    layout->addLayout(recentButtons);
    recent_->setMinimumHeight(fontMetrics().height() * 3);
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("modelPanelScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(content);
    // The content scrolls vertically only: the panel is never narrower than its rows (a
    // narrow dock clipped them on the right); see eventFilter.
    content_ = content;
    scroll_ = scroll;
    content->installEventFilter(this);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);

    connect(openFile_, &QPushButton::clicked, this, [this] {
        const QString path = modelPathForFile(QFileDialog::getOpenFileName(
            this, tr("Open a model"), QDir::homePath(), openDialogFilter()));
        if (!path.isEmpty())
            emit openRequested(path);
    });
    connect(openFolder_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getExistingDirectory(
            this, tr("Open a Hugging Face model folder"), QDir::homePath());
        if (!path.isEmpty())
            emit openRequested(path);
    });
    connect(recent_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        const QString path = item->data(Qt::UserRole).toString();
        if (!QFileInfo::exists(path)) {
            updateRecentItems(); // it may have disappeared since the list was shown
            error_ = tr("%1 no longer exists. Remove it from the list or open another model.")
                         .arg(QDir::toNativeSeparators(path));
            status_->setText(error_);
            return;
        }
        if (!loading_)
            emit openRequested(path);
    });
    connect(device_, &QComboBox::activated, this,
            [this](int index) { emit deviceChosen(device_->itemData(index).toString()); });
    connect(weights_, &QComboBox::activated, this,
            [this](int index) { emit weightDtypeChosen(weights_->itemData(index).toString()); });
    connect(recent_, &QListWidget::itemSelectionChanged, this,
            [this] { removeRecent_->setEnabled(!recent_->selectedItems().isEmpty()); });
    connect(removeRecent_, &QPushButton::clicked, this, &ModelPanel::removeSelectedRecent);
    auto* del = new QShortcut(QKeySequence::Delete, recent_);
    del->setContext(Qt::WidgetShortcut);
    connect(del, &QShortcut::activated, this, &ModelPanel::removeSelectedRecent);
    connect(cancel_, &QPushButton::clicked, this, [this] {
        cancel_->setEnabled(false);
        loadStage_ = tr("Cancelling…");
        status_->setText(
            tr("Cancelling the loading of %1…").arg(QFileInfo(loadingPath_).fileName()));
        emit cancelLoadRequested();
    });
    retranslate();
}

QLabel* ModelPanel::addField(const char* objectName) {
    auto* value = new QLabel(this);
    value->setObjectName(QLatin1String(objectName));
    value->setWordWrap(true);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* label = new QLabel(this);
    fieldLabels_ << label;
    form_->addRow(label, value);
    return value;
}

QString ModelPanel::fieldText(const char* objectName) const {
    const auto* l = findChild<QLabel*>(QLatin1String(objectName));
    return l ? l->text() : QString();
}

void ModelPanel::retranslate() {
    const char* names[] = {QT_TR_NOOP("Name"),          QT_TR_NOOP("Architecture"),
                           QT_TR_NOOP("Running on"),    QT_TR_NOOP("Parameters"),
                           QT_TR_NOOP("Weight types"),  QT_TR_NOOP("Bits per weight"),
                           QT_TR_NOOP("Context"),       QT_TR_NOOP("Shape"),
                           QT_TR_NOOP("Chat template"), QT_TR_NOOP("File")};
    for (int i = 0; i < fieldLabels_.size(); ++i)
        fieldLabels_[i]->setText(tr(names[i]));
    openFile_->setText(tr("Open file…"));
    openFile_->setToolTip(tr("Open a .gguf model file (or drop it on the window)"));
    openFolder_->setText(tr("Open folder…"));
    openFolder_->setToolTip(tr("Open a Hugging Face folder with config.json and safetensors"));
    recentTitle_->setText(tr("Recent models"));
    cancel_->setText(tr("Cancel"));
    cancel_->setToolTip(tr("Stop loading this model"));
    removeRecent_->setText(tr("Remove from list"));
    removeRecent_->setToolTip(tr("Forget the selected model (the file is not deleted)"));
    deviceTitle_->setText(tr("Device"));
    weightsTitle_->setText(tr("Weights"));
    weights_->setItemText(0, tr("As stored"));
    weights_->setItemText(1, tr("bfloat16 (cast at load)"));
    weights_->setToolTip(
        tr("As stored: every matrix runs in the file's type.\n"
           "bfloat16: F32 and F16 matrices are rounded to bfloat16 when the model loads on the "
           "CPU: no more memory, faster prompt processing on CPUs with AVX512_BF16, slightly "
           "different outputs (`llmwb kld --dtype bfloat16` measures how much).\n"
           "A change reloads the model."));
    updateDeviceItems();
    updateRecentItems();
    showMetadata();
}

QString ModelPanel::devicePreference() const {
    return device_->currentData().toString();
}

void ModelPanel::setDevicePreference(const QString& preference) {
    const int i = device_->findData(normalizedDevicePreference(preference));
    const QSignalBlocker block(device_);
    device_->setCurrentIndex(std::max(0, i));
    updateDeviceItems();
}

void ModelPanel::setWeightDtype(const QString& dtype) {
    const QSignalBlocker block(weights_);
    weights_->setCurrentIndex(std::max(0, weights_->findData(normalizedWeightDtype(dtype))));
}

void ModelPanel::setCudaAvailability(bool available, const QString& reason) {
    cudaAvailable_ = available;
    cudaReason_ = available ? QString() : reason;
    updateDeviceItems();
}

void ModelPanel::updateDeviceItems() {
    device_->setItemText(0, tr("Auto (CUDA when available)"));
    device_->setItemText(1, tr("CPU"));
    device_->setItemText(2, QStringLiteral("CUDA"));
    auto* items = qobject_cast<QStandardItemModel*>(device_->model());
    const QString why = cudaReason_.isEmpty() ? tr("unknown reason") : cudaReason_;
    if (QStandardItem* cuda = items ? items->item(2) : nullptr) {
        // The current choice stays selectable (a saved "cuda" shows as chosen, and fails).
        cuda->setEnabled(cudaAvailable_ || device_->currentIndex() == 2);
        cuda->setToolTip(cudaAvailable_ ? tr("Run the model on the GPU")
                                        : tr("CUDA is unavailable: %1").arg(why));
    }
    device_->setToolTip(cudaAvailable_ ? tr("Where the model runs; a change reloads the model")
                                       : tr("Where the model runs; a change reloads the model.\n"
                                            "CUDA is unavailable: %1")
                                             .arg(why));
    deviceNote_->setText(tr("CUDA is unavailable: %1").arg(why));
    deviceNote_->setVisible(!cudaAvailable_);
}

void ModelPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(e);
}

void ModelPanel::setRecentModels(const QStringList& paths) {
    recent_->clear();
    for (const QString& p : paths) {
        auto* item = new QListWidgetItem(recent_);
        item->setData(Qt::UserRole, p);
    }
    updateRecentItems();
}

QStringList ModelPanel::recentModels() const {
    QStringList out;
    for (int i = 0; i < recent_->count(); ++i)
        out << recent_->item(i)->data(Qt::UserRole).toString();
    return out;
}

void ModelPanel::updateRecentItems() {
    for (int i = 0; i < recent_->count(); ++i) {
        QListWidgetItem* item = recent_->item(i);
        const QString path = item->data(Qt::UserRole).toString();
        const QFileInfo info(path);
        const QString name = info.fileName().isEmpty() ? path : info.fileName();
        const bool missing = !info.exists();
        item->setData(Qt::UserRole + 1, missing);
        item->setText(missing ? tr("%1 (missing)").arg(name) : name);
        item->setToolTip(missing ? tr("%1\nThis file or folder no longer exists.")
                                       .arg(QDir::toNativeSeparators(path))
                                 : QDir::toNativeSeparators(path));
        item->setForeground(missing ? palette().brush(QPalette::Disabled, QPalette::Text)
                                    : palette().brush(QPalette::Active, QPalette::Text));
        QFont f = item->font();
        f.setItalic(missing);
        item->setFont(f);
    }
}

void ModelPanel::removeSelectedRecent() {
    const QList<QListWidgetItem*> selected = recent_->selectedItems();
    if (selected.isEmpty())
        return;
    const QString path = selected.first()->data(Qt::UserRole).toString();
    delete selected.first();
    removeRecent_->setEnabled(!recent_->selectedItems().isEmpty());
    emit removeRecentRequested(path);
}

void ModelPanel::setBusy(bool busy) {
    loading_ = busy;
    busy_->setVisible(busy);
    cancel_->setVisible(busy);
    cancel_->setEnabled(busy);
    openFile_->setEnabled(!busy);
    openFolder_->setEnabled(!busy);
    if (!busy) {
        loadPercent_ = -1;
        loadStage_.clear();
    }
}

void ModelPanel::setLoading(const QString& path) {
    loadingPath_ = path;
    error_.clear();
    setBusy(true);
    loadPercent_ = -1;
    loadStage_.clear();
    busy_->setRange(0, 0);
    busy_->setTextVisible(false);
    status_->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
}

void ModelPanel::setLoadProgress(int percent, const QString& stage) {
    if (!loading_)
        setBusy(true);
    loadPercent_ = percent < 0 ? -1 : std::min(percent, 100);
    if (loadPercent_ < 0) {
        busy_->setRange(0, 0);
        busy_->setTextVisible(false);
    } else {
        busy_->setRange(0, 100);
        busy_->setValue(loadPercent_);
        busy_->setTextVisible(true);
    }
    if (cancel_->isEnabled())
        loadStage_ = stage;
    const QString name = QFileInfo(loadingPath_).fileName();
    QString text = name.isEmpty() ? tr("Loading…") : tr("Loading %1…").arg(name);
    if (!loadStage_.isEmpty())
        text += QLatin1Char('\n') + loadStage_;
    status_->setText(text);
}

void ModelPanel::setModel(const ModelMetadata& m) {
    model_ = m;
    if (m.device == DeviceKind::Cuda)
        setCudaAvailability(true, {});
    else if (!m.cudaUnavailable.isEmpty())
        setCudaAvailability(false, m.cudaUnavailable);
    loaded_ = true;
    error_.clear();
    setBusy(false);
    showMetadata();
    updateRecentItems();
}

void ModelPanel::setLoadFailed(const QString& message) {
    setBusy(false);
    const QString name = QFileInfo(loadingPath_).fileName();
    error_ = name.isEmpty() ? tr("Could not load the model: %1").arg(message)
                            : tr("Could not load %1: %2").arg(name, message);
    if (loaded_)
        error_ +=
            QLatin1Char('\n') + tr("The previous model (%1) is still loaded.").arg(model_.name);
    status_->setText(error_);
    updateRecentItems();
}

void ModelPanel::setTopWidget(QWidget* w) {
    if (auto* box = qobject_cast<QVBoxLayout*>(content_->layout()))
        box->insertWidget(0, w);
}

bool ModelPanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == content_ && event->type() == QEvent::LayoutRequest) {
        const int bar = scroll_->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, scroll_);
        scroll_->setMinimumWidth(content_->minimumSizeHint().width() + bar);
    }
    return QWidget::eventFilter(watched, event);
}

QString ModelPanel::modelPathFromMime(const QMimeData* mime) {
    if (!mime || !mime->hasUrls() || mime->urls().size() != 1)
        return {};
    const QUrl url = mime->urls().first();
    if (!url.isLocalFile())
        return {};
    const QFileInfo info(url.toLocalFile());
    if (info.isDir() ||
        (info.isFile() && info.suffix().compare(QLatin1String("gguf"), Qt::CaseInsensitive) == 0) ||
        (info.isFile() &&
         info.fileName().compare(QLatin1String("config.json"), Qt::CaseInsensitive) == 0))
        return modelPathForFile(info.absoluteFilePath());
    return {};
}

QString ModelPanel::modelPathForFile(const QString& path) {
    if (path.isEmpty())
        return {};
    const QFileInfo info(path);
    // A Hugging Face model is its folder: its config.json stands for it.
    if (!info.isDir() &&
        info.fileName().compare(QLatin1String("config.json"), Qt::CaseInsensitive) == 0)
        return info.absolutePath();
    return info.absoluteFilePath();
}

QString ModelPanel::openDialogFilter() {
    return tr("Models: GGUF files or a Hugging Face config.json (*.gguf config.json);;"
              "GGUF models (*.gguf);;Hugging Face folder (config.json)");
}

void ModelPanel::dragEnterEvent(QDragEnterEvent* e) {
    if (!loading_ && !modelPathFromMime(e->mimeData()).isEmpty())
        e->acceptProposedAction();
}

void ModelPanel::dropEvent(QDropEvent* e) {
    const QString path = modelPathFromMime(e->mimeData());
    if (path.isEmpty() || loading_)
        return;
    e->acceptProposedAction();
    emit openRequested(path);
}

void ModelPanel::showMetadata() {
    if (loading_)
        return; // the status line shows the progress
    if (!error_.isEmpty()) {
        status_->setText(error_);
        return;
    }
    if (!loaded_) {
        status_->setText(tr("No model loaded."));
        return;
    }
    const ModelMetadata& m = model_;
    const QLocale loc;
    status_->setText(m.randomWeights
                         ? tr("The built-in demo model: a bigram model of this project's own "
                              "sentences, not a trained model, so its answers are silly. Open a "
                              "real model to chat.")
                         : tr("Loaded."));
    name_->setText(m.name);
    arch_->setText(QStringLiteral("%1 (%2)").arg(m.architecture, m.format));
    if (m.device == DeviceKind::Cuda)
        deviceInUse_->setText(MemoryPlanText::device(m.device, m.deviceName));
    else if (m.devicePreference == QLatin1String("auto") && !m.cudaUnavailable.isEmpty())
        deviceInUse_->setText(tr("CPU (CUDA is unavailable: %1)").arg(m.cudaUnavailable));
    else
        deviceInUse_->setText(tr("CPU"));
    params_->setText(tr("%1 parameters, %2 of weights")
                         .arg(formatCount(m.parameterCount), formatBytes(m.weightBytes)));
    if (m.tensorGroups.isEmpty()) {
        dtypes_->setText(m.dtypeSummary.join(QStringLiteral("<br>")));
        bpw_->setText(tr("unknown"));
    } else {
        QString html = tensorGroupsHtml(m.tensorGroups);
        if (m.castMatrices > 0)
            html += QStringLiteral("<br>") +
                    tr("cast to bfloat16 at load: %1 matrices, %2 → %3")
                        .arg(m.castMatrices)
                        .arg(formatBytes(m.castSourceBytes), formatBytes(m.castBytes))
                        .toHtmlEscaped();
        else if (m.weightDtype != QLatin1String("auto") && !m.weightsNotCast.isEmpty())
            html += QStringLiteral("<br>") +
                    tr("not cast to bfloat16: %1").arg(m.weightsNotCast).toHtmlEscaped();
        dtypes_->setText(html);
        bpw_->setText(tr("%1 over the weight matrices, %2 over all tensors")
                          .arg(loc.toString(m.matrixBitsPerWeight, 'f', 2),
                               loc.toString(m.bitsPerWeight, 'f', 2)));
    }
    context_->setText(tr("%1 tokens").arg(loc.toString(m.contextLength)));
    shape_->setText(tr("%1 layers, hidden %2, %3 heads (%4 KV), vocabulary %5")
                        .arg(m.layers)
                        .arg(m.hiddenSize)
                        .arg(m.heads)
                        .arg(m.kvHeads)
                        .arg(loc.toString(m.vocabSize)));
    tmpl_->setText(m.hasChatTemplate ? tr("present") : tr("missing (a plain prompt is used)"));
    path_->setText(QDir::toNativeSeparators(m.path));
}

} // namespace llmwb
