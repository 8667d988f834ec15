// The Chat panel: the messages of the current conversation (Markdown), the input box and the
// Send / Stop buttons, and the conversation's settings (system prompt, sampling). All changes
// go through the ChatController; its signals update the view.
#pragma once

#include <QHash>
#include <QWidget>

#include "app/services/chat_types.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QVBoxLayout;

namespace llmwb {

class ChatController;
class ElidingLabel;
class MessageWidget;
class StorageBanner;

class ChatView : public QWidget {
    Q_OBJECT

  public:
    explicit ChatView(ChatController& controller, QWidget* parent = nullptr);

    qint64 conversationId() const { return conversationId_; }
    QPlainTextEdit* input() const { return input_; }
    QPushButton* sendButton() const { return send_; }
    QPushButton* stopButton() const { return stop_; }
    ElidingLabel* titleLabel() const { return title_; }
    QList<MessageWidget*> messageWidgets() const;
    MessageWidget* messageWidget(qint64 messageId) const { return widgets_.value(messageId); }

    // A line above the messages, e.g. that the demo model is not a trained model.
    void setNotice(const QString& text);
    // The bar that stays while answers are not saved or the database is read-only.
    StorageBanner* storageBanner() const { return banner_; }
    // The database is open read-only on purpose: the bar says why, Send is disabled.
    void setReadOnlyReason(const QString& reason);

  public slots:
    void setConversation(qint64 conversationId); // 0 = none
    void send();
    void stop();
    void regenerateLast();
    // Generates the answer again; the replaced answer is kept as an earlier version.
    bool regenerate(qint64 assistantMessageId);
    void editSettings();
    void focusInput();
    void scrollToMessage(qint64 messageId);

    // Deletes a message (its Delete button); messageDeleted tells the window, which offers undo.
    bool deleteMessage(qint64 messageId);
    // Puts a deleted message back (store and view). False if its conversation is gone.
    bool restoreMessage(const llmwb::ChatMessage& m);

  signals:
    void conversationNeeded(); // Send without a conversation: the window creates one
    void messageDeleted(const llmwb::ChatMessage& m);

  protected:
    void changeEvent(QEvent* e) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void retranslate();
    void clearMessages();
    MessageWidget* appendMessage(const ChatMessage& m);
    void removeMessage(qint64 messageId);
    void editAndResend(qint64 messageId, const QString& text);
    void updateButtons();
    void updateEmptyState();
    void scrollToBottomSoon();
    qint64 parentOf(qint64 messageId) const; // the message shown before it (0: none)
    bool isComposing() const;                // an input method has preedit text in the message box
    bool focusIsIdle() const; // nothing the user chose holds the focus (see generatingChanged)

    ChatController& controller_;
    qint64 conversationId_ = 0;
    ElidingLabel* title_;
    QPushButton* settings_;
    QLabel* notice_;
    StorageBanner* banner_;
    QString readOnlyReason_;
    QScrollArea* scroll_;
    QWidget* container_;
    QVBoxLayout* messagesLayout_;
    QLabel* empty_;
    QPlainTextEdit* input_;
    QPushButton* send_;
    QPushButton* stop_;
    QHash<qint64, MessageWidget*> widgets_;
    bool followBottom_ = true;
};

} // namespace llmwb
