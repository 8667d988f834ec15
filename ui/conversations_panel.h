// The Conversations dock: a search box (FTS over every message) above the list of
// conversations; while a query is typed the list shows the search hits instead.
#pragma once

#include <QWidget>

class QLineEdit;
class QListView;
class QPushButton;
class QTimer;

namespace llmwb {

class ConversationListModel;
class SearchResultsModel;

class ConversationsPanel : public QWidget {
    Q_OBJECT

  public:
    ConversationsPanel(ConversationListModel& conversations, SearchResultsModel& results,
                       QWidget* parent = nullptr);

    void selectConversation(qint64 conversationId);
    qint64 selectedConversation() const;
    QLineEdit* searchBox() const { return search_; }
    QListView* listView() const { return list_; }
    bool isEditingTitle() const; // a rename is in progress in the list

  public slots:
    void focusSearch();
    void renameSelected(); // starts editing the selected conversation's title in place

  signals:
    void conversationActivated(qint64 conversationId);
    void searchHitActivated(qint64 conversationId, qint64 messageId);
    void newConversationRequested();
    void deleteConversationRequested(qint64 conversationId);
    void exportConversationRequested(qint64 conversationId);

  protected:
    void changeEvent(QEvent* e) override;

  private:
    void retranslate();
    void showSearchResults(bool on);
    void onCurrentChanged();
    void renameAt(const QModelIndex& index);

    ConversationListModel& conversations_;
    SearchResultsModel& results_;
    QLineEdit* search_;
    QListView* list_;
    QPushButton* newButton_;
    QPushButton* deleteButton_;
    QTimer* searchDelay_;
    bool showingResults_ = false;
};

} // namespace llmwb
