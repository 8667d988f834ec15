// The Benchmark page's list of stored runs (newest first): name (checkable: the runs to compare
// or export), status, sweep point, throughputs, mean TTFT/TPOT, the cost of 1M output tokens at
// the user's price per hour, requests, policy, model, and where the run came from (this
// machine, or the report it was imported from). The figures come first: they are what is read.
#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <QSet>

#include "app/services/bench_store.h"

namespace llmwb {

class BenchRunsModel : public QAbstractTableModel {
    Q_OBJECT

  public:
    enum Column {
        Name,
        Status,
        Sweep,
        OutputTps,
        RequestTps,
        MeanTtft,
        MeanTpot,
        CostPerMillion,
        Requests,
        Policy,
        Model,
        Source,
        Date,
        ColumnCount
    };
    static constexpr int IdRole = Qt::UserRole + 1;

    explicit BenchRunsModel(QObject* parent = nullptr);

    void setRuns(const QList<BenchRunEntry>& runs); // keeps the checks of runs still there
    void setPrice(double perHour, const QString& currency);
    const BenchRunEntry& entry(int row) const { return runs_.at(row); }
    int rowOf(qint64 id) const;       // -1: not listed
    QList<qint64> checkedIds() const; // in list order
    void setChecked(const QList<qint64>& ids);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

    void retranslate(); // the headers and status names in the new language

  private:
    QList<BenchRunEntry> runs_;
    QSet<qint64> checked_;
    double price_ = 0;
    QString currency_ = QStringLiteral("$");
};

} // namespace llmwb
