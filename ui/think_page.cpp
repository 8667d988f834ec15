#include "ui/think_page.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QColor>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QListWidget>
#include <QLocale>
#include <QMap>
#include <QPainter>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>

#include "app/services/think_controller.h"

namespace llmwb {

namespace {

using tj = nlohmann::ordered_json;

QString thinkPageText(const tj& j, const char* key) {
    const auto it = j.is_object() ? j.find(key) : j.end();
    if (it == j.end())
        return {};
    if (it->is_string())
        return QString::fromStdString(it->get<std::string>());
    if (it->is_number_integer())
        return QString::number(it->get<qint64>());
    if (it->is_number())
        return QString::number(it->get<double>(), 'g', 6);
    return {};
}

double thinkPageNumber(const tj& j, const char* key) {
    const auto it = j.is_object() ? j.find(key) : j.end();
    return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

const tj& thinkPageArray(const tj& j, const char* key) {
    static const tj none = tj::array();
    const auto it = j.is_object() ? j.find(key) : j.end();
    return it != j.end() && it->is_array() ? *it : none;
}

constexpr int kSampleCounts[] = {1, 2, 4, 8, 16};

} // namespace

ThinkPage::ThinkPage(ThinkController& controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
    auto* split = new QSplitter(Qt::Horizontal, this);
    auto* scroll = new QScrollArea(split);
    scroll->setWidgetResizable(true);
    scroll->setWidget(buildForm());
    scroll->setMinimumWidth(300);

    auto* right = new QSplitter(Qt::Vertical, split);
    auto* top = new QWidget(right);
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    auto* axisRow = new QHBoxLayout;
    xAxisLabel_ = new QLabel(top);
    xAxis_ = new QComboBox(top);
    xAxis_->setObjectName(QStringLiteral("thinkXAxis"));
    xAxis_->addItems({QString(), QString(), QString()});
    axisRow->addWidget(xAxisLabel_);
    axisRow->addWidget(xAxis_);
    axisRow->addStretch();
    topLayout->addLayout(axisRow);
    chart_ = new QChart;
    chart_->setAnimationOptions(QChart::NoAnimation);
    chartView_ = new QChartView(chart_, top);
    chartView_->setRenderHint(QPainter::Antialiasing);
    chartView_->setMinimumHeight(280); // room for the axis labels under a title and legend
    topLayout->addWidget(chartView_);

    tabs_ = new QTabWidget(right);
    auto* qPage = new QWidget(tabs_);
    auto* qLayout = new QVBoxLayout(qPage);
    auto* rungRow = new QHBoxLayout;
    rungLabel_ = new QLabel(qPage);
    rungBox_ = new QComboBox(qPage);
    rungBox_->setObjectName(QStringLiteral("thinkRungBox"));
    rungRow->addWidget(rungLabel_);
    rungRow->addWidget(rungBox_);
    rungRow->addStretch();
    qLayout->addLayout(rungRow);
    auto* qSplit = new QSplitter(Qt::Vertical, qPage); // the table, then its samples
    questions_ = new QTableWidget(0, 7, qSplit);
    questions_->setObjectName(QStringLiteral("thinkQuestions"));
    questions_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    questions_->setSelectionBehavior(QAbstractItemView::SelectRows);
    questions_->setSelectionMode(QAbstractItemView::SingleSelection);
    questions_->verticalHeader()->hide();
    questions_->horizontalHeader()->setStretchLastSection(true);
    samples_ = new QPlainTextEdit(qSplit);
    samples_->setObjectName(QStringLiteral("thinkSamples"));
    samples_->setReadOnly(true);
    qSplit->setStretchFactor(0, 3);
    qSplit->setStretchFactor(1, 2);
    qLayout->addWidget(qSplit);
    tabs_->addTab(qPage, QString());

    auto* runsPage = new QWidget(tabs_);
    auto* runsLayout = new QVBoxLayout(runsPage);
    runs_ = new QListWidget(runsPage);
    runs_->setObjectName(QStringLiteral("thinkRuns"));
    runsLayout->addWidget(runs_);
    auto* runButtons = new QHBoxLayout;
    export_ = new QPushButton(runsPage);
    delete_ = new QPushButton(runsPage);
    runButtons->addWidget(export_);
    runButtons->addWidget(delete_);
    runButtons->addStretch();
    runsLayout->addLayout(runButtons);
    tabs_->addTab(runsPage, QString());
    right->setStretchFactor(0, 1);
    right->setStretchFactor(1, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({345, 655}); // the form narrow, the curve and the questions wide

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(split);

    connect(&controller_, &ThinkController::progress, this, &ThinkPage::onProgress);
    connect(&controller_, &ThinkController::finished, this, &ThinkPage::onFinished);
    connect(&controller_, &ThinkController::runsChanged, this, &ThinkPage::refreshRuns);
    connect(xAxis_, &QComboBox::currentIndexChanged, this, [this] {
        plot(thinkPageArray(shown_, "rungs"), thinkPageNumber(shown_, "price_per_hour"));
    });
    connect(rungBox_, &QComboBox::currentIndexChanged, this, &ThinkPage::showQuestions);
    connect(questions_, &QTableWidget::itemSelectionChanged, this, &ThinkPage::showSamples);
    connect(runs_, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row < 0 || running_)
            return;
        const qint64 id = runs_->item(row)->data(Qt::UserRole).toLongLong();
        if (auto r = controller_.store().run(id))
            showRun(*r);
        else
            status_->setText(controller_.store().lastError());
    });
    connect(export_, &QPushButton::clicked, this, &ThinkPage::exportRequested);
    connect(delete_, &QPushButton::clicked, this, [this] {
        if (QListWidgetItem* it = runs_->currentItem())
            if (controller_.store().deleteRun(it->data(Qt::UserRole).toLongLong()))
                refreshRuns();
    });
    retranslate();
    refreshRuns();
    updateWidgets();
    plot(tj::array(), 0);
}

QWidget* ThinkPage::buildForm() {
    auto* form = new QWidget;
    auto* v = new QVBoxLayout(form);

    tasksBox_ = new QGroupBox(form);
    auto* tf = new QFormLayout(tasksBox_);
    taskSetLabel_ = new QLabel(tasksBox_);
    taskSet_ = new QComboBox(tasksBox_);
    taskSet_->setObjectName(QStringLiteral("thinkTaskSet"));
    taskSet_->addItems({QString(), QString(), QString()});
    tf->addRow(taskSetLabel_, taskSet_);
    levelLabel_ = new QLabel(tasksBox_);
    level_ = new QSpinBox(tasksBox_);
    level_->setRange(1, 5);
    level_->setValue(2);
    tf->addRow(levelLabel_, level_);
    countLabel_ = new QLabel(tasksBox_);
    count_ = new QSpinBox(tasksBox_);
    count_->setRange(1, ThinkPlan::kMaxCount);
    count_->setValue(8);
    tf->addRow(countLabel_, count_);
    seedLabel_ = new QLabel(tasksBox_);
    taskSeed_ = new QSpinBox(tasksBox_);
    taskSeed_->setRange(0, 1000000);
    taskSeed_->setValue(1);
    tf->addRow(seedLabel_, taskSeed_);
    fileLabel_ = new QLabel(tasksBox_);
    auto* fileRow = new QHBoxLayout;
    taskFile_ = new QLineEdit(tasksBox_);
    taskFile_->setObjectName(QStringLiteral("thinkTaskFile"));
    browse_ = new QPushButton(tasksBox_);
    fileRow->addWidget(taskFile_);
    fileRow->addWidget(browse_);
    tf->addRow(fileLabel_, fileRow);
    v->addWidget(tasksBox_);

    ladderBox_ = new QGroupBox(form);
    auto* lf = new QFormLayout(ladderBox_);
    samplesLabel_ = new QLabel(ladderBox_);
    auto* sampleRow = new QHBoxLayout;
    for (int n : kSampleCounts) {
        auto* c = new QCheckBox(QString::number(n), ladderBox_);
        c->setObjectName(QStringLiteral("thinkSamples%1").arg(n));
        c->setChecked(n <= 8);
        sampleRow->addWidget(c);
        sampleChecks_ << c;
    }
    lf->addRow(samplesLabel_, sampleRow);
    thinkOn_ = new QCheckBox(ladderBox_);
    thinkOn_->setObjectName(QStringLiteral("thinkBudgetsOn"));
    budgets_ = new QLineEdit(QStringLiteral("0,256,1024,4096"), ladderBox_);
    lf->addRow(thinkOn_, budgets_);
    thinkReason_ = new QLabel(ladderBox_);
    thinkReason_->setWordWrap(true);
    thinkReason_->setEnabled(false);
    lf->addRow(thinkReason_);
    beamOn_ = new QCheckBox(ladderBox_);
    beamOn_->setObjectName(QStringLiteral("thinkBeamOn"));
    beams_ = new QLineEdit(QStringLiteral("2,4"), ladderBox_);
    lf->addRow(beamOn_, beams_);
    v->addWidget(ladderBox_);

    samplingBox_ = new QGroupBox(form);
    auto* sf = new QFormLayout(samplingBox_);
    maxTokensLabel_ = new QLabel(samplingBox_);
    maxTokens_ = new QSpinBox(samplingBox_);
    maxTokens_->setRange(1, 8192);
    maxTokens_->setValue(64);
    sf->addRow(maxTokensLabel_, maxTokens_);
    temperatureLabel_ = new QLabel(samplingBox_);
    temperature_ = new QDoubleSpinBox(samplingBox_);
    temperature_->setRange(0, 2);
    temperature_->setSingleStep(0.1);
    temperature_->setValue(0.8);
    sf->addRow(temperatureLabel_, temperature_);
    sampleSeedLabel_ = new QLabel(samplingBox_);
    sampleSeed_ = new QSpinBox(samplingBox_);
    sampleSeed_->setRange(0, 1000000);
    sampleSeed_->setValue(1);
    sf->addRow(sampleSeedLabel_, sampleSeed_);
    priceLabel_ = new QLabel(samplingBox_);
    price_ = new QDoubleSpinBox(samplingBox_);
    price_->setRange(0, 100000);
    price_->setDecimals(2);
    price_->setValue(2.0);
    sf->addRow(priceLabel_, price_);
    v->addWidget(samplingBox_);

    auto* buttons = new QHBoxLayout;
    start_ = new QPushButton(form);
    start_->setObjectName(QStringLiteral("thinkStart"));
    cancel_ = new QPushButton(form);
    cancel_->setObjectName(QStringLiteral("thinkCancel"));
    buttons->addWidget(start_);
    buttons->addWidget(cancel_);
    v->addLayout(buttons);
    progress_ = new QProgressBar(form);
    progress_->setObjectName(QStringLiteral("thinkProgress"));
    progress_->setRange(0, 100);
    progress_->setValue(0);
    v->addWidget(progress_);
    status_ = new QLabel(form);
    status_->setObjectName(QStringLiteral("thinkStatus"));
    status_->setWordWrap(true);
    v->addWidget(status_);
    v->addStretch();

    connect(taskSet_, &QComboBox::currentIndexChanged, this, &ThinkPage::updateWidgets);
    connect(thinkOn_, &QCheckBox::toggled, this, &ThinkPage::updateWidgets);
    connect(beamOn_, &QCheckBox::toggled, this, &ThinkPage::updateWidgets);
    connect(browse_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Task file"), {}, tr("JSON Lines (*.jsonl);;All files (*)"));
        if (!path.isEmpty())
            taskFile_->setText(path);
    });
    connect(start_, &QPushButton::clicked, this, [this] { run(); });
    connect(cancel_, &QPushButton::clicked, this, &ThinkPage::cancel);
    return form;
}

