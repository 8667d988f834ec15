#include "ui/chat_view.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextEdit>
#include <QTextLayout>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "ui/conversation_settings_dialog.h"
#include "ui/eliding_label.h"
#include "ui/message_widget.h"
#include "ui/storage_banner.h"

namespace llmwb {

ChatView::ChatView(ChatController& controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
    // A long title is elided in a narrow window, whole in its tooltip (F2 renames it).
    title_ = new ElidingLabel(this);
    title_->setObjectName(QStringLiteral("chatTitle"));
    QFont tf = title_->font();
    tf.setPointSizeF(tf.pointSizeF() * 1.2);
    tf.setBold(true);
    title_->setFont(tf);
    settings_ = new QPushButton(this);
    settings_->setObjectName(QStringLiteral("conversationSettingsButton"));
    notice_ = new QLabel(this);
    notice_->setObjectName(QStringLiteral("chatNotice"));
    notice_->setWordWrap(true);
    notice_->setVisible(false);
    notice_->setForegroundRole(QPalette::PlaceholderText);
    banner_ = new StorageBanner(this);

    container_ = new QWidget;
    messagesLayout_ = new QVBoxLayout(container_);
    messagesLayout_->setContentsMargins(6, 6, 6, 6);
    messagesLayout_->setSpacing(8);
    empty_ = new QLabel(container_);
    empty_->setObjectName(QStringLiteral("chatEmptyState"));
    empty_->setAlignment(Qt::AlignCenter);
    empty_->setWordWrap(true);
    empty_->setForegroundRole(QPalette::PlaceholderText);
    messagesLayout_->addWidget(empty_);
    messagesLayout_->addStretch(1);
    scroll_ = new QScrollArea(this);
    scroll_->setWidgetResizable(true);
    scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll_->setWidget(container_);
    scroll_->setFrameShape(QFrame::NoFrame);

    input_ = new QPlainTextEdit(this);
    input_->setObjectName(QStringLiteral("chatInput"));
    input_->setMaximumHeight(120);
    input_->setMinimumHeight(60);
    input_->installEventFilter(this);
    send_ = new QPushButton(this);
    send_->setObjectName(QStringLiteral("sendButton"));
    send_->setDefault(true);
    stop_ = new QPushButton(this);
    stop_->setObjectName(QStringLiteral("stopButton"));
    // Clicking Send or Stop leaves the keyboard focus in the message box (Tab still reaches
    // the buttons), as in other chat apps: the next message can be typed at once.
    send_->setFocusPolicy(Qt::TabFocus);
    stop_->setFocusPolicy(Qt::TabFocus);

    auto* top = new QHBoxLayout;
    top->addWidget(title_, 1);
    top->addWidget(settings_);
    auto* buttons = new QVBoxLayout;
    buttons->addWidget(send_);
    buttons->addWidget(stop_);
    buttons->addStretch();
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(input_, 1);
    bottom->addLayout(buttons);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addLayout(top);
    layout->addWidget(notice_);
    layout->addWidget(banner_);
    layout->addWidget(scroll_, 1);
    layout->addLayout(bottom);

    connect(send_, &QPushButton::clicked, this, &ChatView::send);
    connect(stop_, &QPushButton::clicked, this, &ChatView::stop);
    connect(settings_, &QPushButton::clicked, this, &ChatView::editSettings);
    // Follow the stream only while the user is at the bottom.
    connect(scroll_->verticalScrollBar(), &QScrollBar::valueChanged, this,
            [this](int v) { followBottom_ = v >= scroll_->verticalScrollBar()->maximum() - 24; });
    connect(scroll_->verticalScrollBar(), &QScrollBar::rangeChanged, this, [this](int, int max) {
        if (followBottom_)
            scroll_->verticalScrollBar()->setValue(max);
    });

    connect(&controller_, &ChatController::messageAdded, this, [this](const ChatMessage& m) {
        if (m.conversationId != conversationId_)
            return;
        appendMessage(m);
        followBottom_ = true;
        scrollToBottomSoon();
        updateButtons();
    });
    connect(&controller_, &ChatController::messageRemoved, this,
            [this](qint64 conversationId, qint64 messageId) {
                if (conversationId == conversationId_)
                    removeMessage(messageId);
            });
    connect(&controller_, &ChatController::messageTextChanged, this,
            [this](qint64 conversationId, qint64 messageId, const QString& text) {
                if (conversationId != conversationId_)
                    return;
                if (MessageWidget* w = widgets_.value(messageId))
                    w->setStreamingText(text);
            });
    connect(&controller_, &ChatController::messageFinished, this, [this](const ChatMessage& m) {
        if (MessageWidget* w = widgets_.value(m.id))
            w->setMessage(m);
        updateButtons();
    });
    connect(&controller_, &ChatController::saveStatusChanged, banner_,
            &StorageBanner::setSaveStatus);
    connect(banner_, &StorageBanner::retryRequested, &controller_,
            [this] { controller_.retrySaving(); });
    connect(&controller_, &ChatController::messageSaveChanged, this,
            [this](qint64, qint64 messageId, const QString& error) {
                if (MessageWidget* w = widgets_.value(messageId))
                    w->setSaveError(error);
            });
    connect(&controller_, &ChatController::generatingChanged, this,
            [this](qint64 conversationId, bool generating) {
                if (conversationId != conversationId_)
                    return;
                updateButtons();
                // The answer has finished: ready for the next message, unless the user has
                // moved on to another text field or panel meanwhile.
                if (!generating && focusIsIdle())
                    focusInput();
            });
    connect(&controller_, &ChatController::conversationChanged, this, [this](qint64 id) {
        if (id == conversationId_)
            setConversation(id);
    });
    connect(&controller_, &ChatController::conversationDeleted, this, [this](qint64 id) {
        if (id == conversationId_)
            setConversation(0);
    });
    retranslate();
    updateButtons();
}

void ChatView::retranslate() {
    settings_->setText(tr("System prompt && sampling…"));
    settings_->setToolTip(tr("System prompt and sampling parameters of this conversation"));
    input_->setPlaceholderText(tr("Type a message. Enter sends, Shift+Enter starts a new line."));
    send_->setText(tr("Send"));
    send_->setToolTip(tr("Send the message (Enter)"));
    stop_->setText(tr("Stop"));
    stop_->setToolTip(tr("Stop generating (Esc)"));
    if (conversationId_ == 0)
        title_->setText(tr("No conversation"));
    else if (const auto c = controller_.store().conversation(conversationId_))
        title_->setText(c->title.isEmpty() ? tr("New chat") : c->title);
    updateEmptyState();
}

void ChatView::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) {
        retranslate();
        updateButtons();
    }
    QWidget::changeEvent(e);
}

