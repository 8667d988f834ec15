#include "ui/quantize_dialog.h"

#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMap>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

#include "ui/model_panel.h"

namespace llmwb {

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

// A line edit with its Browse buttons, as one form row.
QWidget* row(QWidget* parent, QLineEdit* edit, std::initializer_list<QPushButton*> buttons) {
    auto* w = new QWidget(parent);
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(edit, 1);
    for (QPushButton* b : buttons)
        h->addWidget(b);
    return w;
}

} // namespace

QuantizeDialog::QuantizeDialog(QuantizeController* controller, QWidget* parent)
    : QDialog(parent), controller_(controller ? controller : new QuantizeController(this)) {
    setObjectName(QStringLiteral("quantizeDialog"));
    input_ = new QLineEdit(this);
    input_->setObjectName(QStringLiteral("quantizeInput"));
    output_ = new QLineEdit(this);
    output_->setObjectName(QStringLiteral("quantizeOutput"));
    imatrix_ = new QLineEdit(this);
    imatrix_->setObjectName(QStringLiteral("quantizeImatrix"));
    calibration_ = new QLineEdit(this);
    calibration_->setObjectName(QStringLiteral("quantizeCalibration"));
    inputFile_ = new QPushButton(this);
    inputFolder_ = new QPushButton(this);
    outputBrowse_ = new QPushButton(this);
    imatrixBrowse_ = new QPushButton(this);
    calibrationBrowse_ = new QPushButton(this);
    target_ = new QComboBox(this);
    target_->setObjectName(QStringLiteral("quantizeTarget"));
    for (const QuantTarget& t : quantize_targets())
        target_->addItem(QString(), q(t.name));
    setTarget(QStringLiteral("Q4_K_M"));
    description_ = new QLabel(this);
    description_->setObjectName(QStringLiteral("quantizeTargetDescription"));
    importanceNote_ = new QLabel(this);
    importanceNote_->setWordWrap(true);
    progress_ = new QProgressBar(this);
    progress_->setObjectName(QStringLiteral("quantizeProgress"));
    progress_->setRange(0, 1);
    progress_->setValue(0);
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("quantizeStatus"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    report_ = new QPlainTextEdit(this);
    report_->setObjectName(QStringLiteral("quantizeReport"));
    report_->setReadOnly(true);
    report_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    report_->hide();
    start_ = new QPushButton(this);
    start_->setObjectName(QStringLiteral("quantizeStart"));
    start_->setDefault(true);
    cancel_ = new QPushButton(this);
    cancel_->setObjectName(QStringLiteral("quantizeCancel"));
    cancel_->hide();
    load_ = new QPushButton(this);
    load_->setObjectName(QStringLiteral("quantizeLoad"));
    load_->hide();
    close_ = new QPushButton(this);
    close_->setObjectName(QStringLiteral("quantizeClose"));

    form_ = new QFormLayout;
    form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    auto addRow = [this](QWidget* field) {
        auto* label = new QLabel(this);
        formLabels_ << label;
        form_->addRow(label, field);
    };
    addRow(row(this, input_, {inputFile_, inputFolder_}));
    addRow(target_);
    form_->addRow(QString(), description_);
    addRow(row(this, output_, {outputBrowse_}));
    addRow(row(this, imatrix_, {imatrixBrowse_}));
    addRow(row(this, calibration_, {calibrationBrowse_}));
    form_->addRow(QString(), importanceNote_);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(load_);
    buttons->addStretch();
    buttons->addWidget(start_);
    buttons->addWidget(cancel_);
    buttons->addWidget(close_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form_);
    layout->addWidget(progress_);
    layout->addWidget(status_);
    layout->addWidget(report_, 1);
    layout->addStretch(0); // takes the room while the report is hidden (else gaps open up)
    layout->addLayout(buttons);

    connect(input_, &QLineEdit::textEdited, this, [this] {
        inputEdited_ = true;
        updateOutputSuggestion();
    });
    connect(output_, &QLineEdit::textEdited, this,
            [this](const QString& text) { outputEdited_ = !text.isEmpty(); });
    connect(target_, &QComboBox::currentIndexChanged, this, [this] {
        updateDescription();
        updateOutputSuggestion();
    });
    connect(inputFile_, &QPushButton::clicked, this, [this] {
        const QString p = browseFile(tr("Choose a float model (GGUF)"),
                                     tr("GGUF models (*.gguf);;All files (*)"), false);
        if (!p.isEmpty()) {
            inputEdited_ = true;
            setInput(p);
        }
    });
    connect(inputFolder_, &QPushButton::clicked, this, [this] {
        const QString p = QFileDialog::getExistingDirectory(
            this, tr("Choose a Hugging Face model folder"), input_->text());
        if (!p.isEmpty()) {
            inputEdited_ = true;
            setInput(p);
        }
    });
    connect(outputBrowse_, &QPushButton::clicked, this, [this] {
        const QString p =
            browseFile(tr("Write the quantized model to"), tr("GGUF models (*.gguf)"), true);
        if (!p.isEmpty())
            setOutput(p);
    });
    connect(imatrixBrowse_, &QPushButton::clicked, this, [this] {
        const QString p =
            browseFile(tr("Choose an importance matrix"),
                       tr("Importance matrices (*.gguf *.dat);;All files (*)"), false);
        if (!p.isEmpty())
            imatrix_->setText(QDir::toNativeSeparators(p));
    });
    connect(calibrationBrowse_, &QPushButton::clicked, this, [this] {
        const QString p = browseFile(tr("Choose a calibration text"),
                                     tr("Text files (*.txt *.md);;All files (*)"), false);
        if (!p.isEmpty())
            calibration_->setText(QDir::toNativeSeparators(p));
    });
    connect(start_, &QPushButton::clicked, this, &QuantizeDialog::start);
    connect(cancel_, &QPushButton::clicked, this, &QuantizeDialog::cancel);
    connect(close_, &QPushButton::clicked, this, &QuantizeDialog::close);
    connect(load_, &QPushButton::clicked, this, [this] {
        if (written_.isEmpty())
            return;
        emit loadModelRequested(written_);
        close();
    });
    connect(controller_, &QuantizeController::progress, this, &QuantizeDialog::onProgress);
    connect(controller_, &QuantizeController::finished, this, &QuantizeDialog::onFinished);
    connect(controller_, &QuantizeController::failed, this, &QuantizeDialog::onFailed);
    connect(controller_, &QuantizeController::cancelled, this, &QuantizeDialog::onCancelled);

    retranslate();
    resize(680, 540);
}

QString QuantizeDialog::suggestedOutput(const QString& input, const QString& target) {
    if (input.trimmed().isEmpty())
        return {};
    const QFileInfo fi(QDir::cleanPath(QDir::fromNativeSeparators(input.trimmed())));
    QString base = fi.isDir() ? fi.fileName() : fi.completeBaseName();
    if (!fi.isDir() && fi.suffix().compare(QLatin1String("gguf"), Qt::CaseInsensitive) != 0)
        base = fi.fileName();
    static const QRegularExpression floatSuffix(QStringLiteral("[-_.](f32|f16|bf16|fp16|fp32)$"),
                                                QRegularExpression::CaseInsensitiveOption);
    base.remove(floatSuffix);
    if (base.isEmpty())
        base = QStringLiteral("model");
    return QDir::toNativeSeparators(fi.absolutePath() + QLatin1Char('/') + base + QLatin1Char('-') +
                                    target + QStringLiteral(".gguf"));
}

QString QuantizeDialog::targetDescription(const QuantTarget& t) {
    // The engine's one-line descriptions ("4.9 bpw, Q4_K + Q6_K", "5.5 bpw, every matrix Q5_K",
    // "16 bpw, no quantization", "4.5 bpw, Q4_0 (output Q6_K)"): type names stay, words are
    // translated.
    QString d = q(t.description);
    d.replace(QStringLiteral("every matrix"), tr("every matrix"));
    d.replace(QStringLiteral("no quantization"), tr("no quantization"));
    d.replace(QStringLiteral("(output "), QLatin1Char('(') + tr("output") + QLatin1Char(' '));
    d.replace(QStringLiteral(" bpw"), QLatin1Char(' ') + tr("bpw"));
    const QString kind = t.preset ? tr("preset mix") : tr("single type");
    return tr("%1 — %2").arg(kind, d);
}

void QuantizeDialog::retranslate() {
    setWindowTitle(tr("Quantize a model"));
    const char* labels[] = {QT_TR_NOOP("Model to quantize:"), QT_TR_NOOP("Target:"),
                            QT_TR_NOOP("Output file:"), QT_TR_NOOP("Importance matrix (optional):"),
                            QT_TR_NOOP("Calibration text (optional):")};
    for (int i = 0; i < formLabels_.size(); ++i)
        formLabels_[i]->setText(tr(labels[i]));
    input_->setPlaceholderText(tr("A GGUF file (F32, F16 or BF16) or a Hugging Face folder"));
    output_->setPlaceholderText(tr("Where to write the GGUF file"));
    imatrix_->setPlaceholderText(tr("An importance-matrix file (common GGUF imatrix format)"));
    calibration_->setPlaceholderText(tr("A text file of your own to gather importances from"));
    inputFile_->setText(tr("File…"));
    inputFolder_->setText(tr("Folder…"));
    outputBrowse_->setText(tr("Browse…"));
    imatrixBrowse_->setText(tr("Browse…"));
    calibrationBrowse_->setText(tr("Browse…"));
    importanceNote_->setText(
        tr("The K and IQ types use the importances to choose their scales; without either "
           "file, scales come from round-to-nearest with the usual scale search."));
    for (int i = 0; i < target_->count(); ++i)
        target_->setItemText(i, target_->itemData(i).toString());
    start_->setText(tr("Start"));
    cancel_->setText(tr("Cancel"));
    cancel_->setToolTip(tr("Stop quantizing (no output file is left behind)"));
    load_->setText(tr("Load the new model"));
    close_->setText(tr("Close"));
    updateDescription();
    renderStatus();
    renderReport();
}

void QuantizeDialog::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    QDialog::changeEvent(e);
}

