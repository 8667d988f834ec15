// One chat message: who wrote it, its Markdown text, for answers a footer with the figures of
// the generation (tokens/s, TTFT, token counts), and the actions Copy, Delete, Edit & resend
// (own messages) and Regenerate (answers).
#pragma once

#include <QFrame>

#include "app/services/chat_types.h"
#include "ui/markdown_body.h"

class QHBoxLayout;
class QLabel;
class QPlainTextEdit;
class QToolButton;
class QPushButton;
class QTimer;

namespace llmwb {

class ElidingLabel;

class MessageWidget : public QFrame {
    Q_OBJECT

  public:
    static constexpr int kCopiedMs = 1500; // how long Copy says "Copied"

    explicit MessageWidget(const ChatMessage& message, QWidget* parent = nullptr);

    qint64 messageId() const { return message_.id; }
    const ChatMessage& message() const { return message_; }
    void setMessage(const ChatMessage& message); // final state and figures
    void setStreamingText(const QString& text);  // while generating
    // The message's text is not (all) in the chat database yet: the header says "not saved",
    // its tooltip why. Empty: saved.
    void setSaveError(const QString& error);
    QString saveError() const { return saveError_; }
    void setRegenerateAllowed(bool allowed);
    // Earlier answers to the same message, oldest first: "‹ k/n ›" flips between them and
    // this one (n). What is shown (and copied) is shownMessage(); the conversation goes on
    // from the current answer.
    void setOlderVersions(const QList<ChatMessage>& older);
    int versionCount() const { return int(older_.size()) + 1; }
    int shownVersion() const; // 1..versionCount()
    void showVersion(int version);
    const ChatMessage& shownMessage() const;
    bool isEditing() const;
    QString footerText() const;
    QString stateLabelText() const;
    ElidingLabel* roleLabel() const { return role_; }
    ElidingLabel* stateLabel() const { return state_; }
    MarkdownBody* body() const { return body_; }

    // The state of a message in words ("" for a complete answer that ended normally; "cut off at
    // the token limit" for one whose finish reason is Length).
    static QString stateText(const ChatMessage& m);
    // Why the answer ended, in a sentence (the error message of a failed one).
    static QString stateToolTip(const ChatMessage& m);
    // Human-readable figures of an answer, e.g. "41.2 tokens/s · TTFT 120 ms · 12 → 80 tokens".
    static QString figuresText(const ChatMessage& m);

  signals:
    void deleteRequested(qint64 messageId);
    void regenerateRequested(qint64 messageId);
    void resendRequested(qint64 messageId, const QString& text);

  protected:
    void changeEvent(QEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    // In the editor: Ctrl+Enter resends, Esc cancels.
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    QString displayText() const; // the Markdown shown for message_ (see withHardLineBreaks)
    void retranslate();
    void updateHeader();
    void startEditing();
    void stopEditing();
    void resend();

    ChatMessage message_;
    ElidingLabel* role_;
    ElidingLabel* state_;
    MarkdownBody* body_;
    QLabel* error_;
    QLabel* footer_;
    QToolButton* copy_;
    QToolButton* delete_;
    QToolButton* edit_;
    QToolButton* regenerate_;
    void fitHeader();
    QHBoxLayout* header_;
    QTimer* copiedTimer_;
    QList<ChatMessage> older_; // earlier versions of this answer
    int shown_ = -1;           // index in older_, -1: this answer
    QToolButton* prevVersion_;
    QToolButton* nextVersion_;
    QLabel* versionLabel_;
    QPlainTextEdit* editor_ = nullptr;
    QPushButton* resend_ = nullptr;
    QPushButton* cancelEdit_ = nullptr;
    QWidget* editRow_ = nullptr;
    QString saveError_;
};

} // namespace llmwb
