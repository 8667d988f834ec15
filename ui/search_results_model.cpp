#include "ui/search_results_model.h"

#include "app/services/conversation_store.h"

namespace llmwb {

SearchResultsModel::SearchResultsModel(ConversationStore& store, QObject* parent)
    : QAbstractListModel(parent), store_(store) {}

int SearchResultsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(hits_.size());
}

QString SearchResultsModel::snippetHtml(const QString& snippet) {
    QString html = snippet.toHtmlEscaped();
    html.replace(QChar(SearchHit::kMatchBegin), QStringLiteral("<b>"));
    html.replace(QChar(SearchHit::kMatchEnd), QStringLiteral("</b>"));
    html.replace(QLatin1Char('\n'), QLatin1Char(' '));
    return html;
}

QVariant SearchResultsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const SearchHit& h = hits_.at(index.row());
    switch (role) {
    case Qt::DisplayRole: {
        QString plain = h.snippet;
        plain.remove(QChar(SearchHit::kMatchBegin));
        plain.remove(QChar(SearchHit::kMatchEnd));
        const QString title = h.conversationTitle.isEmpty() ? tr("New chat") : h.conversationTitle;
        return QStringLiteral("%1 — %2").arg(title, plain.simplified());
    }
    case Qt::ToolTipRole:
        return QStringLiteral("<b>%1</b><br>%2")
            .arg(h.conversationTitle.toHtmlEscaped(), snippetHtml(h.snippet));
    case ConversationIdRole:
        return h.conversationId;
    case MessageIdRole:
        return h.messageId;
    case SnippetHtmlRole:
        return snippetHtml(h.snippet);
    default:
        return {};
    }
}

void SearchResultsModel::setQuery(const QString& query) {
    beginResetModel();
    query_ = query;
    hits_ = query.trimmed().isEmpty() ? QList<SearchHit>() : store_.search(query);
    endResetModel();
}

} // namespace llmwb