void QuantizeDialog::updateDescription() {
    const QString name = target();
    for (const QuantTarget& t : quantize_targets()) {
        if (q(t.name) == name)
            description_->setText(targetDescription(t));
    }
}

void QuantizeDialog::updateOutputSuggestion() {
    if (!outputEdited_)
        output_->setText(suggestedOutput(input_->text(), target()));
}

void QuantizeDialog::setInput(const QString& path) {
    input_->setText(QDir::toNativeSeparators(path));
    updateOutputSuggestion();
}

QString QuantizeDialog::input() const {
    return QDir::fromNativeSeparators(input_->text().trimmed());
}

void QuantizeDialog::setOutput(const QString& path) {
    output_->setText(QDir::toNativeSeparators(path));
    outputEdited_ = !path.isEmpty();
}

QString QuantizeDialog::output() const {
    return QDir::fromNativeSeparators(output_->text().trimmed());
}

void QuantizeDialog::setTarget(const QString& name) {
    const int i = target_->findData(name.toUpper());
    if (i >= 0)
        target_->setCurrentIndex(i);
}

QString QuantizeDialog::target() const {
    return target_->currentData().toString();
}

void QuantizeDialog::setImatrix(const QString& path) {
    imatrix_->setText(QDir::toNativeSeparators(path));
}