void ThinkPage::retranslate() {
    tasksBox_->setTitle(tr("Tasks"));
    taskSetLabel_->setText(tr("Task set:"));
    taskSet_->setItemText(0, tr("Generated arithmetic (multi-step)"));
    taskSet_->setItemText(1, tr("Generated logic (ordering)"));
    taskSet_->setItemText(2, tr("My JSONL file of questions and answers"));
    levelLabel_->setText(tr("Difficulty level:"));
    countLabel_->setText(tr("Questions:"));
    seedLabel_->setText(tr("Task seed:"));
    fileLabel_->setText(tr("Task file:"));
    taskFile_->setPlaceholderText(tr("{\"question\": \"…\", \"answer\": \"…\"} per line"));
    browse_->setText(tr("Browse…"));
    ladderBox_->setTitle(tr("Ladder of budgets"));
    samplesLabel_->setText(tr("Samples (vote):"));
    thinkOn_->setText(tr("Thinking budgets:"));
    beamOn_->setText(tr("Beam widths:"));
    budgets_->setToolTip(tr("Thinking tokens before </think> is forced, comma-separated "
                            "(0 to 4,096 and up to 32,768)."));
    beams_->setToolTip(tr("Beam search widths, comma-separated (1 to 16)."));
    samplingBox_->setTitle(tr("Sampling and cost"));
    maxTokensLabel_->setText(tr("Max tokens per answer:"));
    temperatureLabel_->setText(tr("Temperature:"));
    sampleSeedLabel_->setText(tr("Sampling seed:"));
    priceLabel_->setText(tr("Price per hour:"));
    price_->setToolTip(tr("What an hour of this machine costs you (for the cost axis)."));
    start_->setText(tr("Run ladder"));
    cancel_->setText(tr("Cancel"));
    xAxisLabel_->setText(tr("Accuracy against:"));
    xAxis_->setItemText(0, tr("Tokens per question"));
    xAxis_->setItemText(1, tr("Wall time per question (s)"));
    xAxis_->setItemText(2, tr("Cost per question"));
    rungLabel_->setText(tr("Rung:"));
    tabs_->setTabText(0, tr("Questions"));
    tabs_->setTabText(1, tr("Runs"));
    export_->setText(tr("Export report…"));
    delete_->setText(tr("Delete run"));
    questions_->setHorizontalHeaderLabels({tr("#"), tr("Question"), tr("Expected"), tr("Vote"),
                                           tr("Correct"), tr("Answers"), tr("Agreement")});
    updateWidgets();
    plot(thinkPageArray(shown_, "rungs"), thinkPageNumber(shown_, "price_per_hour"));
    showQuestions();
}

