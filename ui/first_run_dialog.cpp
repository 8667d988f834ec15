// The first-run panel: machine facts, discovered models, their fit.
#include "ui/first_run_dialog.h"

#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "app/discovery/fit_calculator.h"

namespace llmwb {

namespace {

QString firstRunBytes(int64_t bytes) {
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeIecFormat);
}

QString firstRunQ(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace

FirstRunDialog::FirstRunDialog(const MachineFacts& machine, const DiscoveryRoots& roots,
                               const QStringList& folders, QWidget* parent)
    : QDialog(parent), machine_(machine), roots_(roots), folders_(folders) {
    setObjectName(QStringLiteral("firstRunDialog"));
    machineLabel_ = new QLabel(this);
    machineLabel_->setObjectName(QStringLiteral("machineLabel"));
    machineLabel_->setTextFormat(Qt::RichText);
    machineLabel_->setWordWrap(true);
    machineLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    modelsLabel_ = new QLabel(this);
    modelsLabel_->setWordWrap(true);
    table_ = new QTableWidget(0, ColCount, this);
    table_->setObjectName(QStringLiteral("modelTable"));
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setWordWrap(false);
    table_->setTextElideMode(Qt::ElideMiddle); // long paths keep both ends; tooltips hold all
    context_ = new QSpinBox(this);
    context_->setObjectName(QStringLiteral("contextBox"));
    context_->setRange(256, 1 << 20);
    context_->setSingleStep(1024);
    context_->setValue(4096);
    context_->setGroupSeparatorShown(true);
    seqs_ = new QSpinBox(this);
    seqs_->setObjectName(QStringLiteral("seqsBox"));
    seqs_->setRange(1, kFitMaxSeqs);
    seqs_->setValue(1);
    contextLabel_ = new QLabel(this);
    seqsLabel_ = new QLabel(this);
    deviceLabel_ = new QLabel(this);
    addFolder_ = new QPushButton(this);
    addFolder_->setObjectName(QStringLiteral("addFolderButton"));
    rescan_ = new QPushButton(this);
    close_ = new QPushButton(this);
    close_->setDefault(true);

    auto* chooser = new QHBoxLayout;
    chooser->addWidget(contextLabel_);
    chooser->addWidget(context_);
    chooser->addSpacing(12);
    chooser->addWidget(seqsLabel_);
    chooser->addWidget(seqs_);
    chooser->addSpacing(12);
    chooser->addWidget(deviceLabel_, 1);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(addFolder_);
    buttons->addWidget(rescan_);
    buttons->addStretch(1);
    buttons->addWidget(close_);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(machineLabel_);
    layout->addWidget(modelsLabel_);
    layout->addLayout(chooser);
    layout->addWidget(table_, 1);
    layout->addLayout(buttons);

    connect(context_, &QSpinBox::valueChanged, this, &FirstRunDialog::updateFit);
    connect(seqs_, &QSpinBox::valueChanged, this, &FirstRunDialog::updateFit);
    connect(close_, &QPushButton::clicked, this, &QDialog::accept);
    connect(rescan_, &QPushButton::clicked, this, &FirstRunDialog::rescan);
    connect(addFolder_, &QPushButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Add a folder of models"), QString());
        if (!dir.isEmpty())
            addFolder(dir);
    });
    connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (row < 0 || row >= int(models_.size()))
            return;
        const DiscoveredModel& m = models_[size_t(row)];
        if (!m.header.ok())
            return;
        emit openModelRequested(firstRunQ(m.path));
        accept();
    });
    resize(1100, 640);
    retranslate();
    rescan();
}

QString FirstRunDialog::machineHtml(const MachineFacts& m) {
    QString html = tr("<b>CPU</b> %1 — %2 cores, %3 threads, SIMD %4<br>")
                       .arg(firstRunQ(m.cpu_model).toHtmlEscaped())
                       .arg(m.physical_cores)
                       .arg(m.logical_cores)
                       .arg(firstRunQ(m.simd_level));
    html += tr("<b>Memory</b> %1 installed, %2 available now<br>")
                .arg(firstRunBytes(m.ram_bytes), firstRunBytes(m.ram_available_bytes));
    for (const GpuFacts& g : m.gpus)
        html += tr("<b>GPU</b> %1 — %2, compute capability %3, driver %4<br>")
                    .arg(firstRunQ(g.name).toHtmlEscaped(), firstRunBytes(g.memory_bytes),
                         firstRunQ(g.compute_capability),
                         g.driver.empty() ? tr("unknown") : firstRunQ(g.driver));
    if (m.gpus.empty())
        html += tr("<b>GPU</b> none: the engine runs on the CPU (%1)<br>")
                    .arg(firstRunQ(m.gpu_note).toHtmlEscaped());
    html += tr("<b>System</b> %1, %2")
                .arg(firstRunQ(m.os).toHtmlEscaped(), firstRunQ(m.kernel).toHtmlEscaped());
    return html;
}

void FirstRunDialog::rescan() {
    DiscoveryRoots r = roots_;
    r.user_folders.clear();
    for (const QString& f : folders_)
        r.user_folders.push_back(f.toStdString());
    models_ = discover_models(r);
    fillRows();
    updateFit();
    retranslate();
}