void QuantizeDialog::setCalibration(const QString& path) {
    calibration_->setText(QDir::toNativeSeparators(path));
}

QString QuantizeDialog::statusText() const {
    return status_->text();
}

QString QuantizeDialog::reportText() const {
    return report_->isVisible() || !report_->toPlainText().isEmpty() ? report_->toPlainText()
                                                                     : QString();
}

bool QuantizeDialog::ask(const QString& question) {
    if (ask_)
        return ask_(question);
    return QMessageBox::question(this, windowTitle(), question) == QMessageBox::Yes;
}

QString QuantizeDialog::browseFile(const QString& title, const QString& filter, bool save) {
    const QString dir = QFileInfo(save ? output() : input()).absolutePath();
    return save ? QFileDialog::getSaveFileName(this, title, output().isEmpty() ? dir : output(),
                                               filter)
                : QFileDialog::getOpenFileName(this, title, dir, filter);
}

void QuantizeDialog::start() {
    if (isRunning())
        return;
    QuantizeOptions o;
    o.input = input().toStdString();
    o.output = output().toStdString();
    o.target = target().toStdString();
    o.imatrix_path = QDir::fromNativeSeparators(imatrix_->text().trimmed()).toStdString();
    o.calibration_path = QDir::fromNativeSeparators(calibration_->text().trimmed()).toStdString();
    if (!o.input.empty() && !o.output.empty() && QFileInfo::exists(output()) &&
        QFileInfo(output()) != QFileInfo(input()) &&
        !ask(tr("%1 already exists. Replace it?").arg(QDir::toNativeSeparators(output()))))
        return;
    const QString refused = controller_->start(o);
    if (!refused.isEmpty()) {
        outcome_ = Outcome::Failed;
        failure_ = refused;
        renderStatus();
        renderReport();
        return;
    }
    written_.clear();
    hasReport_ = false;
    failure_.clear();
    lastProgress_ = QuantizeProgress{};
    quantizeStartSeconds_ = 0;
    outcome_ = Outcome::Running;
    setRunning(true);
    renderStatus();
    renderReport();
}