void ThinkPage::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(e);
}

void ThinkPage::setModel(bool loaded, bool hasThinkTokens) {
    modelLoaded_ = loaded;
    hasThink_ = hasThinkTokens;
    if (!hasThink_)
        thinkOn_->setChecked(false);
    updateWidgets();
}

void ThinkPage::updateWidgets() {
    const bool file = taskSet_->currentIndex() == 2;
    const bool idle = !running_;
    level_->setEnabled(idle && !file);
    taskSeed_->setEnabled(idle && !file);
    taskFile_->setEnabled(idle && file);
    browse_->setEnabled(idle && file);
    thinkOn_->setEnabled(idle && hasThink_);
    budgets_->setEnabled(idle && hasThink_ && thinkOn_->isChecked());
    thinkReason_->setVisible(!hasThink_);
    thinkReason_->setText(
        modelLoaded_ ? tr("This model has no <think> tokens: thinking budgets do not apply.")
                     : tr("Load a model with <think> tokens (Qwen3) for thinking budgets."));
    beams_->setEnabled(idle && beamOn_->isChecked());
    start_->setEnabled(idle && modelLoaded_);
    cancel_->setEnabled(running_);
    start_->setToolTip(modelLoaded_ ? QString() : tr("Load a model first."));
}

ThinkPlan ThinkPage::plan() const {
    ThinkPlan p;
    const int kind = taskSet_->currentIndex();
    p.taskKind = kind == 0   ? QStringLiteral("arith")
                 : kind == 1 ? QStringLiteral("logic")
                             : QStringLiteral("file");
    p.level = level_->value();
    p.count = count_->value();
    p.taskSeed = quint64(taskSeed_->value());
    p.taskFile = taskFile_->text().trimmed();
    QStringList parts, ns;
    for (QCheckBox* c : sampleChecks_)
        if (c->isChecked())
            ns << c->text();
    if (!ns.isEmpty())
        parts << QStringLiteral("n=") + ns.join(QLatin1Char(','));
    if (hasThink_ && thinkOn_->isChecked())
        parts << QStringLiteral("think=") + budgets_->text().remove(QLatin1Char(' '));
    if (beamOn_->isChecked())
        parts << QStringLiteral("beam=") + beams_->text().remove(QLatin1Char(' '));
    p.ladder = parts.join(QLatin1Char(';'));
    p.temperature = temperature_->value();
    p.maxTokens = maxTokens_->value();
    p.seed = quint64(sampleSeed_->value());
    p.pricePerHour = price_->value();
    return p;
}

