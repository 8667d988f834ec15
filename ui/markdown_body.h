// The body of a chat message: Markdown shown as a column of MarkdownViews, one per segment of
// the text. Long text is cut into segments of about kSegmentChars at blank lines outside code
// blocks, so a streamed update re-renders only the last segment: the GUI thread's cost per
// update stays bounded however long the answer grows (one QTextDocument for a 4000-token answer
// took ~28 ms per render, ~125 ms at 16000 tokens). Streaming updates are coalesced to at most
// ~30 renders per second (the first after a quiet spell shows at once).
#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QStringList>
#include <QTimer>
#include <QWidget>

class QToolButton;
class QVBoxLayout;

namespace llmwb {

class MarkdownView;

// Cuts Markdown into segments that render the same one after the other: each cut is after a
// blank line outside fenced code, once the segment has at least minChars characters, and
// before a line that starts (within its first 4 columns) with a non-blank character, so
// indented code and list continuations stay whole. Concatenating the segments gives the text
// back. Appending text never moves an earlier cut (it may add cuts in the last segment).
QStringList splitMarkdownSegments(const QString& markdown, int minChars);

class MarkdownBody : public QWidget {
    Q_OBJECT

  public:
    static constexpr int kSegmentChars = 2000;

    explicit MarkdownBody(QWidget* parent = nullptr);

    void setMarkdownText(const QString& markdown);      // renders now
    void setMarkdownTextLater(const QString& markdown); // streaming: coalesced
    QString markdownText() const { return markdown_; }

    int segmentCount() const { return int(views_.size()); }
    MarkdownView* segment(int i) const { return views_.value(i); }
    // Code blocks over all segments, in order.
    int codeBlockCount() const;
    QString codeBlockText(int i) const;
    QToolButton* codeCopyButton(int i) const;
    // How many segment renders the last update did (tests: streaming re-renders only the tail).
    int lastRenderedSegments() const { return lastRendered_; }

  private:
    void render();
    // The segment holding code block i, and the index of that block inside it.
    MarkdownView* codeOwner(int i, int* local) const;

    static constexpr int kRenderIntervalMs = 33;

    QString markdown_;
    QList<MarkdownView*> views_;
    QVBoxLayout* layout_;
    QTimer renderTimer_;
    QElapsedTimer lastRender_;
    int lastRendered_ = 0;
};

} // namespace llmwb