void FirstRunDialog::addFolder(const QString& dir) {
    if (dir.isEmpty() || folders_.contains(dir))
        return;
    folders_.append(dir);
    emit foldersChanged(folders_);
    rescan();
}

void FirstRunDialog::fillRows() {
    table_->setRowCount(int(models_.size()));
    for (int row = 0; row < int(models_.size()); ++row) {
        const DiscoveredModel& m = models_[size_t(row)];
        const ModelHeader& h = m.header;
        auto set = [&](int col, const QString& text, const QString& tip = QString()) {
            auto* item = new QTableWidgetItem(text);
            item->setToolTip(tip.isEmpty() ? text : tip);
            table_->setItem(row, col, item);
        };
        set(ColName, firstRunQ(m.name), firstRunQ(m.path));
        set(ColSource, firstRunQ(m.source));
        set(ColArch, h.architecture.empty() ? QStringLiteral("?") : firstRunQ(h.architecture));
        set(ColSize, firstRunBytes(h.file_bytes));
        set(ColTypes, firstRunQ(h.types_text()));
        set(ColContext, h.context_length > 0 ? QLocale().toString(qlonglong(h.context_length))
                                             : QStringLiteral("?"));
        set(ColFit, QString());
    }
}

void FirstRunDialog::updateFit() {
    const FitDevice dev = fit_device_for(machine_, true);
    FitRequest req;
    req.context = context_->value();
    req.seqs = seqs_->value();
    for (int row = 0; row < int(models_.size()) && row < table_->rowCount(); ++row) {
        const ModelHeader& h = models_[size_t(row)].header;
        QTableWidgetItem* item = table_->item(row, ColFit);
        if (!item)
            continue;
        QString text, tip;
        QColor colour;
        if (!h.config) {
            text = tr("error: %1").arg(firstRunQ(h.error));
            tip = text;
            colour = QColor(0x9e, 0x9e, 0x9e);
        } else {
            const FitAdvice a = advise_fit(*h.config, h.weight_bytes, h.parameters, dev, req);
            FitRequest asked = req;
            asked.kv_dtype = a.fits ? a.kv_dtype : KvDtype::F16;
            const FitEstimate e = estimate_fit(*h.config, h.weight_bytes, dev, asked);
            const QString need = tr("needs %1 (weights %2 + KV %3 + overhead %4) of %5")
                                     .arg(firstRunBytes(e.need_bytes),
                                          firstRunBytes(e.weight_bytes), firstRunBytes(e.kv_bytes),
                                          firstRunBytes(e.activation_bytes + e.runtime_bytes),
                                          firstRunBytes(e.budget_bytes));
            if (a.fits) {
                text = tr("fits — KV %1, up to %n sequence(s), gpu_memory_utilization %2", nullptr,
                          a.max_num_seqs)
                           .arg(QString::fromLatin1(kv_dtype_name(a.kv_dtype)))
                           .arg(a.gpu_memory_utilization, 0, 'f', 2);
                colour = a.kv_dtype == KvDtype::F16 ? QColor(0x2e, 0x7d, 0x32)
                                                    : QColor(0xb2, 0x8b, 0x00);
            } else if (!a.quantization.empty()) {
                text = tr("too big — %1 fits with %2 context")
                           .arg(firstRunQ(a.quantization),
                                firstRunQ(fit_context_text(a.quantization_context)));
                colour = QColor(0xe6, 0x51, 0x00);
            } else {
                text = tr("does not fit this machine");
                colour = QColor(0xc6, 0x28, 0x28);
            }
            tip = need;
        }
        item->setText(text);
        item->setToolTip(tip);
        item->setForeground(colour);
        if (QTableWidgetItem* name = table_->item(row, ColName))
            name->setForeground(h.ok() ? palette().color(QPalette::Text) : colour);
    }
    deviceLabel_->setText(
        dev.gpu ? tr("against %1 of GPU memory").arg(firstRunBytes(dev.base_bytes))
                : tr("against %1 of available RAM").arg(firstRunBytes(dev.base_bytes)));
    table_->resizeColumnsToContents();
    // Long names and reasons are elided so that every column stays in view.
    table_->setColumnWidth(ColName, std::min(table_->columnWidth(ColName), 340));
    table_->setColumnWidth(ColFit, std::min(table_->columnWidth(ColFit), 420));
}

void FirstRunDialog::retranslate() {
    setWindowTitle(tr("Welcome — this machine and its models"));
    machineLabel_->setText(machineHtml(machine_));
    modelsLabel_->setText(
        models_.empty()
            ? tr("No models found in LM Studio's, GPT4All's, Ollama's or the Hugging Face "
                 "cache's folders. Add a folder, or open a model from the File menu.")
            : tr("%n model(s) found (headers read, nothing loaded). Double-click one to load it.",
                 nullptr, int(models_.size())));
    contextLabel_->setText(tr("Context (tokens):"));
    seqsLabel_->setText(tr("Sequences:"));
    addFolder_->setText(tr("Add folder…"));
    rescan_->setText(tr("Search again"));
    close_->setText(tr("Close"));
    table_->setHorizontalHeaderLabels({tr("Model"), tr("Fits?"), tr("Source"), tr("Architecture"),
                                       tr("Size"), tr("Tensor types"), tr("Context")});
}

void FirstRunDialog::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) {
        retranslate();
        updateFit();
    }
    QDialog::changeEvent(e);
}

} // namespace llmwb
