#include "ui/benchmark_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <cmath>

#include "app/report/report_compare.h"
#include "app/services/app_settings.h"
#include "app/services/bench_controller.h"
#include "ui/bench_compare_view.h"
#include "ui/bench_runs_model.h"
#include "ui/charts_panel.h"

namespace llmwb {

namespace {

// "1, 2, 4" -> {1, 2, 4}; nullopt when a part is not a number.
std::optional<QVector<double>> parseNumbers(const QString& text) {
    QVector<double> out;
    const QLocale c = QLocale::c();
    for (QString part :
         text.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts)) {
        bool ok = false;
        const double v = c.toDouble(part.trimmed(), &ok);
        if (!ok)
            return std::nullopt;
        out << v;
    }
    return out;
}

QString duration(double s) {
    if (s < 0)
        return QStringLiteral("—");
    const int t = int(std::lround(s));
    return t >= 3600 ? QStringLiteral("%1:%2:%3")
                           .arg(t / 3600)
                           .arg(t / 60 % 60, 2, 10, QLatin1Char('0'))
                           .arg(t % 60, 2, 10, QLatin1Char('0'))
                     : QStringLiteral("%1:%2").arg(t / 60).arg(t % 60, 2, 10, QLatin1Char('0'));
}

} // namespace

BenchmarkPage::BenchmarkPage(BenchController& controller, AppSettings& settings, QWidget* parent)
    : QWidget(parent), controller_(controller), settings_(settings) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    tabs_ = new QTabWidget(this);
    tabs_->setObjectName(QStringLiteral("benchTabs"));
    layout->addWidget(tabs_, 1);

    // Setup: the form, in two columns, scrolling vertically.
    auto* scroll = new QScrollArea(tabs_);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* form = new QWidget(scroll);
    buildForm(form);
    scroll->setWidget(form);
    tabs_->addTab(scroll, QString());

    live_ = new ChartsPanel(tabs_);
    live_->setObjectName(QStringLiteral("benchLiveCharts"));
    tabs_->addTab(live_, QString());

    auto* runsPage = new QWidget(tabs_);
    auto* runsLayout = new QVBoxLayout(runsPage);
    runsLayout->setContentsMargins(0, 0, 0, 0);
    auto* runsSplit = new QSplitter(Qt::Vertical, runsPage);
    runsModel_ = new BenchRunsModel(this);
    runsView_ = new QTableView(runsSplit);
    runsView_->setObjectName(QStringLiteral("benchRunsView"));
    runsView_->setModel(runsModel_);
    runsView_->setSelectionBehavior(QAbstractItemView::SelectRows);
    runsView_->setSelectionMode(QAbstractItemView::SingleSelection);
    runsView_->verticalHeader()->setVisible(false);
    runsView_->horizontalHeader()->setStretchLastSection(true);
    runsView_->setWordWrap(false);
    summary_ = new QPlainTextEdit(runsSplit);
    summary_->setObjectName(QStringLiteral("benchSummary"));
    summary_->setReadOnly(true);
    summary_->setLineWrapMode(QPlainTextEdit::NoWrap);
    summary_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    runsSplit->addWidget(runsView_);
    runsSplit->addWidget(summary_);
    runsSplit->setStretchFactor(0, 2);
    runsSplit->setStretchFactor(1, 3);
    runsLayout->addWidget(runsSplit, 1);
    auto* runButtons = new QHBoxLayout;
    compareButton_ = new QPushButton(runsPage);
    compareButton_->setObjectName(QStringLiteral("benchCompareButton"));
    exportButton_ = new QPushButton(runsPage);
    exportButton_->setObjectName(QStringLiteral("benchExportButton"));
    importButton_ = new QPushButton(runsPage);
    importButton_->setObjectName(QStringLiteral("benchImportButton"));
    deleteButton_ = new QPushButton(runsPage);
    deleteButton_->setObjectName(QStringLiteral("benchDeleteButton"));
    for (QPushButton* b : {compareButton_, exportButton_, importButton_, deleteButton_})
        runButtons->addWidget(b);
    runButtons->addStretch(1);
    runsLayout->addLayout(runButtons);
    tabs_->addTab(runsPage, QString());

    compareView_ = new BenchCompareView(tabs_);
    compareView_->setObjectName(QStringLiteral("benchCompareView"));
    tabs_->addTab(compareView_, QString());

    // The run bar: why a plan was refused, Run / Cancel, progress, the current run.
    hint_ = new QLabel(this);
    hint_->setObjectName(QStringLiteral("benchHint"));
    hint_->setWordWrap(true);
    hint_->setVisible(false);
    hint_->setStyleSheet(QStringLiteral("color: #c62828;"));
    layout->addWidget(hint_);
    auto* bar = new QHBoxLayout;
    runButton_ = new QPushButton(this);
    runButton_->setObjectName(QStringLiteral("benchRunButton"));
    runButton_->setDefault(true);
    cancelButton_ = new QPushButton(this);
    cancelButton_->setObjectName(QStringLiteral("benchCancelButton"));
    cancelButton_->setEnabled(false);
    progress_ = new QProgressBar(this);
    progress_->setObjectName(QStringLiteral("benchProgress"));
    progress_->setRange(0, 1000);
    progress_->setValue(0);
    progress_->setTextVisible(false);
    bar->addWidget(runButton_);
    bar->addWidget(cancelButton_);
    bar->addWidget(progress_, 1);
    layout->addLayout(bar);
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("benchStatus"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(status_);

    connect(runButton_, &QPushButton::clicked, this, [this] { run(); });
    connect(cancelButton_, &QPushButton::clicked, this, &BenchmarkPage::cancel);
    connect(compareButton_, &QPushButton::clicked, this,
            [this] { compare(runsModel_->checkedIds()); });
    connect(exportButton_, &QPushButton::clicked, this, &BenchmarkPage::exportRequested);
    connect(importButton_, &QPushButton::clicked, this, &BenchmarkPage::importRequested);
    connect(deleteButton_, &QPushButton::clicked, this, [this] {
        for (qint64 id : runsModel_->checkedIds())
            controller_.store().deleteRun(id);
        refreshRuns();
    });
    connect(runsView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& cur) {
                if (cur.isValid())
                    showSummary(runsModel_->entry(cur.row()).id);
            });
    connect(&controller_, &BenchController::progress, this, &BenchmarkPage::onProgress);
    connect(&controller_, &BenchController::runStored, this, &BenchmarkPage::onRunStored);
    connect(&controller_, &BenchController::runsChanged, this, &BenchmarkPage::refreshRuns);
    connect(&controller_, &BenchController::finished, this, &BenchmarkPage::onFinished);
    connect(&controller_, &BenchController::storageFailed, this, [this](const QString& m) {
        hint_->setText(m);
        hint_->setVisible(true);
    });

    price_->setValue(settings_.benchPricePerHour());
    currency_->setText(settings_.benchCurrency());
    runsModel_->setPrice(price_->value(), currency_->text());
    compareView_->setPrice(price_->value(), currency_->text());
    retranslate();
    refreshRuns();
}