void QuantizeDialog::cancel() {
    if (!isRunning())
        return;
    controller_->cancel();
    cancel_->setEnabled(false);
    renderStatus();
}

void QuantizeDialog::setRunning(bool running) {
    for (QWidget* w : std::initializer_list<QWidget*>{input_, output_, imatrix_, calibration_,
                                                      inputFile_, inputFolder_, outputBrowse_,
                                                      imatrixBrowse_, calibrationBrowse_, target_})
        w->setEnabled(!running);
    start_->setVisible(!running);
    cancel_->setVisible(running);
    cancel_->setEnabled(running);
    load_->setVisible(!running && !written_.isEmpty());
    if (running) {
        progress_->setRange(0, 0); // busy until the first update says how many tensors
        load_->hide();
    }
}

void QuantizeDialog::onProgress(const QuantizeProgress& p) {
    if (p.stage != "calibrating" && lastProgress_.stage == "calibrating")
        quantizeStartSeconds_ = lastProgress_.seconds; // quantizing began after the calibration
    lastProgress_ = p;
    if (p.tensors_total > 0) {
        progress_->setRange(0, p.tensors_total);
        progress_->setValue(std::min(p.tensors_done, p.tensors_total));
    }
    renderStatus();
}

void QuantizeDialog::onFinished(const QuantizeReport& r) {
    lastReport_ = r;
    hasReport_ = true;
    written_ = q(controller_->options().output);
    outcome_ = Outcome::Finished;
    progress_->setRange(0, std::max(1, lastProgress_.tensors_total));
    progress_->setValue(progress_->maximum());
    ended();
}

void QuantizeDialog::onFailed(const QString& message) {
    failure_ = message;
    outcome_ = Outcome::Failed;
    ended();
}

void QuantizeDialog::onCancelled() {
    outcome_ = Outcome::Cancelled;
    ended();
}

void QuantizeDialog::ended() {
    setRunning(false);
    if (outcome_ != Outcome::Finished) {
        progress_->setRange(0, 1);
        progress_->setValue(0);
    }
    renderStatus();
    renderReport();
    if (closeWhenStopped_) {
        closeWhenStopped_ = false;
        close();
    }
}

void QuantizeDialog::showStatus(const QString& text, bool error) {
    status_->setText(text);
    status_->setStyleSheet(error ? QStringLiteral("color: #c62828;") : QString());
}

