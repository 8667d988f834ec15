#include "ui/conversation_list_model.h"

#include <QFont>
#include <QGuiApplication>
#include <QPainter>
#include <QPalette>
#include <QPixmap>

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
    case Qt::EditRole:
        return c.title;
    case Qt::ToolTipRole: {
        QString tip = tr("%1\nUpdated %2")
                          .arg(c.title.isEmpty() ? tr("New chat") : c.title,
                               QLocale().toString(c.updated, QLocale::ShortFormat));
        if (generating_.contains(c.id))
            tip += QLatin1Char('\n') + tr("Generating an answer…");
        return tip;
    }
    case Qt::DecorationRole: {
        if (!generating_.contains(c.id))
            return {};
        if (generatingIcon_.isNull()) {
            QPixmap dot(12, 12);
            dot.fill(Qt::transparent);
            QPainter p(&dot);
            p.setRenderHint(QPainter::Antialiasing);
            p.setPen(Qt::NoPen);
            p.setBrush(QGuiApplication::palette().color(QPalette::Highlight));
            p.drawEllipse(QRectF(2, 2, 8, 8));
            generatingIcon_ = QIcon(dot);
        }
        return generatingIcon_;
    }
    case Qt::FontRole: {
        if (!generating_.contains(c.id))
            return {};
        QFont f;
        f.setItalic(true);
        return f;
    }
    case GeneratingRole:
        return generating_.contains(c.id);
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

Qt::ItemFlags ConversationListModel::flags(const QModelIndex& index) const {
    Qt::ItemFlags f = QAbstractListModel::flags(index);
    if (index.isValid())
        f |= Qt::ItemIsEditable;
    return f;
}

bool ConversationListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::EditRole ||
        !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return false;
    const Conversation& c = rows_.at(index.row());
    const QString title = value.toString().simplified();
    if (title.isEmpty() || title == c.title)
        return false;
    emit renameRequested(c.id, title);
    return true;
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    auto names = QAbstractListModel::roleNames();
    names.insert(IdRole, "conversationId");
    names.insert(UpdatedRole, "updated");
    names.insert(ModelRole, "model");
    names.insert(GeneratingRole, "generating");
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
    const quint64 failures = store_.failureCount();
    rows_ = store_.conversations();
    const QString error = store_.failureCount() != failures ? store_.errorString() : QString();
    endResetModel();
    if (error != loadError_) {
        loadError_ = error;
        emit loadErrorChanged(error);
    }
}

void ConversationListModel::addConversation(const Conversation& c) {
    if (rowOf(c.id) >= 0)
        return;
    beginInsertRows({}, 0, 0);
    rows_.prepend(c);
    endInsertRows();
}

void ConversationListModel::setGenerating(qint64 conversationId, bool generating) {
    const bool changed =
        generating ? !generating_.contains(conversationId) : generating_.contains(conversationId);
    if (!changed)
        return;
    if (generating)
        generating_.insert(conversationId);
    else
        generating_.remove(conversationId);
    const int row = rowOf(conversationId);
    if (row >= 0)
        emit dataChanged(index(row), index(row),
                         {Qt::DecorationRole, Qt::FontRole, Qt::ToolTipRole, GeneratingRole});
}

void ConversationListModel::removeConversation(qint64 conversationId) {
    const int row = rowOf(conversationId);
    if (row < 0)
        return;
    beginRemoveRows({}, row, row);
    rows_.removeAt(row);
    endRemoveRows();
    generating_.remove(conversationId);
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

} // namespace llmwb