void BenchmarkPage::buildForm(QWidget* form) {
    auto* columns = new QHBoxLayout(form);
    auto* v = new QVBoxLayout;
    auto* v2 = new QVBoxLayout;
    columns->addLayout(v, 1);
    columns->addLayout(v2, 1);
    auto label = [this](QWidget* parent) {
        auto* l = new QLabel(parent);
        labels_ << l;
        return l;
    };
    auto* top = new QFormLayout;
    preset_ = new QComboBox(form);
    preset_->setObjectName(QStringLiteral("benchPreset"));
    preset_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    preset_->setMinimumContentsLength(14);
    for (int i = 0; i < 4; ++i)
        preset_->addItem(QString());
    name_ = new QLineEdit(form);
    name_->setObjectName(QStringLiteral("benchName"));
    top->addRow(label(form), preset_);
    top->addRow(label(form), name_);
    v->addLayout(top);

    workloadBox_ = new QGroupBox(form);
    auto* w = new QFormLayout(workloadBox_);
    source_ = new QComboBox(workloadBox_);
    source_->setObjectName(QStringLiteral("benchSource"));
    source_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    source_->setMinimumContentsLength(14);
    for (int i = 0; i < 3; ++i)
        source_->addItem(QString());
    datasetPath_ = new QLineEdit(workloadBox_);
    datasetPath_->setObjectName(QStringLiteral("benchDataset"));
    browse_ = new QPushButton(workloadBox_);
    auto* fileRow = new QHBoxLayout;
    fileRow->addWidget(datasetPath_, 1);
    fileRow->addWidget(browse_);
    auto spin = [&](const char* name, int lo, int hi, int value) {
        auto* s = new QSpinBox(workloadBox_);
        s->setObjectName(QLatin1String(name));
        s->setRange(lo, hi);
        s->setValue(value);
        s->setGroupSeparatorShown(true);
        return s;
    };
    numPrompts_ = spin("benchNumPrompts", 1, BenchWorkload::kMaxPrompts, 32);
    inputLen_ = spin("benchInputLen", 1, 1 << 20, 128);
    outputLen_ = spin("benchOutputLen", 1, 1 << 20, 128);
    prefixLen_ = spin("benchPrefixLen", 0, 1 << 20, 0);
    maxConcurrency_ = spin("benchMaxConcurrency", 0, 100000, 0);
    seed_ = spin("benchSeed", 0, 1 << 30, 0);
    rangeRatio_ = new QDoubleSpinBox(workloadBox_);
    rangeRatio_->setObjectName(QStringLiteral("benchRangeRatio"));
    rangeRatio_->setRange(0, 0.99);
    rangeRatio_->setSingleStep(0.05);
    requestRate_ = new QDoubleSpinBox(workloadBox_);
    requestRate_->setObjectName(QStringLiteral("benchRequestRate"));
    requestRate_->setRange(0, 100000);
    requestRate_->setDecimals(2);
    burstiness_ = new QDoubleSpinBox(workloadBox_);
    burstiness_->setObjectName(QStringLiteral("benchBurstiness"));
    burstiness_->setRange(0.01, 100);
    burstiness_->setValue(1.0);
    w->addRow(label(workloadBox_), source_);
    w->addRow(label(workloadBox_), fileRow);
    w->addRow(label(workloadBox_), numPrompts_);
    w->addRow(label(workloadBox_), inputLen_);
    w->addRow(label(workloadBox_), outputLen_);
    w->addRow(label(workloadBox_), rangeRatio_);
    w->addRow(label(workloadBox_), prefixLen_);
    w->addRow(label(workloadBox_), requestRate_);
    w->addRow(label(workloadBox_), burstiness_);
    w->addRow(label(workloadBox_), maxConcurrency_);
    w->addRow(label(workloadBox_), seed_);
    v->addWidget(workloadBox_);

    policyBox_ = new QGroupBox(form);
    auto* p = new QVBoxLayout(policyBox_);
    continuous_ = new QCheckBox(policyBox_);
    continuous_->setObjectName(QStringLiteral("benchContinuous"));
    continuous_->setChecked(true);
    static_ = new QCheckBox(policyBox_);
    static_->setObjectName(QStringLiteral("benchStatic"));
    sequential_ = new QCheckBox(policyBox_);
    sequential_->setObjectName(QStringLiteral("benchSequential"));
    for (QCheckBox* c : {continuous_, static_, sequential_})
        p->addWidget(c);
    v2->addWidget(policyBox_);

    sweepBox_ = new QGroupBox(form);
    auto* s = new QFormLayout(sweepBox_);
    sweepSetting_ = new QComboBox(sweepBox_);
    sweepSetting_->setObjectName(QStringLiteral("benchSweepSetting"));
    sweepSetting_->addItem(QString()); // none
    for (const QString& name : BenchPlan::sweepableSettings())
        sweepSetting_->addItem(name, name);
    sweepValues_ = new QLineEdit(sweepBox_);
    sweepValues_->setObjectName(QStringLiteral("benchSweepValues"));
    percentiles_ = new QLineEdit(QStringLiteral("50, 90, 99"), sweepBox_);
    percentiles_->setObjectName(QStringLiteral("benchPercentiles"));
    s->addRow(label(sweepBox_), sweepSetting_);
    s->addRow(label(sweepBox_), sweepValues_);
    s->addRow(label(sweepBox_), percentiles_);
    v2->addWidget(sweepBox_);

    costBox_ = new QGroupBox(form);
    auto* c = new QFormLayout(costBox_);
    price_ = new QDoubleSpinBox(costBox_);
    price_->setObjectName(QStringLiteral("benchPrice"));
    price_->setRange(0, 1e6);
    price_->setDecimals(3);
    currency_ = new QLineEdit(costBox_);
    currency_->setObjectName(QStringLiteral("benchCurrency"));
    currency_->setMaxLength(8);
    c->addRow(label(costBox_), price_);
    c->addRow(label(costBox_), currency_);
    v2->addWidget(costBox_);
    v->addStretch(1);
    v2->addStretch(1);

    connect(preset_, &QComboBox::activated, this,
            [this](int i) { applyPreset(static_cast<Preset>(i)); });
    connect(source_, &QComboBox::currentIndexChanged, this, &BenchmarkPage::updateSourceWidgets);
    connect(sweepSetting_, &QComboBox::currentIndexChanged, this, [this] {
        sweepValues_->setEnabled(sweepSetting_->currentIndex() > 0);
        const QString setting = sweepSetting_->currentData().toString();
        static const QHash<QString, QString> examples{
            {QStringLiteral("gpu_memory_utilization"), QStringLiteral("0.1, 0.2, 0.3, 0.5")},
            {QStringLiteral("max_num_seqs"), QStringLiteral("1, 2, 4, 8, 16")},
            {QStringLiteral("max_num_batched_tokens"), QStringLiteral("128, 256, 512, 1024")},
            {QStringLiteral("block_size"), QStringLiteral("8, 16, 32")},
            {QStringLiteral("num_speculative_tokens"), QStringLiteral("0, 2, 4, 8")}};
        if (!setting.isEmpty())
            sweepValues_->setText(examples.value(setting));
    });
    connect(browse_, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Prompts (JSON Lines)"), {},
                                                       tr("JSON Lines (*.jsonl);;All files (*)"));
        if (!f.isEmpty())
            datasetPath_->setText(f);
    });
    connect(price_, &QDoubleSpinBox::valueChanged, this, &BenchmarkPage::savePrice);
    connect(currency_, &QLineEdit::editingFinished, this, &BenchmarkPage::savePrice);
    sweepValues_->setEnabled(false);
    updateSourceWidgets();
    // Fields may shrink below their size hints (a spin box's hint fits its largest value): the
    // two columns then fit the page at 1280x800 with the docks open.
    for (QWidget* w : form->findChildren<QWidget*>())
        if (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w) ||
            qobject_cast<QLineEdit*>(w))
            w->setMinimumWidth(std::min(w->minimumSizeHint().width(), 70));
    sweepSetting_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    sweepSetting_->setMinimumContentsLength(10);
}