bool ChatView::eventFilter(QObject* watched, QEvent* event) {
    // The message box follows the chat convention: Enter sends, Shift+Enter starts a new line.
    // Ctrl+Enter also sends (the window's Send action has the same shortcut). While an input
    // method is composing, Enter belongs to it and never sends.
    // Ctrl+Z in an empty-history message box is the window's (undo a deleted message).
    if (watched == input_ && event->type() == QEvent::ShortcutOverride &&
        static_cast<QKeyEvent*>(event)->matches(QKeySequence::Undo) &&
        !input_->document()->isUndoAvailable()) {
        event->ignore();
        return true;
    }
    if (watched == input_ && event->type() == QEvent::KeyPress) {
        auto* ke = static_cast<QKeyEvent*>(event);
        if (ke->key() != Qt::Key_Return && ke->key() != Qt::Key_Enter)
            return QWidget::eventFilter(watched, event);
        if (isComposing())
            return QWidget::eventFilter(watched, event);
        const Qt::KeyboardModifiers mods = ke->modifiers() & ~Qt::KeypadModifier;
        if (mods & Qt::ShiftModifier) {
            // A paragraph break, the same as Enter used to insert (plain "\n" in the text).
            input_->textCursor().insertBlock();
            input_->ensureCursorVisible();
            return true;
        }
        if (mods == Qt::NoModifier || mods == Qt::ControlModifier) {
            // While an answer is generating Send is disabled: Enter keeps the text as it is.
            if (send_->isEnabled())
                send();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

bool ChatView::isComposing() const {
    const QTextLayout* layout = input_->textCursor().block().layout();
    return layout && !layout->preeditAreaText().isEmpty();
}

bool ChatView::focusIsIdle() const {
    // The user has not moved on: the focus is nowhere, in the message box, or on a button of
    // the chat. A text field (search, a message being edited) or another panel keeps it.
    QWidget* f = window()->focusWidget();
    if (!f || f == input_)
        return true;
    if (!isAncestorOf(f))
        return false;
    return !qobject_cast<QPlainTextEdit*>(f) && !qobject_cast<QLineEdit*>(f) &&
           !qobject_cast<QTextEdit*>(f);
}

void ChatView::setNotice(const QString& text) {
    notice_->setText(text);
    notice_->setVisible(!text.isEmpty());
}

QList<MessageWidget*> ChatView::messageWidgets() const {
    QList<MessageWidget*> out;
    for (int i = 0; i < messagesLayout_->count(); ++i) {
        if (auto* w = qobject_cast<MessageWidget*>(messagesLayout_->itemAt(i)->widget()))
            out << w;
    }
    return out;
}

void ChatView::clearMessages() {
    for (MessageWidget* w : std::as_const(widgets_)) {
        messagesLayout_->removeWidget(w);
        delete w;
    }
    widgets_.clear();
}

void ChatView::setConversation(qint64 conversationId) {
    const bool same = conversationId == conversationId_;
    conversationId_ = conversationId;
    if (!same || conversationId == 0) {
        clearMessages();
        const quint64 failures = controller_.store().failureCount();
        if (conversationId != 0) {
            for (ChatMessage m : controller_.store().messages(conversationId)) {
                if (m.state == MessageState::Streaming && controller_.isGenerating(conversationId))
                    m.content = controller_.streamingText(conversationId);
                if (const auto unsaved = controller_.unsavedMessage(m.id))
                    m = *unsaved; // what the database does not have yet
                MessageWidget* w = appendMessage(m);
                w->setSaveError(controller_.messageSaveError(m.id));
            }
        }
        banner_->setReadError(QStringLiteral("messages"),
                              controller_.store().failureCount() != failures
                                  ? controller_.store().errorString()
                                  : QString());
        followBottom_ = true;
        scrollToBottomSoon();
    }
    retranslate();
    updateButtons();
}

MessageWidget* ChatView::appendMessage(const ChatMessage& m) {
    if (MessageWidget* existing = widgets_.value(m.id))
        return existing;
    auto* w = new MessageWidget(m, container_);
    // In id order (a restored message goes back to its place), before the trailing stretch.
    int at = messagesLayout_->count() - 1;
    for (int i = 0; i < messagesLayout_->count(); ++i) {
        auto* other = qobject_cast<MessageWidget*>(messagesLayout_->itemAt(i)->widget());
        if (other && other->messageId() > m.id) {
            at = i;
            break;
        }
    }
    messagesLayout_->insertWidget(at, w);
    widgets_.insert(m.id, w);
    connect(w, &MessageWidget::deleteRequested, this, &ChatView::deleteMessage);
    connect(w, &MessageWidget::regenerateRequested, this, &ChatView::regenerate);
    // An answer shows the earlier answers to the same message (kept by regenerate).
    if (m.role == QLatin1String("assistant")) {
        if (const qint64 parent = parentOf(m.id))
            w->setOlderVersions(controller_.store().answerVersions(parent));
    }
    connect(w, &MessageWidget::resendRequested, this, &ChatView::editAndResend);
    updateEmptyState();
    return w;
}

bool ChatView::deleteMessage(qint64 messageId) {
    const auto m = controller_.store().message(messageId);
    if (!m || !controller_.deleteMessage(messageId))
        return false;
    emit messageDeleted(*m);
    return true;
}

bool ChatView::restoreMessage(const ChatMessage& m) {
    const auto restored = controller_.store().restoreMessage(m);
    if (!restored)
        return false;
    if (restored->conversationId == conversationId_) {
        appendMessage(*restored);
        updateButtons();
    }
    return true;
}

void ChatView::removeMessage(qint64 messageId) {
    MessageWidget* w = widgets_.take(messageId);
    if (!w)
        return;
    messagesLayout_->removeWidget(w);
    w->deleteLater();
    updateEmptyState();
    updateButtons();
}

void ChatView::updateEmptyState() {
    const bool none = widgets_.isEmpty();
    empty_->setVisible(none);
    if (none)
        empty_->setText(conversationId_ == 0
                            ? tr("Start a new chat (Ctrl+N) or pick one from Conversations.")
                            : tr("Type a message below to start."));
}

void ChatView::updateButtons() {
    const bool generating = conversationId_ != 0 && controller_.isGenerating(conversationId_);
    // A focused button that is about to be disabled hands the keyboard to the message box
    // (otherwise Qt moves it on to the next widget of the window, somewhere in a dock).
    QWidget* focused = window()->focusWidget();
    if ((focused == send_ && generating) || (focused == stop_ && !generating))
        input_->setFocus(Qt::OtherFocusReason);
    send_->setEnabled(!generating && readOnlyReason_.isEmpty());
    send_->setToolTip(readOnlyReason_.isEmpty()
                          ? tr("Send the message (Enter)")
                          : tr("Sending is disabled: %1").arg(readOnlyReason_));
    stop_->setEnabled(generating);
    settings_->setEnabled(conversationId_ != 0);
    // Only the last answer can be regenerated.
    const QList<MessageWidget*> list = messageWidgets();
    for (int i = 0; i < list.size(); ++i)
        list[i]->setRegenerateAllowed(!generating && readOnlyReason_.isEmpty() &&
                                      i == list.size() - 1);
}

void ChatView::send() {
    const QString text = input_->toPlainText();
    if (text.trimmed().isEmpty())
        return;
    if (conversationId_ == 0)
        emit conversationNeeded(); // the window creates one and calls setConversation()
    if (conversationId_ == 0)
        return;
    const quint64 failures = controller_.store().failureCount();
    if (controller_.send(conversationId_, text)) {
        input_->clear();
        banner_->setSendError({});
    } else if (controller_.store().failureCount() != failures) {
        banner_->setSendError(controller_.store().errorString());
    }
}

void ChatView::editAndResend(qint64 messageId, const QString& text) {
    if (controller_.editAndResend(messageId, text))
        return;
    // Not sent (the database refused it, or the conversation is busy): the edited text is not
    // lost, it waits in the message box.
    const QString current = input_->toPlainText();
    if (current.trimmed() != text.trimmed())
        input_->setPlainText(current.trimmed().isEmpty() ? text
                                                         : current + QLatin1Char('\n') + text);
    focusInput();
}

void ChatView::setReadOnlyReason(const QString& reason) {
    readOnlyReason_ = reason;
    banner_->setReadOnlyReason(reason);
    updateButtons();
}

void ChatView::stop() {
    if (conversationId_ != 0)
        controller_.stop(conversationId_);
}

void ChatView::regenerateLast() {
    const QList<MessageWidget*> list = messageWidgets();
    if (!list.isEmpty() && list.last()->message().role == QLatin1String("assistant"))
        regenerate(list.last()->messageId());
}

qint64 ChatView::parentOf(qint64 messageId) const {
    qint64 parent = 0;
    for (MessageWidget* w : messageWidgets()) {
        if (w->messageId() < messageId)
            parent = std::max(parent, w->messageId());
    }
    return parent;
}

bool ChatView::regenerate(qint64 assistantMessageId) {
    // The answer being replaced is kept as a version (flipped through on the new answer).
    ConversationStore& store = controller_.store();
    std::optional<qint64> kept;
    const auto old = store.message(assistantMessageId);
    const qint64 parent = parentOf(assistantMessageId);
    if (old && parent != 0 && old->role == QLatin1String("assistant") &&
        old->state != MessageState::Streaming)
        kept = store.keepAnswerVersion(*old, parent);
    if (controller_.regenerate(assistantMessageId))
        return true;
    if (kept) // nothing was replaced
        store.deleteAnswerVersion(*kept);
    return false;
}

void ChatView::editSettings() {
    if (conversationId_ == 0)
        return;
    auto c = controller_.store().conversation(conversationId_);
    if (!c)
        return;
    ConversationSettingsDialog dialog(this);
    dialog.setValues(c->title, c->systemPrompt, SamplingSettings::fromJson(c->sampling));
    if (dialog.exec() != QDialog::Accepted)
        return;
    c->title = dialog.title();
    c->systemPrompt = dialog.systemPrompt();
    c->sampling = dialog.sampling().toJson();
    controller_.updateConversation(*c);
}

void ChatView::focusInput() {
    input_->setFocus(Qt::ShortcutFocusReason);
}

void ChatView::scrollToMessage(qint64 messageId) {
    if (MessageWidget* w = widgets_.value(messageId)) {
        followBottom_ = false;
        QTimer::singleShot(0, this, [this, w] { scroll_->ensureWidgetVisible(w, 0, 40); });
    }
}

void ChatView::scrollToBottomSoon() {
    QTimer::singleShot(0, this, [this] {
        scroll_->verticalScrollBar()->setValue(scroll_->verticalScrollBar()->maximum());
    });
}

} // namespace llmwb
