// Two or more benchmark runs side by side (the Benchmark page's Compare tab): a table of every
// figure per run with its difference from the first run in percent (green when better, red when
// worse), the cost of 1M output and of 1M total tokens at the user's price per hour, what each
// ran on; and a chart: for runs of one sweep the output throughput and mean TTFT against the
// swept setting, otherwise the runs' output tokens/s over time, overlaid.
#pragma once

#include <QList>
#include <QWidget>

#include "app/services/bench_store.h"

class QChart;
class QChartView;
class QLabel;
class QTableWidget;

namespace llmwb {

class BenchCompareView : public QWidget {
    Q_OBJECT

  public:
    explicit BenchCompareView(QWidget* parent = nullptr);

    void setRuns(const QList<StoredBenchRun>& runs);
    void setPrice(double perHour, const QString& currency);
    QTableWidget* table() const { return table_; }
    QChart* chart() const { return chart_; }
    bool isSweepChart() const { return sweepChart_; }

  protected:
    void changeEvent(QEvent* e) override;

  private:
    void rebuild();

    QList<StoredBenchRun> runs_;
    double price_ = 0;
    QString currency_ = QStringLiteral("$");
    QLabel* hint_;
    QTableWidget* table_;
    QChart* chart_;
    QChartView* chartView_;
    bool sweepChart_ = false;
};

} // namespace llmwb
