#include "app/services/local_server_log.h"

#include <QLocale>

namespace llmwb {

LocalServerLog::LocalServerLog(QObject* parent) : QAbstractTableModel(parent) {}

void LocalServerLog::append(const LocalServerLogRow& row) {
    if (row.id != 0)
        for (int i = int(rows_.size()) - 1; i >= 0; --i)
            if (rows_[i].id == row.id) { // the end of a request whose start is shown
                rows_[i] = row;
                emit dataChanged(index(i, 0), index(i, ColumnCount - 1));
                return;
            }
    if (rows_.size() >= kMaxRows) {
        const int drop = int(rows_.size()) - kMaxRows + 1;
        beginRemoveRows({}, 0, drop - 1);
        rows_.remove(0, drop);
        endRemoveRows();
    }
    beginInsertRows({}, int(rows_.size()), int(rows_.size()));
    rows_.push_back(row);
    endInsertRows();
}

void LocalServerLog::clear() {
    beginResetModel();
    rows_.clear();
    endResetModel();
}

int LocalServerLog::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

int LocalServerLog::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LocalServerLog::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rows_.size())
        return {};
    const LocalServerLogRow& r = rows_[index.row()];
    const QLocale loc;
    if (role == Qt::ToolTipRole && index.column() == Client)
        return r.userAgent.isEmpty() ? r.clientAddress
                                     : QStringLiteral("%1:%2\n%3")
                                           .arg(r.clientAddress)
                                           .arg(r.clientPort)
                                           .arg(r.userAgent);
    if (role == Qt::TextAlignmentRole && index.column() >= Status && index.column() <= Duration)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Time:
        return loc.toString(r.time.toLocalTime().time(), QStringLiteral("HH:mm:ss"));
    case Client:
        return r.userAgent.isEmpty() ? r.clientAddress
                                     : QStringLiteral("%1 · %2").arg(r.clientAddress, r.userAgent);
    case Request:
        return r.method + QLatin1Char(' ') + r.path;
    case Status:
        return r.running ? QVariant() : QVariant(r.status);
    case PromptTokens:
        return r.promptTokens >= 0 ? loc.toString(r.promptTokens) : QString();
    case CompletionTokens:
        return r.completionTokens >= 0 ? loc.toString(r.completionTokens) : QString();
    case Duration:
        return r.durationMs > 0 ? tr("%1 ms").arg(loc.toString(r.durationMs, 'f', 0)) : QString();
    case Finish:
        return r.running ? tr("running") : r.finishReason;
    default:
        return {};
    }
}

QVariant LocalServerLog::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Time:
        return tr("Time");
    case Client:
        return tr("Client");
    case Request:
        return tr("Request");
    case Status:
        return tr("Status");
    case PromptTokens:
        return tr("Prompt");
    case CompletionTokens:
        return tr("Completion");
    case Duration:
        return tr("Duration");
    case Finish:
        return tr("Finish");
    default:
        return {};
    }
}

} // namespace llmwb