QString ThinkPage::run() {
    const QString why = controller_.start(plan());
    if (!why.isEmpty()) {
        status_->setText(why);
        return why;
    }
    setRunning(true);
    progress_->setValue(0);
    status_->setText(tr("Starting…"));
    shown_ = tj::object();
    shown_["price_per_hour"] = price_->value();
    plot(tj::array(), price_->value());
    return {};
}

void ThinkPage::cancel() {
    controller_.cancel();
    status_->setText(tr("Cancelling…"));
}

void ThinkPage::setRunning(bool running) {
    running_ = running;
    tasksBox_->setEnabled(!running);
    samplingBox_->setEnabled(!running);
    for (QCheckBox* c : sampleChecks_)
        c->setEnabled(!running);
    beamOn_->setEnabled(!running);
    updateWidgets();
}

void ThinkPage::onProgress(const ThinkProgress& p) {
    const double perRung = p.rungs > 0 ? 100.0 / p.rungs : 0;
    const double within = p.questions > 0 ? double(p.questionsDone) / p.questions : 0;
    progress_->setValue(
        int(perRung * (int(p.done.size()) + (int(p.done.size()) > p.rung ? 0.0 : within))));
    status_->setText(tr("Rung %1 of %2 (%3): %4 of %5 questions · %6 s")
                         .arg(std::min(p.rung + 1, p.rungs))
                         .arg(p.rungs)
                         .arg(p.rungLabel)
                         .arg(p.questionsDone)
                         .arg(p.questions)
                         .arg(QLocale().toString(p.elapsedS, 'f', 1)));
    plot(p.done, price_->value());
}

