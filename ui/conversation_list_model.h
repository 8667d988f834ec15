// The conversations of the store as a list model (newest update first). Kept in sync with the
// ChatController's signals with fine-grained inserts/removes/changes, not full resets.
#pragma once

#include <QAbstractListModel>
#include <QList>

#include "app/services/chat_types.h"

namespace llmwb {

class ConversationStore;

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT

public:
    enum Role { IdRole = Qt::UserRole + 1, UpdatedRole, ModelRole };

    explicit ConversationListModel(ConversationStore& store, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    int rowOf(qint64 conversationId) const;  // -1 when absent
    qint64 idAt(int row) const;

public slots:
    void reload();
    void addConversation(const llmwb::Conversation& c);  // inserted at the top
    void removeConversation(qint64 conversationId);
    // Re-reads one conversation and moves it to the top (it was just updated).
    void refreshConversation(qint64 conversationId);

private:
    ConversationStore& store_;
    QList<Conversation> rows_;
};

}  // namespace llmwb