void BenchmarkPage::savePrice() {
    settings_.setBenchPrice(price_->value(), currency_->text());
    runsModel_->setPrice(price_->value(), settings_.benchCurrency());
    compareView_->setPrice(price_->value(), settings_.benchCurrency());
}

void BenchmarkPage::updateSourceWidgets() {
    const int src = source_->currentIndex(); // 0 random, 1 JSONL, 2 conversations
    datasetPath_->setEnabled(src == 1);
    browse_->setEnabled(src == 1);
    for (QWidget* wdg : {static_cast<QWidget*>(numPrompts_), static_cast<QWidget*>(inputLen_),
                         static_cast<QWidget*>(rangeRatio_), static_cast<QWidget*>(prefixLen_)})
        wdg->setEnabled(src == 0);
}

void BenchmarkPage::retranslate() {
    preset_->setItemText(Custom, tr("Custom"));
    preset_->setItemText(LoadTest, tr("Load test: 16 requests at once"));
    preset_->setItemText(PolicyComparison, tr("Continuous vs static vs sequential"));
    preset_->setItemText(MaxNumSeqsSweep, tr("Throughput against max_num_seqs"));
    name_->setPlaceholderText(tr("optional"));
    workloadBox_->setTitle(tr("Workload"));
    source_->setItemText(0, tr("Random prompts (vLLM's random dataset)"));
    source_->setItemText(1, tr("Prompts from a JSONL file"));
    source_->setItemText(2, tr("My conversations' messages"));
    datasetPath_->setPlaceholderText(tr("prompts.jsonl"));
    browse_->setText(tr("Browse…"));
    requestRate_->setSpecialValueText(tr("all at once"));
    maxConcurrency_->setSpecialValueText(tr("no cap"));
    policyBox_->setTitle(tr("Policies (each runs the same workload)"));
    continuous_->setText(tr("Continuous batching"));
    static_->setText(tr("Static batches (padded)"));
    sequential_->setText(tr("Sequential (one request at a time)"));
    sweepBox_->setTitle(tr("Sweep and percentiles"));
    sweepSetting_->setItemText(0, tr("no sweep"));
    sweepValues_->setPlaceholderText(tr("values, e.g. 1, 2, 4, 8"));
    costBox_->setTitle(tr("Cost"));
    price_->setSpecialValueText(tr("not set"));
    const QStringList texts{tr("Preset:"),         tr("Name:"),
                            tr("Prompts:"),        tr("File:"),
                            tr("Requests:"),       tr("Input tokens:"),
                            tr("Output tokens:"),  tr("Range ratio:"),
                            tr("Shared prefix:"),  tr("Request rate (/s):"),
                            tr("Burstiness:"),     tr("Max concurrency:"),
                            tr("Seed:"),           tr("Sweep over:"),
                            tr("Values:"),         tr("Percentiles:"),
                            tr("Price per hour:"), tr("Currency:")};
    for (int i = 0; i < labels_.size() && i < texts.size(); ++i)
        labels_[i]->setText(texts[i]);
    price_->setToolTip(tr("What an hour of this GPU or machine costs you (or a hosted one "
                          "would): the cost of 1M tokens is price ÷ (tokens/s × 3,600) × 1M."));
    runButton_->setText(tr("Run"));
    cancelButton_->setText(tr("Cancel"));
    tabs_->setTabText(SetupTab, tr("Setup"));
    tabs_->setTabText(LiveTab, tr("Live"));
    tabs_->setTabText(RunsTab, tr("Runs"));
    tabs_->setTabText(CompareTab, tr("Compare"));
    compareButton_->setText(tr("Compare checked"));
    exportButton_->setText(tr("Export report…"));
    importButton_->setText(tr("Import report…"));
    deleteButton_->setText(tr("Delete checked"));
    if (!running_ && status_->text().isEmpty())
        status_->setText(tr("Runs use the loaded model with the Tuning dock's settings (and the "
                            "run's policy and sweep value); chats wait while a run is in "
                            "progress."));
    runsModel_->retranslate();
}