void ThinkPage::onFinished(const tj& run, qint64 storedId) {
    setRunning(false);
    const QString st = thinkPageText(run, "status");
    const QString err = thinkPageText(run, "error");
    if (st == QLatin1String("completed")) {
        progress_->setValue(100);
        status_->setText(
            tr("Done in %1 s.").arg(QLocale().toString(thinkPageNumber(run, "wall_s"), 'f', 1)));
    } else if (st == QLatin1String("cancelled")) {
        status_->setText(tr("Cancelled; the rungs done so far are kept."));
    } else {
        status_->setText(tr("Failed: %1").arg(err));
    }
    if (run.contains("rungs"))
        showRun(run);
    if (storedId > 0)
        for (int i = 0; i < runs_->count(); ++i)
            if (runs_->item(i)->data(Qt::UserRole).toLongLong() == storedId) {
                const QSignalBlocker block(runs_);
                runs_->setCurrentRow(i);
            }
}

void ThinkPage::showRun(const tj& run) {
    shown_ = run;
    plot(thinkPageArray(run, "rungs"), thinkPageNumber(run, "price_per_hour"));
    const QSignalBlocker block(rungBox_);
    rungBox_->clear();
    for (const tj& r : thinkPageArray(run, "rungs"))
        rungBox_->addItem(thinkPageText(r, "rung"));
    rungBox_->setCurrentIndex(rungBox_->count() - 1);
    showQuestions();
}

