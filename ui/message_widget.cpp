#include "ui/message_widget.h"

#include <QApplication>
#include <QClipboard>
#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/eliding_label.h"

namespace llmwb {

namespace {

// What the user typed keeps its line breaks (Shift+Enter): outside code fences every line
// that another line follows ends in a Markdown hard break. Answers are Markdown as written.
QString withHardLineBreaks(const QString& text) {
    QStringList lines = text.split(QLatin1Char('\n'));
    bool inFence = false;
    for (int i = 0; i < lines.size(); ++i) {
        const QString trimmed = lines[i].trimmed();
        if (trimmed.startsWith(QLatin1String("```")) || trimmed.startsWith(QLatin1String("~~~"))) {
            inFence = !inFence;
            continue;
        }
        if (!inFence && !trimmed.isEmpty() && i + 1 < lines.size() &&
            !lines[i + 1].trimmed().isEmpty())
            lines[i] += QLatin1String("  ");
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace

MessageWidget::MessageWidget(const ChatMessage& message, QWidget* parent)
    : QFrame(parent), message_(message) {
    setObjectName(QStringLiteral("message"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    setBackgroundRole(message_.role == QLatin1String("user") ? QPalette::AlternateBase
                                                             : QPalette::Base);

    role_ = new ElidingLabel(this);
    QFont bold = role_->font();
    bold.setBold(true);
    role_->setFont(bold);
    state_ = new ElidingLabel(this);
    state_->setForegroundRole(QPalette::PlaceholderText);
    // In a narrow chat the name and the state ("cut off at the token limit") are elided, the
    // longer name the most, each with its whole text in the tooltip, rather than widening the
    // message past the chat.
    state_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    auto makeButton = [this](const char* name) {
        auto* b = new QToolButton(this);
        b->setObjectName(QLatin1String(name));
        b->setAutoRaise(true);
        return b;
    };
    copy_ = makeButton("copyButton");
    edit_ = makeButton("editButton");
    regenerate_ = makeButton("regenerateButton");
    delete_ = makeButton("deleteButton");
    const bool isUser = message_.role == QLatin1String("user");
    const bool isAssistant = message_.role == QLatin1String("assistant");
    edit_->setVisible(isUser);
    regenerate_->setVisible(isAssistant);

    // "‹ 2/3 ›": earlier answers to the same message, kept by Regenerate.
    prevVersion_ = makeButton("previousVersionButton");
    prevVersion_->setText(QStringLiteral("‹"));
    nextVersion_ = makeButton("nextVersionButton");
    nextVersion_->setText(QStringLiteral("›"));
    versionLabel_ = new QLabel(this);
    versionLabel_->setObjectName(QStringLiteral("versionLabel"));
    versionLabel_->setForegroundRole(QPalette::PlaceholderText);
    for (QWidget* v : {static_cast<QWidget*>(prevVersion_), static_cast<QWidget*>(versionLabel_),
                       static_cast<QWidget*>(nextVersion_)})
        v->hide();
    connect(prevVersion_, &QToolButton::clicked, this, [this] { showVersion(shownVersion() - 1); });
    connect(nextVersion_, &QToolButton::clicked, this, [this] { showVersion(shownVersion() + 1); });

    auto* header = new QHBoxLayout;
    header->addWidget(role_);
    header->addWidget(state_);
    header->addWidget(prevVersion_);
    header->addWidget(versionLabel_);
    header->addWidget(nextVersion_);
    header->addStretch();
    header_ = header;
    header->addWidget(copy_);
    header->addWidget(edit_);
    header->addWidget(regenerate_);
    header->addWidget(delete_);

    body_ = new MarkdownBody(this);
    body_->setObjectName(QStringLiteral("messageBody"));
    // A failure's whole message, where the user reads the answer: the header keeps only its
    // start, and the status bar's copy is replaced by the next status.
    error_ = new QLabel(this);
    error_->setObjectName(QStringLiteral("messageError"));
    error_->setWordWrap(true);
    error_->setTextFormat(Qt::PlainText);
    error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    error_->hide();
    footer_ = new QLabel(this);
    footer_->setObjectName(QStringLiteral("messageFooter"));
    footer_->setForegroundRole(QPalette::PlaceholderText);
    footer_->setWordWrap(true); // wraps rather than widening a narrow message
    footer_->setVisible(isAssistant);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 6);
    layout->setSpacing(2);
    layout->addLayout(header);
    layout->addWidget(body_);
    layout->addWidget(error_);
    layout->addWidget(footer_);

    // Copy says "Copied" for a moment: the click did something.
    copiedTimer_ = new QTimer(this);
    copiedTimer_->setSingleShot(true);
    copiedTimer_->setInterval(kCopiedMs);
    connect(copiedTimer_, &QTimer::timeout, this, &MessageWidget::retranslate);
    connect(copy_, &QToolButton::clicked, this, [this] {
        QApplication::clipboard()->setText(shownMessage().content);
        copiedTimer_->start();
        retranslate();
    });
    connect(delete_, &QToolButton::clicked, this, [this] { emit deleteRequested(message_.id); });
    connect(regenerate_, &QToolButton::clicked, this,
            [this] { emit regenerateRequested(message_.id); });
    connect(edit_, &QToolButton::clicked, this, &MessageWidget::startEditing);

    body_->setMarkdownText(displayText());
    retranslate();
}

void MessageWidget::retranslate() {
    const bool copied = copiedTimer_->isActive();
    copy_->setText(copied ? tr("Copied") : tr("Copy"));
    copy_->setToolTip(copied ? tr("The text is on the clipboard")
                             : tr("Copy the text of this message"));
    edit_->setText(tr("Edit"));
    edit_->setToolTip(tr("Edit this message and send it again"));
    prevVersion_->setToolTip(tr("Earlier answer"));
    nextVersion_->setToolTip(tr("Later answer"));
    regenerate_->setText(tr("Regenerate"));
    regenerate_->setToolTip(tr("Generate this answer again"));
    delete_->setText(tr("Delete"));
    delete_->setToolTip(tr("Delete this message"));
    if (resend_) {
        resend_->setText(tr("Resend"));
        resend_->setToolTip(
            tr("Send the edited message; the messages after it are replaced (Ctrl+Enter)"));
        cancelEdit_->setText(tr("Cancel"));
        cancelEdit_->setToolTip(tr("Keep the message as it was (Esc)"));
    }
    updateHeader();
}

void MessageWidget::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    QFrame::changeEvent(e);
}

void MessageWidget::updateHeader() {
    if (message_.role == QLatin1String("user"))
        role_->setText(tr("You"));
    else if (message_.role == QLatin1String("assistant"))
        role_->setText(message_.model.isEmpty() ? tr("Assistant")
                                                : tr("Assistant · %1").arg(message_.model));
    else
        role_->setText(tr("System"));
    // ElidingLabel shows the whole text in the tooltip where it is elided.
    role_->setToolTip(QString());
    const ChatMessage& shown = shownMessage();
    state_->setText(stateText(shown));
    state_->setToolTip(stateToolTip(shown)); // why it ended (below the whole text if elided)
    if (!saveError_.isEmpty() && shown_ < 0) {
        const QString st = stateText(shown);
        state_->setText(st.isEmpty() ? tr("not saved") : tr("%1 · not saved").arg(st));
        state_->setToolTip(tr("Not saved in the chat database yet (retrying): %1").arg(saveError_));
    }
    const bool streaming = message_.state == MessageState::Streaming;
    delete_->setEnabled(!streaming);
    edit_->setEnabled(!streaming);
    footer_->setText(figuresText(shown));
    const bool failed = shown.state == MessageState::Error && !shown.error.isEmpty();
    error_->setText(failed ? stateToolTip(shown) : QString());
    error_->setVisible(failed);
    const int count = versionCount();
    for (QWidget* v : {static_cast<QWidget*>(prevVersion_), static_cast<QWidget*>(versionLabel_),
                       static_cast<QWidget*>(nextVersion_)})
        v->setVisible(count > 1);
    versionLabel_->setText(QStringLiteral("%1/%2").arg(shownVersion()).arg(count));
    versionLabel_->setToolTip(
        tr("Answer %1 of %2: Regenerate keeps the earlier answers").arg(shownVersion()).arg(count));
    prevVersion_->setEnabled(shownVersion() > 1);
    nextVersion_->setEnabled(shownVersion() < count);
    role_->setMaximumWidth(QWIDGETSIZE_MAX);
    fitHeader();
}

void MessageWidget::resizeEvent(QResizeEvent* e) {
    QFrame::resizeEvent(e);
    fitHeader();
}

// The name gives way first: it gets what the state, the versions and the buttons leave.
void MessageWidget::fitHeader() {
    header_->invalidate(); // its cached hint may hold the name's previous maximum
    const QMargins m = layout()->contentsMargins();
    const int roleHint = std::min(role_->sizeHint().width(), role_->maximumWidth());
    const int others = header_->sizeHint().width() - roleHint;
    // contentsRect: without the frame; one spacing to spare for the style's rounding.
    const int room =
        contentsRect().width() - m.left() - m.right() - others - std::max(0, header_->spacing());
    role_->setMaximumWidth(std::max(role_->minimumSizeHint().width(), room));
}

void MessageWidget::setOlderVersions(const QList<ChatMessage>& older) {
    older_ = older;
    shown_ = -1;
    updateHeader();
}

int MessageWidget::shownVersion() const {
    return shown_ < 0 ? versionCount() : shown_ + 1;
}

const ChatMessage& MessageWidget::shownMessage() const {
    return shown_ < 0 ? message_ : older_.at(shown_);
}

void MessageWidget::showVersion(int version) {
    if (version < 1 || version > versionCount() || version == shownVersion())
        return;
    shown_ = version == versionCount() ? -1 : version - 1;
    body_->setMarkdownText(displayText());
    updateHeader();
}

QString MessageWidget::stateText(const ChatMessage& m) {
    switch (m.state) {
    case MessageState::Complete:
        // A normal end (a stop token or string) needs no word; a cut-off answer does.
        return m.finishReason == FinishReason::Length ? tr("cut off at the token limit")
                                                      : QString();
    case MessageState::Streaming:
        return tr("generating…");
    case MessageState::Stopped:
        return tr("stopped");
    case MessageState::Error: {
        // The start of the message (the label keeps a fixed width); the tooltip has all of it.
        QString e = m.error.simplified();
        if (e.size() > 48)
            e = e.left(47) + QChar(0x2026);
        return e.isEmpty() ? tr("failed") : tr("failed: %1").arg(e);
    }
    case MessageState::Interrupted:
        return tr("interrupted (the app was closed)");
    case MessageState::Truncated:
        return m.finishReason == FinishReason::Context ? tr("cut off: context full")
                                                       : tr("cut off: KV cache full");
    }
    return {};
}

QString MessageWidget::stateToolTip(const ChatMessage& m) {
    switch (m.state) {
    case MessageState::Complete:
        return m.finishReason == FinishReason::Length
                   ? tr("The answer reached the conversation's max tokens before it ended.")
               : m.finishReason == FinishReason::Stop
                   ? tr("The model ended the answer (a stop token or stop string).")
                   : QString();
    case MessageState::Streaming:
        return {};
    case MessageState::Stopped:
        return tr("You stopped the answer.");
    case MessageState::Error:
        return m.error.isEmpty() ? tr("The generation failed.")
                                 : tr("The generation failed: %1").arg(m.error);
    case MessageState::Interrupted:
        return tr("The app was closed while the answer was being written.");
    case MessageState::Truncated:
        return m.finishReason == FinishReason::Context
                   ? tr("The conversation filled the model's context: start a new chat or "
                        "delete messages.")
                   : tr("The conversation filled the whole KV cache pool, which is smaller "
                        "than the model's context: raise GPU memory utilization in the Tuning "
                        "dock, or start a new chat.");
    }
    return {};
}

QString MessageWidget::figuresText(const ChatMessage& m) {
    QStringList parts;
    const QLocale loc;
    if (m.tokensPerSecond)
        parts << tr("%1 tokens/s").arg(loc.toString(*m.tokensPerSecond, 'f', 1));
    if (m.ttftMs)
        parts << tr("TTFT %1 ms").arg(loc.toString(*m.ttftMs, 'f', 0));
    if (m.completionTokensCounted && m.completionTokens)
        parts << tr("%1 generated tokens (counted streamed chunks: the endpoint sent no usage)")
                     .arg(loc.toString(*m.completionTokens));
    else if (m.promptTokens || m.completionTokens)
        parts << tr("%1 prompt + %2 generated tokens")
                     .arg(loc.toString(m.promptTokens.value_or(0)),
                          loc.toString(m.completionTokens.value_or(0)));
    return parts.join(QStringLiteral(" · "));
}

QString MessageWidget::footerText() const {
    return footer_->text();
}

void MessageWidget::setSaveError(const QString& error) {
    if (error == saveError_)
        return;
    saveError_ = error;
    updateHeader();
}

QString MessageWidget::stateLabelText() const {
    return state_->text();
}

void MessageWidget::setMessage(const ChatMessage& message) {
    message_ = message;
    shown_ = -1;
    body_->setMarkdownText(displayText());
    updateHeader();
}

QString MessageWidget::displayText() const {
    return message_.role == QLatin1String("user") ? withHardLineBreaks(message_.content)
                                                  : shownMessage().content;
}

void MessageWidget::setStreamingText(const QString& text) {
    message_.content = text;
    if (shown_ < 0)
        body_->setMarkdownTextLater(text);
}

void MessageWidget::setRegenerateAllowed(bool allowed) {
    regenerate_->setEnabled(allowed && message_.state != MessageState::Streaming);
}

void MessageWidget::startEditing() {
    if (!editRow_) {
        editRow_ = new QWidget(this);
        editor_ = new QPlainTextEdit(editRow_);
        editor_->setObjectName(QStringLiteral("messageEditor"));
        resend_ = new QPushButton(editRow_);
        resend_->setObjectName(QStringLiteral("resendButton"));
        cancelEdit_ = new QPushButton(editRow_);
        auto* buttons = new QHBoxLayout;
        buttons->addStretch();
        buttons->addWidget(cancelEdit_);
        buttons->addWidget(resend_);
        auto* l = new QVBoxLayout(editRow_);
        l->setContentsMargins(0, 0, 0, 0);
        l->addWidget(editor_);
        l->addLayout(buttons);
        static_cast<QVBoxLayout*>(layout())->insertWidget(2, editRow_);
        connect(cancelEdit_, &QPushButton::clicked, this, &MessageWidget::stopEditing);
        connect(resend_, &QPushButton::clicked, this, &MessageWidget::resend);
        editor_->installEventFilter(this);
        retranslate();
    }
    editor_->setPlainText(message_.content);
    editRow_->show();
    body_->hide();
    editor_->setFocus();
}

void MessageWidget::resend() {
    const QString text = editor_->toPlainText();
    if (text.trimmed().isEmpty())
        return;
    stopEditing();
    emit resendRequested(message_.id, text);
}

bool MessageWidget::isEditing() const {
    return editRow_ && !editRow_->isHidden();
}

bool MessageWidget::eventFilter(QObject* watched, QEvent* event) {
    if (watched == editor_ && event->type() == QEvent::KeyPress) {
        auto* ke = static_cast<QKeyEvent*>(event);
        if ((ke->key() == Qt::Key_Return || ke->key() == Qt::Key_Enter) &&
            (ke->modifiers() & Qt::ControlModifier)) {
            resend();
            return true;
        }
        if (ke->key() == Qt::Key_Escape) {
            stopEditing();
            return true;
        }
    }
    return QFrame::eventFilter(watched, event);
}

void MessageWidget::stopEditing() {
    if (editRow_)
        editRow_->hide();
    body_->show();
}

} // namespace llmwb
