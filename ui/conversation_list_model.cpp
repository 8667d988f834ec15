#include "ui/conversation_list_model.h"

#include "app/services/conversation_store.h"

namespace llmwb {

ConversationListModel::ConversationListModel(ConversationStore& store, QObject* parent)
    : QAbstractListModel(parent), store_(store) {
    reload();
}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Conversation& c = rows_.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return c.title.isEmpty() ? tr("New chat") : c.title;
    case Qt::ToolTipRole:
        return tr("%1\nUpdated %2")
            .arg(c.title.isEmpty() ? tr("New chat") : c.title,
                 QLocale().toString(c.updated, QLocale::ShortFormat));
    case IdRole:
        return c.id;
    case UpdatedRole:
        return c.updated;
    case ModelRole:
        return c.model;
    default:
        return {};
    }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    auto names = QAbstractListModel::roleNames();
    names.insert(IdRole, "conversationId");
    names.insert(UpdatedRole, "updated");
    names.insert(ModelRole, "model");
    return names;
}

int ConversationListModel::rowOf(qint64 conversationId) const {
    for (int i = 0; i < rows_.size(); ++i) {
        if (rows_[i].id == conversationId)
            return i;
    }
    return -1;
}

qint64 ConversationListModel::idAt(int row) const {
    return row >= 0 && row < rows_.size() ? rows_[row].id : 0;
}

void ConversationListModel::reload() {
    beginResetModel();
    rows_ = store_.conversations();
    endResetModel();
}

void ConversationListModel::addConversation(const Conversation& c) {
    if (rowOf(c.id) >= 0)
        return;
    beginInsertRows({}, 0, 0);
    rows_.prepend(c);
    endInsertRows();
}

void ConversationListModel::removeConversation(qint64 conversationId) {
    const int row = rowOf(conversationId);
    if (row < 0)
        return;
    beginRemoveRows({}, row, row);
    rows_.removeAt(row);
    endRemoveRows();
}

void ConversationListModel::refreshConversation(qint64 conversationId) {
    const auto fresh = store_.conversation(conversationId);
    const int row = rowOf(conversationId);
    if (!fresh) {
        removeConversation(conversationId);
        return;
    }
    if (row < 0) {
        addConversation(*fresh);
        return;
    }
    if (row > 0) {
        beginMoveRows({}, row, row, {}, 0);
        rows_.move(row, 0);
        endMoveRows();
    }
    rows_[0] = *fresh;
    emit dataChanged(index(0), index(0));
}

}  // namespace llmwb
