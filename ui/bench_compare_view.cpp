#include "ui/bench_compare_view.h"

#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLocale>
#include <QMap>
#include <QPen>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <cmath>

#include "app/report/report_compare.h"

namespace llmwb {

namespace {

QString s(const std::string& v) {
    return QString::fromStdString(v);
}

// A value of the environment by its path of keys; "—" when absent.
QString envText(const nlohmann::ordered_json& env, std::initializer_list<const char*> path) {
    const nlohmann::ordered_json* j = &env;
    for (const char* k : path) {
        if (!j->is_object() || !j->contains(k))
            return QStringLiteral("—");
        j = &(*j)[k];
    }
    if (j->is_string())
        return s(j->get<std::string>());
    if (j->is_number() || j->is_boolean())
        return s(j->dump());
    return QStringLiteral("—");
}

} // namespace

BenchCompareView::BenchCompareView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    hint_ = new QLabel(this);
    hint_->setWordWrap(true);
    layout->addWidget(hint_);
    auto* split = new QSplitter(Qt::Vertical, this);
    table_ = new QTableWidget(split);
    table_->setObjectName(QStringLiteral("benchCompareTable"));
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->setVisible(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setWordWrap(false);
    table_->setTextElideMode(Qt::ElideRight);
    chart_ = new QChart;
    chart_->setAnimationOptions(QChart::NoAnimation);
    chart_->legend()->setAlignment(Qt::AlignBottom);
    chartView_ = new QChartView(chart_, split);
    chartView_->setRenderHint(QPainter::Antialiasing);
    chartView_->setMinimumHeight(260);
    split->addWidget(table_);
    split->addWidget(chartView_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);
    rebuild();
}

void BenchCompareView::setRuns(const QList<StoredBenchRun>& runs) {
    runs_ = runs;
    rebuild();
}

void BenchCompareView::setPrice(double perHour, const QString& currency) {
    price_ = perHour;
    currency_ = currency;
    rebuild();
}

void BenchCompareView::changeEvent(QEvent* e) {
    QWidget::changeEvent(e);
    if (e->type() == QEvent::LanguageChange)
        rebuild();
}

void BenchCompareView::rebuild() {
    const QLocale loc;
    table_->clear();
    table_->setRowCount(0);
    chart_->removeAllSeries();
    for (QAbstractAxis* a : chart_->axes())
        chart_->removeAxis(a);
    sweepChart_ = false;
    if (runs_.size() < 2) {
        hint_->setText(tr("Check two or more runs in the Runs tab and press Compare."));
        table_->setRowCount(0);
        table_->setColumnCount(0);
        chart_->setTitle({});
        return;
    }
    hint_->setText(tr("Differences are against the first run. Green: better; red: worse."));
    std::vector<const BenchRun*> runs;
    for (const StoredBenchRun& r : runs_)
        runs.push_back(&r.run);
    const std::vector<CompareRow> rows = compare_runs(runs);

    const int n = int(runs.size());
    table_->setColumnCount(n + 1);
    QStringList headers{tr("Figure")};
    for (const StoredBenchRun& r : runs_)
        headers << (r.entry.importedFrom.isEmpty()
                        ? s(r.run.name)
                        : tr("%1 (%2)").arg(s(r.run.name), r.entry.importedFrom));
    table_->setHorizontalHeaderLabels(headers);

    auto addRow = [&](const QString& label, const QStringList& cells, const QList<int>& signs = {},
                      bool text = false, int at = -1) {
        const int row = at >= 0 ? at : table_->rowCount();
        table_->insertRow(row);
        table_->setItem(row, 0, new QTableWidgetItem(label));
        for (int c = 0; c < n && c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setTextAlignment((text ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter);
            item->setToolTip(cells[c]);
            if (c < signs.size() && signs[c] != 0)
                item->setForeground(signs[c] > 0 ? QColor(0x1b, 0x8a, 0x3a)
                                                 : QColor(0xc6, 0x28, 0x28));
            table_->setItem(row, c + 1, item);
        }
    };
    auto cellOf = [&](const std::optional<double>& v, const std::optional<double>& d, int c,
                      bool higherBetter, int* sign, int decimals) {
        *sign = 0;
        if (!v)
            return QStringLiteral("—");
        QString text = loc.toString(*v, 'f', decimals);
        if (c > 0 && d) {
            text += QStringLiteral(" (%1%2%)")
                        .arg(*d >= 0 ? QStringLiteral("+") : QString())
                        .arg(loc.toString(*d, 'f', 1));
            if (std::abs(*d) >= 0.05)
                *sign = ((*d > 0) == higherBetter) ? 1 : -1;
        }
        return text;
    };
    for (const CompareRow& row : rows) {
        QStringList cells;
        QList<int> signs;
        for (int c = 0; c < n; ++c) {
            int sign = 0;
            const auto& v = c < int(row.values.size()) ? row.values[c] : std::nullopt;
            const auto& d = c < int(row.diff_pct.size()) ? row.diff_pct[c] : std::nullopt;
            const bool whole = v && std::floor(*v) == *v && std::abs(*v) < 1e12;
            cells << cellOf(v, d, c, row.higher_is_better, &sign, whole ? 0 : 2);
            signs << sign;
        }
        addRow(row.unit.empty() ? s(row.key)
                                : QStringLiteral("%1 (%2)").arg(s(row.key), s(row.unit)),
               cells, signs);
    }
    // Cost at the user's price.
    if (price_ > 0) {
        for (int kind = 0; kind < 2; ++kind) {
            QStringList cells;
            QList<int> signs;
            double first = 0;
            for (int c = 0; c < n; ++c) {
                const double tps = kind == 0 ? runs[c]->figures.output_throughput
                                             : runs[c]->figures.total_token_throughput;
                const double cost = cost_per_million_tokens(price_, tps);
                if (c == 0)
                    first = cost;
                QString text =
                    cost > 0 ? currency_ + loc.toString(cost, 'f', 3) : QStringLiteral("—");
                int sign = 0;
                if (c > 0 && first > 0 && cost > 0) {
                    const double d = (cost - first) / first * 100.0;
                    text += QStringLiteral(" (%1%2%)")
                                .arg(d >= 0 ? QStringLiteral("+") : QString())
                                .arg(loc.toString(d, 'f', 1));
                    if (std::abs(d) >= 0.05)
                        sign = d < 0 ? 1 : -1;
                }
                cells << text;
                signs << sign;
            }
            addRow(kind == 0 ? tr("Cost / 1M output tokens at %1%2/h")
                                   .arg(currency_, loc.toString(price_, 'f', 2))
                             : tr("Cost / 1M total tokens at %1%2/h")
                                   .arg(currency_, loc.toString(price_, 'f', 2)),
                   cells, signs);
        }
    }
    // What each run ran on.
    QStringList model, device, cpu, status;
    for (const StoredBenchRun& r : runs_) {
        model << s(r.run.model_id);
        device << envText(r.environment, {"device"});
        cpu << envText(r.environment, {"cpu_model"});
        status << s(bench_run_status_name(r.run.status));
    }
    // Sized by the figures; the text rows go on top afterwards (elided, tooltips hold them).
    table_->resizeColumnsToContents();
    addRow(tr("Model"), model, {}, true, 0);
    addRow(tr("Device"), device, {}, true, 1);
    addRow(tr("CPU"), cpu, {}, true, 2);
    addRow(tr("Status"), status, {}, true, 3);

    // The chart.
    bool oneSweep = !runs.front()->sweep_setting.empty();
    for (const BenchRun* r : runs)
        oneSweep = oneSweep && r->sweep_setting == runs.front()->sweep_setting;
    auto* x = new QValueAxis;
    auto* y = new QValueAxis;
    chart_->addAxis(x, Qt::AlignBottom);
    chart_->addAxis(y, Qt::AlignLeft);
    double xmax = 0, ymax = 0, xmin = 0;
    if (oneSweep) {
        // Throughput (solid, left axis) and mean TTFT (dashed, right axis) against the setting,
        // one pair of lines per policy (and per report a run came from).
        sweepChart_ = true;
        const QString setting = s(runs.front()->sweep_setting);
        chart_->setTitle(tr("Throughput and latency against %1").arg(setting));
        x->setTitleText(setting);
        y->setTitleText(tr("output tok/s"));
        auto* yt = new QValueAxis;
        yt->setTitleText(tr("TTFT (ms)"));
        chart_->addAxis(yt, Qt::AlignRight);
        double ttftMax = 0;
        QMap<QString, std::pair<QLineSeries*, QLineSeries*>> byPolicy;
        xmin = runs.front()->sweep_value;
        for (int c = 0; c < n; ++c) {
            const QString key =
                s(runs[c]->policy) + (runs_[c].entry.importedFrom.isEmpty()
                                          ? QString()
                                          : QStringLiteral(" · ") + runs_[c].entry.importedFrom);
            auto& lines = byPolicy[key];
            if (!lines.first) {
                lines.first = new QLineSeries;
                lines.first->setName(tr("%1: output tok/s").arg(key));
                lines.second = new QLineSeries;
                lines.second->setName(tr("%1: mean TTFT").arg(key));
                for (QLineSeries* l : {lines.first, lines.second}) {
                    l->setPointsVisible(true);
                    chart_->addSeries(l);
                    l->attachAxis(x);
                }
                lines.first->attachAxis(y);
                lines.second->attachAxis(yt);
                QPen dashed = lines.second->pen();
                dashed.setStyle(Qt::DashLine);
                dashed.setColor(lines.first->color());
                lines.second->setPen(dashed);
            }
            lines.first->append(runs[c]->sweep_value, runs[c]->figures.output_throughput);
            lines.second->append(runs[c]->sweep_value, runs[c]->figures.ttft_ms.mean);
            xmin = std::min(xmin, runs[c]->sweep_value);
            xmax = std::max(xmax, runs[c]->sweep_value);
            ymax = std::max(ymax, runs[c]->figures.output_throughput);
            ttftMax = std::max(ttftMax, runs[c]->figures.ttft_ms.mean);
        }
        for (const auto& lines : byPolicy) // in x order
            for (QLineSeries* line : {lines.first, lines.second}) {
                QList<QPointF> pts = line->points();
                std::sort(pts.begin(), pts.end(),
                          [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
                line->replace(pts);
            }
        yt->setRange(0, ttftMax > 0 ? ttftMax * 1.1 : 1);
        yt->applyNiceNumbers();
        yt->setLabelFormat(QStringLiteral("%.0f"));
    } else {
        chart_->setTitle(tr("Output tokens/s over time"));
        x->setTitleText(tr("seconds"));
        y->setTitleText(tr("tok/s"));
        for (int c = 0; c < n; ++c) {
            const BenchRun& r = *runs[c];
            const double duration = std::max(r.figures.duration_s, 1e-3);
            const double bin = std::max(0.1, duration / 60.0);
            const int bins = std::min(2000, int(std::ceil(duration / bin)) + 1);
            std::vector<double> tokens(size_t(bins), 0.0);
            for (const BenchStepRow& st : r.steps) {
                const int b = int(st.time_s / bin);
                if (b >= 0 && b < bins)
                    tokens[size_t(b)] += st.decode_tokens;
            }
            auto* line = new QLineSeries;
            line->setName(headers[c + 1]);
            for (int b = 0; b < bins; ++b) {
                const double tps = tokens[size_t(b)] / bin;
                line->append((b + 0.5) * bin, tps);
                ymax = std::max(ymax, tps);
            }
            xmax = std::max(xmax, bins * bin);
            chart_->addSeries(line);
            line->attachAxis(x);
            line->attachAxis(y);
        }
    }
    x->setRange(xmin, xmax > xmin ? xmax : xmin + 1);
    y->setRange(0, ymax > 0 ? ymax * 1.1 : 1);
    x->applyNiceNumbers();
    y->applyNiceNumbers();
    y->setLabelFormat(QStringLiteral("%.0f"));
    x->setLabelFormat(sweepChart_ && runs.front()->sweep_setting != "gpu_memory_utilization"
                          ? QStringLiteral("%.0f")
                          : QStringLiteral("%.2g"));
}

} // namespace llmwb
