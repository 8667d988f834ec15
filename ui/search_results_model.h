// Full-text search hits (ConversationStore::search) as a list model for the Conversations dock.
#pragma once

#include <QAbstractListModel>

#include "app/services/chat_types.h"

namespace llmwb {

class ConversationStore;

class SearchResultsModel : public QAbstractListModel {
    Q_OBJECT

  public:
    enum Role { ConversationIdRole = Qt::UserRole + 1, MessageIdRole, SnippetHtmlRole };

    explicit SearchResultsModel(ConversationStore& store, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

    QString query() const { return query_; }
    // The snippet as HTML: message text escaped, the match in bold.
    static QString snippetHtml(const QString& snippet);

  public slots:
    void setQuery(const QString& query);

  private:
    ConversationStore& store_;
    QString query_;
    QList<SearchHit> hits_;
};

} // namespace llmwb
