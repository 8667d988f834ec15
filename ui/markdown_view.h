// Read-only Markdown text (QTextDocument::setMarkdown, GitHub dialect) that is exactly as tall
// as its content, for stacking in the chat. Code blocks get a monospace font and a shaded
// background. Rapid updates (streaming) are coalesced to at most ~30 renders per second.
#pragma once

#include <QTextBrowser>
#include <QTimer>

namespace llmwb {

class MarkdownView : public QTextBrowser {
    Q_OBJECT

public:
    explicit MarkdownView(QWidget* parent = nullptr);

    void setMarkdownText(const QString& markdown);  // renders now
    void setMarkdownTextLater(const QString& markdown);  // renders within ~33 ms
    QString markdownText() const { return markdown_; }
    int codeBlockCount() const { return codeBlocks_; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* e) override;
    void changeEvent(QEvent* e) override;

private:
    void render();
    void styleCodeBlocks();
    void updateHeight();

    QString markdown_;
    QTimer renderTimer_;
    int height_ = 0;
    int codeBlocks_ = 0;
};

}  // namespace llmwb