void QuantizeDialog::renderStatus() {
    const QLocale loc;
    const QuantizeProgress& p = lastProgress_;
    switch (outcome_) {
    case Outcome::None:
        showStatus(tr("Choose a model and a target, then Start."));
        return;
    case Outcome::Running: {
        if (controller_->isCancelling()) {
            showStatus(tr("Stopping…"));
            return;
        }
        if (p.tensors_total <= 0) {
            showStatus(tr("Starting…"));
            return;
        }
        if (p.stage == "calibrating") { // tensors_done / total count calibration tokens
            showStatus(tr("Gathering importances from the calibration text: token %1 of %2")
                           .arg(p.tensors_done)
                           .arg(p.tensors_total));
            return;
        }
        // MB/s of input weights since quantizing began (the calibration took its own time).
        const double quantSeconds = p.seconds - quantizeStartSeconds_;
        const double mbs = quantSeconds > 0 ? p.bytes_done / 1e6 / quantSeconds : 0.0;
        const QString what = p.stage == "writing" ? tr("Writing the file")
                                                  : tr("Quantizing %1").arg(q(p.current_tensor));
        showStatus(tr("Tensor %1 of %2 · %3 MB/s · %4")
                       .arg(p.tensors_done)
                       .arg(p.tensors_total)
                       .arg(loc.toString(mbs, 'f', 1), what));
        return;
    }
    case Outcome::Finished:
        showStatus(tr("Done: %1").arg(QDir::toNativeSeparators(written_)));
        return;
    case Outcome::Failed:
        showStatus(tr("Quantization failed."), true);
        return;
    case Outcome::Cancelled:
        showStatus(tr("Cancelled; no output file was written."));
        return;
    }
}

void QuantizeDialog::renderReport() {
    if (outcome_ == Outcome::Failed) {
        report_->setPlainText(failure_); // the whole message, selectable
        report_->show();
        return;
    }
    if (outcome_ != Outcome::Finished || !hasReport_) {
        report_->clear();
        report_->hide();
        return;
    }
    const QuantizeReport& r = lastReport_;
    const QLocale loc;
    QStringList lines;
    lines << tr("Wrote %1").arg(QDir::toNativeSeparators(written_));
    lines << tr("Size: %1 → %2").arg(formatBytes(r.bytes_in), formatBytes(r.bytes_out));
    lines << tr("Bits per weight over the quantized matrices: %1")
                 .arg(loc.toString(r.bits_per_weight, 'f', 2));
    QMap<int, int> counts; // by DType id, so the list is in the types' order
    for (const QuantizedTensor& t : r.tensors)
        ++counts[static_cast<int>(t.type)];
    QStringList types;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        types << QStringLiteral("%1 ×%2")
                     .arg(QLatin1String(dtype_name(static_cast<DType>(it.key()))))
                     .arg(it.value());
    lines << tr("Types: %1").arg(types.join(QStringLiteral(", ")));
    if (r.fallback_tensors > 0)
        lines << tr("%n tensor(s) in a fallback type (the row length does not fit the block):", "",
                    r.fallback_tensors);
    for (const QuantizedTensor& t : r.tensors) {
        if (t.type != t.wanted)
            lines << QStringLiteral("  %1: %2 → %3")
                         .arg(q(t.name), QLatin1String(dtype_name(t.wanted)),
                              QLatin1String(dtype_name(t.type)));
    }
    for (const std::string& note : r.notes)
        lines << q(note);
    if (r.calibration_seconds > 0)
        lines << tr("Time: %1 s, of which %2 s gathering importances from the calibration text")
                     .arg(loc.toString(r.seconds, 'f', 1),
                          loc.toString(r.calibration_seconds, 'f', 1));
    else
        lines << tr("Time: %1 s").arg(loc.toString(r.seconds, 'f', 1));
    report_->setPlainText(lines.join(QLatin1Char('\n')));
    report_->show();
}

bool QuantizeDialog::mayClose() {
    if (!isRunning())
        return true;
    if (!closeWhenStopped_ && ask(tr("A quantization is running. Stop it and close?"))) {
        closeWhenStopped_ = true; // ended() closes the dialog
        cancel();
    }
    return false;
}

void QuantizeDialog::reject() {
    if (mayClose())
        QDialog::reject(); // hides it; a later Model > Quantize... shows the same dialog
}

void QuantizeDialog::closeEvent(QCloseEvent* e) {
    if (!mayClose()) {
        e->ignore();
        return;
    }
    QDialog::closeEvent(e);
}

} // namespace llmwb
