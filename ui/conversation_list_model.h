// The conversations of the store as a list model (newest update first). Kept in sync with the
// ChatController's signals with fine-grained inserts/removes/changes, not full resets.
#pragma once

#include <QAbstractListModel>
#include <QIcon>
#include <QList>
#include <QSet>

#include "app/services/chat_types.h"

namespace llmwb {

class ConversationStore;

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT

  public:
    enum Role { IdRole = Qt::UserRole + 1, UpdatedRole, ModelRole, GeneratingRole };

    explicit ConversationListModel(ConversationStore& store, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;
    // Titles are edited in place (double-click, F2, the context menu's Rename): setData does not
    // write; it asks (renameRequested) and the row changes when the store has the new title.
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

    int rowOf(qint64 conversationId) const; // -1 when absent
    // Why the last reload read nothing ("" when it succeeded): a damaged database is not an
    // empty list.
    QString loadError() const { return loadError_; }
    qint64 idAt(int row) const;

  public slots:
    void reload();
    void addConversation(const llmwb::Conversation& c); // inserted at the top
    void removeConversation(qint64 conversationId);
    // Re-reads one conversation and moves it to the top (it was just updated).
    void refreshConversation(qint64 conversationId);
    // Marks a conversation whose answer is being generated (several can be at once): a dot
    // icon, italic title and a tooltip line. Connect to ChatController::generatingChanged.
    void setGenerating(qint64 conversationId, bool generating);

  signals:
    void renameRequested(qint64 conversationId, const QString& title);
    void loadErrorChanged(const QString& error);

  private:
    ConversationStore& store_;
    QList<Conversation> rows_;
    QSet<qint64> generating_;
    QString loadError_;
    mutable QIcon generatingIcon_;
};

} // namespace llmwb
