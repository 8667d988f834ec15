// One chat message: who wrote it, its Markdown text, for answers a footer with the figures of
// the generation (tokens/s, TTFT, token counts), and the actions Copy, Delete, Edit & resend
// (own messages) and Regenerate (answers).
#pragma once

#include <QFrame>

#include "app/services/chat_types.h"
#include "ui/markdown_body.h"

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
    void setRegenerateAllowed(bool allowed);
    bool isEditing() const;
    QString footerText() const;
    QString stateLabelText() const;
    ElidingLabel* roleLabel() const { return role_; }
    ElidingLabel* stateLabel() const { return state_; }
    MarkdownBody* body() const { return body_; }

    // The state of a message in words ("" for a complete answer that ended normally; "cut off at
    // the token limit" for one whose finish reason is Length).
    static QString stateText(const ChatMessage& m);
    // Human-readable figures of an answer, e.g. "41.2 tokens/s · TTFT 120 ms · 12 → 80 tokens".
    static QString figuresText(const ChatMessage& m);

  signals:
    void deleteRequested(qint64 messageId);
    void regenerateRequested(qint64 messageId);
    void resendRequested(qint64 messageId, const QString& text);

  protected:
    void changeEvent(QEvent* e) override;
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
    QLabel* footer_;
    QToolButton* copy_;
    QToolButton* delete_;
    QToolButton* edit_;
    QToolButton* regenerate_;
    QTimer* copiedTimer_;
    QPlainTextEdit* editor_ = nullptr;
    QPushButton* resend_ = nullptr;
    QPushButton* cancelEdit_ = nullptr;
    QWidget* editRow_ = nullptr;
};

} // namespace llmwb
