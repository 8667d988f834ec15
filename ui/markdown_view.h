// Read-only Markdown text (QTextDocument::setMarkdown, GitHub dialect) that is exactly as tall
// as its content, for stacking in the chat. Code blocks get a monospace font, a shaded
// background and a Copy button above their top-right corner (it copies the code only, without
// the fences). Streaming updates are coalesced by the MarkdownBody that holds the views.
#pragma once

#include <QList>
#include <QTextBrowser>

class QToolButton;

namespace llmwb {

class MarkdownView : public QTextBrowser {
    Q_OBJECT

  public:
    explicit MarkdownView(QWidget* parent = nullptr);

    void setMarkdownText(const QString& markdown); // renders now
    QString markdownText() const { return markdown_; }
    int codeBlockCount() const { return int(codeTexts_.size()); }
    // The code of block i as shown (no fences), and its Copy button.
    QString codeBlockText(int i) const { return codeTexts_.value(i); }
    QToolButton* codeCopyButton(int i) const { return copyButtons_.value(i); }
    void copyCodeBlock(int i); // to the clipboard

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

  protected:
    void resizeEvent(QResizeEvent* e) override;
    void scrollContentsBy(int dx, int dy) override;
    void changeEvent(QEvent* e) override;

  private:
    void render();
    void styleCodeBlocks();
    void updateHeight();
    void placeCopyButtons();
    void retranslateButtons();
    int copyButtonHeight() const;

    QString markdown_;
    int height_ = 0;
    QStringList codeTexts_;
    QList<int> codeStarts_; // document position of each code block's first character
    QList<QToolButton*> copyButtons_;
};

} // namespace llmwb