void BenchmarkPage::changeEvent(QEvent* e) {
    QWidget::changeEvent(e);
    if (e->type() == QEvent::LanguageChange) {
        status_->clear();
        retranslate();
    }
}

void BenchmarkPage::applyPreset(Preset preset) {
    preset_->setCurrentIndex(preset);
    if (preset == Custom)
        return;
    source_->setCurrentIndex(0);
    continuous_->setChecked(true);
    static_->setChecked(false);
    sequential_->setChecked(false);
    sweepSetting_->setCurrentIndex(0);
    requestRate_->setValue(0);
    maxConcurrency_->setValue(0);
    rangeRatio_->setValue(0);
    prefixLen_->setValue(0);
    switch (preset) {
    case LoadTest: // the Engine menu's load test: a burst that fills the batch
        name_->setText(tr("Load test"));
        numPrompts_->setValue(16);
        inputLen_->setValue(64);
        outputLen_->setValue(96);
        rangeRatio_->setValue(0.5);
        prefixLen_->setValue(32);
        break;
    case PolicyComparison:
        name_->clear();
        numPrompts_->setValue(16);
        inputLen_->setValue(64);
        outputLen_->setValue(64);
        rangeRatio_->setValue(0.5);
        static_->setChecked(true);
        sequential_->setChecked(true);
        break;
    case MaxNumSeqsSweep:
        name_->clear();
        numPrompts_->setValue(32);
        inputLen_->setValue(64);
        outputLen_->setValue(64);
        sweepSetting_->setCurrentIndex(
            int(BenchPlan::sweepableSettings().indexOf(QStringLiteral("max_num_seqs"))) + 1);
        sweepValues_->setText(QStringLiteral("1, 2, 4, 8, 16"));
        break;
    case Custom:
        break;
    }
}