void ThinkPage::plot(const tj& rungs, double pricePerHour) {
    chart_->removeAllSeries();
    for (QAbstractAxis* a : chart_->axes()) {
        chart_->removeAxis(a);
        delete a;
    }
    const int axis = xAxis_->currentIndex();
    QMap<QString, QLineSeries*> byKind;
    const QStringList kinds = {QStringLiteral("n"), QStringLiteral("think"),
                               QStringLiteral("beam")};
    const QStringList names = {tr("Samples + vote"), tr("Thinking budget"), tr("Beam search")};
    double xMax = 0;
    for (const tj& r : rungs) {
        const QString kind = thinkPageText(r, "kind");
        const int k = int(kinds.indexOf(kind));
        if (k < 0)
            continue;
        QLineSeries*& s = byKind[kind];
        if (!s) {
            s = new QLineSeries;
            s->setName(names[k]);
            s->setPointsVisible(true);
        }
        const double msPerTask = thinkPageNumber(r, "ms_per_task");
        const double x = axis == 0   ? thinkPageNumber(r, "tokens_per_task")
                         : axis == 1 ? msPerTask / 1000.0
                                     : pricePerHour * msPerTask / 3.6e6;
        s->append(x, 100.0 * thinkPageNumber(r, "accuracy"));
        xMax = std::max(xMax, x);
    }
    auto* ax = new QValueAxis;
    auto* ay = new QValueAxis;
    ax->setTitleText(xAxis_->currentText());
    ax->setRange(0, xMax > 0 ? xMax * 1.1 : 1);
    ay->setTitleText(tr("Accuracy (%)"));
    ay->setRange(0, 100);
    chart_->addAxis(ax, Qt::AlignBottom);
    chart_->addAxis(ay, Qt::AlignLeft);
    for (const QString& kind : kinds)
        if (QLineSeries* s = byKind.value(kind)) {
            chart_->addSeries(s);
            s->attachAxis(ax);
            s->attachAxis(ay);
        }
    chart_->setTitle(rungs.empty() ? tr("Run a ladder to see accuracy against compute")
                                   : tr("Test-time scaling on this model"));
}

