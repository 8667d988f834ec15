#include "ui/conversations_panel.h"

#include <QApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include "ui/conversation_list_model.h"
#include "ui/search_results_model.h"

namespace llmwb {

ConversationsPanel::ConversationsPanel(ConversationListModel& conversations,
                                       SearchResultsModel& results, QWidget* parent)
    : QWidget(parent), conversations_(conversations), results_(results) {
    search_ = new QLineEdit(this);
    search_->setClearButtonEnabled(true);
    search_->setObjectName(QStringLiteral("conversationSearch"));
    list_ = new QListView(this);
    list_->setObjectName(QStringLiteral("conversationList"));
    list_->setModel(&conversations_);
    // Titles are renamed in place: double-click or F2 (and Rename in the context menu).
    list_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    list_->setUniformItemSizes(true);
    list_->setContextMenuPolicy(Qt::CustomContextMenu);
    newButton_ = new QPushButton(this);
    deleteButton_ = new QPushButton(this);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(newButton_);
    buttons->addWidget(deleteButton_);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(search_);
    layout->addWidget(list_, 1);
    layout->addLayout(buttons);

    // Search as the user types, but not on every keystroke.
    searchDelay_ = new QTimer(this);
    searchDelay_->setSingleShot(true);
    searchDelay_->setInterval(150);
    connect(search_, &QLineEdit::textChanged, searchDelay_, qOverload<>(&QTimer::start));
    connect(searchDelay_, &QTimer::timeout, this, [this] {
        const QString q = search_->text();
        results_.setQuery(q);
        showSearchResults(!q.trimmed().isEmpty());
    });
    connect(newButton_, &QPushButton::clicked, this, &ConversationsPanel::newConversationRequested);
    connect(deleteButton_, &QPushButton::clicked, this, [this] {
        if (const qint64 id = selectedConversation())
            emit deleteConversationRequested(id);
    });
    connect(list_, &QListView::activated, this, [this] { onCurrentChanged(); });
    connect(list_, &QListView::clicked, this, [this] { onCurrentChanged(); });
    connect(list_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QModelIndex idx = list_->indexAt(pos);
        if (!idx.isValid() || showingResults_)
            return;
        const qint64 id = conversations_.idAt(idx.row());
        QMenu menu(this);
        // Editing starts once the menu has closed (it would take the focus from the editor).
        const QPersistentModelIndex at(idx);
        menu.addAction(tr("Rename"), this,
                       [this, at] { QTimer::singleShot(0, this, [this, at] { renameAt(at); }); });
        menu.addAction(tr("Export…"), this, [this, id] { emit exportConversationRequested(id); });
        menu.addAction(tr("Delete"), this, [this, id] { emit deleteConversationRequested(id); });
        menu.exec(list_->viewport()->mapToGlobal(pos));
    });
    retranslate();
}

void ConversationsPanel::retranslate() {
    search_->setPlaceholderText(tr("Search all conversations…"));
    newButton_->setText(tr("New chat"));
    deleteButton_->setText(tr("Delete"));
}

void ConversationsPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(e);
}

void ConversationsPanel::showSearchResults(bool on) {
    if (on == showingResults_)
        return;
    showingResults_ = on;
    list_->setModel(on ? static_cast<QAbstractItemModel*>(&results_)
                       : static_cast<QAbstractItemModel*>(&conversations_));
    deleteButton_->setEnabled(!on);
}

void ConversationsPanel::onCurrentChanged() {
    const QModelIndex idx = list_->currentIndex();
    // The click that ends a double-click (a rename starting) must not take the keyboard away
    // from the title editor: the conversation is open since the first click.
    if (!idx.isValid() || isEditingTitle())
        return;
    if (showingResults_) {
        emit searchHitActivated(idx.data(SearchResultsModel::ConversationIdRole).toLongLong(),
                                idx.data(SearchResultsModel::MessageIdRole).toLongLong());
    } else {
        emit conversationActivated(conversations_.idAt(idx.row()));
    }
}

void ConversationsPanel::selectConversation(qint64 conversationId) {
    if (showingResults_)
        return;
    const int row = conversations_.rowOf(conversationId);
    if (row >= 0)
        list_->setCurrentIndex(conversations_.index(row));
}

qint64 ConversationsPanel::selectedConversation() const {
    if (showingResults_)
        return 0;
    const QModelIndex idx = list_->currentIndex();
    return idx.isValid() ? conversations_.idAt(idx.row()) : 0;
}

void ConversationsPanel::renameAt(const QModelIndex& index) {
    if (showingResults_ || !index.isValid())
        return;
    list_->setCurrentIndex(index);
    list_->edit(index);
}

bool ConversationsPanel::isEditingTitle() const {
    // The title editor is a child of the list's viewport and has the keyboard while open.
    const QWidget* f = QApplication::focusWidget();
    return f && f != list_->viewport() && list_->viewport()->isAncestorOf(f);
}

void ConversationsPanel::renameSelected() {
    renameAt(list_->currentIndex());
}

void ConversationsPanel::focusSearch() {
    search_->setFocus(Qt::ShortcutFocusReason);
    search_->selectAll();
}

} // namespace llmwb
