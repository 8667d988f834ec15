#include "ui/model_panel.h"

#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

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

ModelPanel::ModelPanel(QWidget* parent) : QWidget(parent) {
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("modelStatus"));
    status_->setWordWrap(true);
    busy_ = new QProgressBar(this);
    busy_->setRange(0, 0);
    busy_->setMaximumHeight(8);
    busy_->setTextVisible(false);
    busy_->hide();
    form_ = new QFormLayout;
    form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    name_ = addField("modelName");
    arch_ = addField("modelArchitecture");
    params_ = addField("modelParameters");
    dtypes_ = addField("modelDtypes");
    context_ = addField("modelContext");
    shape_ = addField("modelShape");
    tmpl_ = addField("modelTemplate");
    path_ = addField("modelPath");
    openFile_ = new QPushButton(this);
    openFolder_ = new QPushButton(this);
    recentTitle_ = new QLabel(this);
    recent_ = new QListWidget(this);
    recent_->setObjectName(QStringLiteral("recentModels"));

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(openFile_);
    buttons->addWidget(openFolder_);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(status_);
    layout->addWidget(busy_);
    layout->addLayout(form_);
    layout->addLayout(buttons);
    layout->addWidget(recentTitle_);
    layout->addWidget(recent_, 1);

    connect(openFile_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open a GGUF model"), QDir::homePath(), tr("GGUF models (*.gguf)"));
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
        emit openRequested(item->data(Qt::UserRole).toString());
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
    const char* names[] = {QT_TR_NOOP("Name"),    QT_TR_NOOP("Architecture"),
                           QT_TR_NOOP("Parameters"), QT_TR_NOOP("Weight types"),
                           QT_TR_NOOP("Context"), QT_TR_NOOP("Shape"),
                           QT_TR_NOOP("Chat template"), QT_TR_NOOP("File")};
    for (int i = 0; i < fieldLabels_.size(); ++i)
        fieldLabels_[i]->setText(tr(names[i]));
    openFile_->setText(tr("Open file…"));
    openFile_->setToolTip(tr("Open a .gguf model file (or drop it on the window)"));
    openFolder_->setText(tr("Open folder…"));
    openFolder_->setToolTip(tr("Open a Hugging Face folder with config.json and safetensors"));
    recentTitle_->setText(tr("Recent models"));
    showMetadata();
}

void ModelPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(e);
}

void ModelPanel::setRecentModels(const QStringList& paths) {
    recent_->clear();
    for (const QString& p : paths) {
        auto* item = new QListWidgetItem(QFileInfo(p).fileName(), recent_);
        item->setToolTip(p);
        item->setData(Qt::UserRole, p);
    }
}

void ModelPanel::setLoading(const QString& path) {
    status_->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
    busy_->show();
}

void ModelPanel::setModel(const ModelMetadata& m) {
    model_ = m;
    loaded_ = true;
    busy_->hide();
    showMetadata();
}

void ModelPanel::setLoadFailed(const QString& message) {
    busy_->hide();
    status_->setText(tr("Could not load the model: %1").arg(message));
}

void ModelPanel::showMetadata() {
    if (!loaded_) {
        if (!busy_->isVisible())
            status_->setText(tr("No model loaded."));
        return;
    }
    const ModelMetadata& m = model_;
    const QLocale loc;
    status_->setText(m.randomWeights
                         ? tr("The built-in demo model: its weights are random, so its answers "
                              "are meaningless text. Open a real model to chat.")
                         : tr("Loaded."));
    name_->setText(m.name);
    arch_->setText(QStringLiteral("%1 (%2)").arg(m.architecture, m.format));
    params_->setText(tr("%1 parameters, %2 of weights")
                         .arg(formatCount(m.parameterCount), formatBytes(m.weightBytes)));
    dtypes_->setText(m.dtypeSummary.join(QLatin1Char('\n')));
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

}  // namespace llmwb