void ThinkPage::showQuestions() {
    questions_->setRowCount(0);
    samples_->clear();
    const tj& rungs = thinkPageArray(shown_, "rungs");
    const tj& tasks = thinkPageArray(shown_, "tasks");
    const int r = rungBox_->currentIndex();
    if (r < 0 || size_t(r) >= rungs.size())
        return;
    const tj& qs = thinkPageArray(rungs[size_t(r)], "questions");
    questions_->setRowCount(int(qs.size()));
    for (size_t i = 0; i < qs.size(); ++i) {
        const tj& q = qs[i];
        const int task = int(thinkPageNumber(q, "task"));
        const tj& t = task >= 0 && size_t(task) < tasks.size() ? tasks[size_t(task)] : tj();
        const tj& ss = thinkPageArray(q, "samples");
        // The answers and how many samples gave each (in the order first seen).
        QStringList order;
        QMap<QString, int> votes;
        int none = 0;
        for (const tj& s : ss) {
            const QString a = thinkPageText(s, "answer");
            if (a.isEmpty() && !(s.contains("answer") && s["answer"].is_string())) {
                ++none;
                continue;
            }
            if (!votes.contains(a))
                order << a;
            ++votes[a];
        }
        QStringList answers;
        for (const QString& a : order)
            answers << QStringLiteral("%1 ×%2").arg(a).arg(votes[a]);
        if (none > 0)
            answers << tr("no answer ×%1").arg(none);
        const bool tie = q.contains("tie") && q["tie"].is_boolean() && q["tie"].get<bool>();
        QString agreement;
        if (ss.size() <= 1)
            agreement = tr("one sample");
        else if (order.size() == 1 && none == 0)
            agreement = tr("unanimous");
        else if (order.isEmpty())
            agreement = tr("no answers");
        else if (tie)
            agreement = tr("tie");
        else
            agreement = tr("split");
        const bool correct =
            q.contains("correct") && q["correct"].is_boolean() && q["correct"].get<bool>();
        const QString vote = thinkPageText(q, "vote");
        const QStringList cells = {
            QString::number(task + 1),
            thinkPageText(t, "question"),
            thinkPageText(t, "answer"),
            vote.isEmpty()
                ? tr("(none)")
                : QStringLiteral("%1 (%2/%3)").arg(vote, thinkPageText(q, "votes")).arg(ss.size()),
            correct ? tr("yes") : tr("no"),
            answers.join(QStringLiteral(", ")),
            agreement};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c == 1)
                item->setToolTip(cells[c]);
            if (agreement == tr("split") || agreement == tr("tie"))
                item->setBackground(QColor(255, 200, 80, 70)); // where the samples disagreed
            questions_->setItem(int(i), c, item);
        }
    }
    questions_->resizeColumnsToContents();
    questions_->setColumnWidth(1, std::min(questions_->columnWidth(1), 320));
    if (questions_->rowCount() > 0)
        questions_->selectRow(0);
}

void ThinkPage::showSamples() {
    samples_->clear();
    const tj& rungs = thinkPageArray(shown_, "rungs");
    const int r = rungBox_->currentIndex();
    const int row = questions_->currentRow();
    if (r < 0 || size_t(r) >= rungs.size() || row < 0)
        return;
    const tj& qs = thinkPageArray(rungs[size_t(r)], "questions");
    if (size_t(row) >= qs.size())
        return;
    QString text;
    const tj& ss = thinkPageArray(qs[size_t(row)], "samples");
    for (size_t i = 0; i < ss.size(); ++i) {
        const QString a = thinkPageText(ss[i], "answer");
        text += tr("Sample %1 (%2 tokens) → %3")
                    .arg(i + 1)
                    .arg(thinkPageText(ss[i], "tokens"), a.isEmpty() ? tr("no answer") : a);
        text +=
            QStringLiteral("\n") + thinkPageText(ss[i], "text").trimmed() + QStringLiteral("\n\n");
    }
    samples_->setPlainText(text);
}

void ThinkPage::refreshRuns() {
    const QSignalBlocker block(runs_);
    const qint64 current = runs_->currentItem()
                               ? runs_->currentItem()->data(Qt::UserRole).toLongLong()
                               : controller_.lastRun();
    runs_->clear();
    for (const ThinkRunEntry& e : controller_.store().runs()) {
        auto* item =
            new QListWidgetItem(QStringLiteral("%1 · %2 · %3 · %4 · %5")
                                    .arg(QLocale().toString(e.createdAt, QLocale::ShortFormat),
                                         e.name, e.model, e.ladder, e.status),
                                runs_);
        item->setData(Qt::UserRole, e.id);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Unchecked);
        if (e.id == current)
            runs_->setCurrentItem(item);
    }
}

QList<qint64> ThinkPage::runsToExport() const {
    QList<qint64> ids;
    for (int i = 0; i < runs_->count(); ++i)
        if (runs_->item(i)->checkState() == Qt::Checked)
            ids << runs_->item(i)->data(Qt::UserRole).toLongLong();
    if (ids.isEmpty() && runs_->currentItem())
        ids << runs_->currentItem()->data(Qt::UserRole).toLongLong();
    return ids;
}

QString ThinkPage::exportRuns(const QString& path) {
    return controller_.exportReport(runsToExport(), {}, path, tr("Think harder report"));
}

} // namespace llmwb