BenchPlan BenchmarkPage::plan() const {
    BenchPlan p;
    p.name = name_->text().trimmed();
    BenchWorkload& w = p.workload;
    w.numPrompts = numPrompts_->value();
    w.inputLen = inputLen_->value();
    w.outputLen = outputLen_->value();
    w.rangeRatio = rangeRatio_->value();
    w.prefixLen = prefixLen_->value();
    w.requestRate = requestRate_->value();
    w.burstiness = burstiness_->value();
    w.maxConcurrency = maxConcurrency_->value();
    w.seed = quint64(seed_->value());
    if (source_->currentIndex() == 1)
        w.dataset = datasetPath_->text().trimmed();
    else if (source_->currentIndex() == 2)
        w.prompts = conversationPrompts_;
    p.policies.clear();
    if (continuous_->isChecked())
        p.policies << QStringLiteral("continuous");
    if (static_->isChecked())
        p.policies << QStringLiteral("static");
    if (sequential_->isChecked())
        p.policies << QStringLiteral("sequential");
    p.sweepSetting = sweepSetting_->currentData().toString();
    if (!p.sweepSetting.isEmpty())
        p.sweepValues = parseNumbers(sweepValues_->text()).value_or(QVector<double>{});
    p.metricPercentiles = parseNumbers(percentiles_->text()).value_or(QVector<double>{-1});
    return p;
}

