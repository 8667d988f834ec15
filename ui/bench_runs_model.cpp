#include "ui/bench_runs_model.h"

#include <QLocale>

#include "app/report/bench_report.h"

namespace llmwb {

BenchRunsModel::BenchRunsModel(QObject* parent) : QAbstractTableModel(parent) {}

void BenchRunsModel::setRuns(const QList<BenchRunEntry>& runs) {
    beginResetModel();
    runs_ = runs;
    QSet<qint64> still;
    for (const BenchRunEntry& e : runs_)
        if (checked_.contains(e.id))
            still.insert(e.id);
    checked_ = still;
    endResetModel();
}

void BenchRunsModel::setPrice(double perHour, const QString& currency) {
    price_ = perHour;
    currency_ = currency;
    if (!runs_.isEmpty())
        emit dataChanged(index(0, CostPerMillion), index(rowCount() - 1, CostPerMillion));
}

int BenchRunsModel::rowOf(qint64 id) const {
    for (int i = 0; i < runs_.size(); ++i)
        if (runs_[i].id == id)
            return i;
    return -1;
}

QList<qint64> BenchRunsModel::checkedIds() const {
    QList<qint64> ids;
    for (const BenchRunEntry& e : runs_)
        if (checked_.contains(e.id))
            ids << e.id;
    return ids;
}

void BenchRunsModel::setChecked(const QList<qint64>& ids) {
    checked_ = QSet<qint64>(ids.begin(), ids.end());
    if (!runs_.isEmpty())
        emit dataChanged(index(0, Name), index(rowCount() - 1, Name), {Qt::CheckStateRole});
}

int BenchRunsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(runs_.size());
}

int BenchRunsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant BenchRunsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= runs_.size())
        return {};
    const BenchRunEntry& e = runs_[index.row()];
    const QLocale loc;
    if (role == IdRole)
        return e.id;
    if (role == Qt::CheckStateRole && index.column() == Name)
        return checked_.contains(e.id) ? Qt::Checked : Qt::Unchecked;
    if (role == Qt::TextAlignmentRole && index.column() >= OutputTps && index.column() <= Requests)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole) {
        if (!e.error.isEmpty())
            return e.error;
        if (index.column() == CostPerMillion)
            return price_ > 0 ? tr("Price per hour ÷ (output tokens/s × 3,600) × 1,000,000")
                              : tr("Set a price per hour to see the cost.");
        return {};
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Name:
        return e.name;
    case Model:
        return e.model;
    case Status:
        return e.status == QLatin1String("completed")   ? tr("completed")
               : e.status == QLatin1String("cancelled") ? tr("cancelled")
               : e.status == QLatin1String("failed")    ? tr("failed")
                                                        : e.status;
    case Policy:
        return e.policy;
    case Sweep:
        return e.sweepSetting.isEmpty()
                   ? QString()
                   : QStringLiteral("%1 = %2").arg(e.sweepSetting, loc.toString(e.sweepValue));
    case Requests:
        return QStringLiteral("%1/%2").arg(loc.toString(e.completed), loc.toString(e.numPrompts));
    case OutputTps:
        return loc.toString(e.outputThroughput, 'f', 1);
    case RequestTps:
        return loc.toString(e.requestThroughput, 'f', 2);
    case MeanTtft:
        return loc.toString(e.meanTtftMs, 'f', 1);
    case MeanTpot:
        return loc.toString(e.meanTpotMs, 'f', 2);
    case CostPerMillion: {
        const double c = cost_per_million_tokens(price_, e.outputThroughput);
        return price_ > 0 && c > 0 ? currency_ + loc.toString(c, 'f', c < 10 ? 3 : 2) : QString();
    }
    case Source:
        return e.importedFrom.isEmpty() ? tr("this machine")
                                        : tr("imported: %1").arg(e.importedFrom);
    case Date:
        return loc.toString(e.createdAt, QLocale::ShortFormat);
    }
    return {};
}

bool BenchRunsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || index.column() != Name || role != Qt::CheckStateRole)
        return false;
    const qint64 id = runs_[index.row()].id;
    if (value.toInt() == Qt::Checked)
        checked_.insert(id);
    else
        checked_.remove(id);
    emit dataChanged(index, index, {Qt::CheckStateRole});
    return true;
}

QVariant BenchRunsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Name:
        return tr("Run");
    case Model:
        return tr("Model");
    case Status:
        return tr("Status");
    case Policy:
        return tr("Policy");
    case Sweep:
        return tr("Sweep");
    case Requests:
        return tr("Requests");
    case OutputTps:
        return tr("Output tok/s");
    case RequestTps:
        return tr("Req/s");
    case MeanTtft:
        return tr("Mean TTFT (ms)");
    case MeanTpot:
        return tr("Mean TPOT (ms)");
    case CostPerMillion:
        return tr("Cost / 1M output");
    case Source:
        return tr("Source");
    case Date:
        return tr("Date");
    }
    return {};
}

Qt::ItemFlags BenchRunsModel::flags(const QModelIndex& index) const {
    Qt::ItemFlags f = QAbstractTableModel::flags(index);
    if (index.column() == Name)
        f |= Qt::ItemIsUserCheckable;
    return f;
}

void BenchRunsModel::retranslate() {
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!runs_.isEmpty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

} // namespace llmwb