QString BenchmarkPage::run() {
    BenchPlan p = plan();
    QString why;
    if (source_->currentIndex() == 1 && p.workload.dataset.isEmpty())
        why = tr("Choose a JSONL file of prompts.");
    else if (source_->currentIndex() == 2 && p.workload.prompts.isEmpty())
        why = tr("Your conversations have no messages yet.");
    else if (!p.sweepSetting.isEmpty() && !parseNumbers(sweepValues_->text()))
        why = tr("The sweep values must be numbers separated by commas.");
    else if (!parseNumbers(percentiles_->text()))
        why = tr("The percentiles must be numbers separated by commas, e.g. 50, 90, 99.");
    if (why.isEmpty())
        why = controller_.start(p);
    if (!why.isEmpty()) {
        hint_->setText(why);
        hint_->setVisible(true);
        return why;
    }
    hint_->setVisible(false);
    live_->clear();
    tabs_->setCurrentIndex(LiveTab);
    setRunning(true);
    progress_->setValue(0);
    status_->setText(tr("Starting…"));
    return {};
}

void BenchmarkPage::cancel() {
    controller_.cancel();
    status_->setText(tr("Cancelling…"));
}

void BenchmarkPage::setRunning(bool running) {
    running_ = running;
    runButton_->setEnabled(!running);
    cancelButton_->setEnabled(running);
    progress_->setTextVisible(running);
}

void BenchmarkPage::setConversationPrompts(const QStringList& prompts) {
    conversationPrompts_ = prompts;
}

void BenchmarkPage::onEngineView(const EngineView& view) {
    if (view.benchmarking)
        live_->addView(view);
}

void BenchmarkPage::onProgress(const BenchProgress& p) {
    const double done =
        (double(p.run) + (p.total > 0 ? double(p.completed) / double(p.total) : 0.0)) /
        double(std::max(1, p.runs));
    progress_->setValue(int(done * 1000));
    progress_->setFormat(QStringLiteral("%1%").arg(int(done * 100)));
    const QLocale loc;
    QString text = tr("Run %1 of %2: %3").arg(p.run + 1).arg(p.runs).arg(p.runName);
    if (p.total > 0)
        text += QLatin1Char('\n') +
                tr("%1 of %2 requests done").arg(loc.toString(p.completed), loc.toString(p.total));
    text += QLatin1Char('\n') +
            tr("Elapsed %1 · about %2 left").arg(duration(p.elapsedS), duration(p.etaS));
    if (!p.stage.isEmpty() && p.stage != tr("Running"))
        text += QLatin1Char('\n') + p.stage;
    status_->setText(text);
}

void BenchmarkPage::onRunStored(qint64 id) {
    // runsChanged (emitted first) refreshed the list.
    const int row = runsModel_->rowOf(id);
    if (row >= 0)
        runsView_->selectRow(row);
    showSummary(id);
}

void BenchmarkPage::onFinished(const QString& message) {
    setRunning(false);
    const QList<qint64> ids = controller_.planRuns();
    if (message.isEmpty()) {
        progress_->setValue(1000);
        status_->setText(tr("Done: %n run(s) stored.", nullptr, int(ids.size())));
    } else {
        status_->setText(
            tr("Stopped: %1 (%n run(s) stored).", nullptr, int(ids.size())).arg(message));
    }
    if (ids.size() >= 2) {
        runsModel_->setChecked(ids);
        compare(ids);
    } else {
        tabs_->setCurrentIndex(RunsTab);
    }
}

void BenchmarkPage::refreshRuns() {
    const qint64 current = runsView_->currentIndex().isValid()
                               ? runsModel_->entry(runsView_->currentIndex().row()).id
                               : 0;
    runsModel_->setRuns(controller_.store().runs());
    runsView_->resizeColumnsToContents();
    for (int c : {int(BenchRunsModel::Name), int(BenchRunsModel::Model)}) // long names elide
        runsView_->setColumnWidth(c, std::min(runsView_->columnWidth(c), 220));
    if (const int row = runsModel_->rowOf(current); row >= 0)
        runsView_->selectRow(row);
    else if (runsModel_->rowCount() > 0) // the newest run's figures, not an empty pane
        runsView_->selectRow(0);
}

void BenchmarkPage::showSummary(qint64 id) {
    const auto stored = controller_.store().run(id);
    if (!stored) {
        summary_->setPlainText(controller_.store().lastError());
        return;
    }
    QString text = QString::fromStdString(run_summary_text(stored->run));
    if (!stored->run.error.empty())
        text.prepend(
            tr("%1: %2").arg(QString::fromStdString(bench_run_status_name(stored->run.status)),
                             QString::fromStdString(stored->run.error)) +
            QStringLiteral("\n\n"));
    summary_->setPlainText(text);
}

void BenchmarkPage::compare(const QList<qint64>& ids) {
    QList<StoredBenchRun> runs;
    for (qint64 id : ids)
        if (auto r = controller_.store().run(id))
            runs << *r;
    compareView_->setRuns(runs);
    tabs_->setCurrentIndex(CompareTab);
}

QString BenchmarkPage::exportRuns(const QList<qint64>& ids, const QString& path) {
    const QString title =
        name_->text().trimmed().isEmpty() ? tr("Benchmark report") : name_->text().trimmed();
    return controller_.exportReport(ids, path, title);
}

QString BenchmarkPage::importReport(const QString& path) {
    QString error;
    const QList<qint64> ids = controller_.importReport(path, &error);
    if (!error.isEmpty())
        return error;
    refreshRuns();
    runsModel_->setChecked(ids);
    tabs_->setCurrentIndex(RunsTab);
    if (!ids.isEmpty())
        onRunStored(ids.front());
    return {};
}

} // namespace llmwb
