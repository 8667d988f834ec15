#include "ui/markdown_body.h"

#include <QVBoxLayout>

#include "ui/markdown_view.h"

namespace llmwb {

namespace {

// A fence opener/closer: up to 3 spaces, then 3+ backticks or tildes.
bool fenceMarker(QStringView line, QChar* ch, int* len) {
    int i = 0;
    while (i < line.size() && i < 3 && line[i] == QLatin1Char(' '))
        ++i;
    if (i >= line.size() || (line[i] != QLatin1Char('`') && line[i] != QLatin1Char('~')))
        return false;
    const QChar c = line[i];
    int n = 0;
    while (i + n < line.size() && line[i + n] == c)
        ++n;
    if (n < 3)
        return false;
    *ch = c;
    *len = n;
    return true;
}

bool isBlank(QStringView line) {
    return line.trimmed().isEmpty();
}

// Starts with a non-blank character within its first 4 columns (not indented code).
bool startsShallow(QStringView line) {
    for (int i = 0; i < line.size() && i < 4; ++i) {
        if (line[i] == QLatin1Char('\t'))
            return false;
        if (line[i] != QLatin1Char(' '))
            return true;
    }
    return false;
}

} // namespace

QStringList splitMarkdownSegments(const QString& markdown, int minChars) {
    QStringList out;
    const QStringView text(markdown);
    qsizetype segStart = 0;
    qsizetype pos = 0;
    bool inFence = false;
    QChar fenceChar;
    int fenceLen = 0;
    bool prevBlank = false;
    while (pos < text.size()) {
        qsizetype end = text.indexOf(QLatin1Char('\n'), pos);
        const bool complete = end >= 0;
        if (!complete)
            end = text.size();
        const QStringView line = text.mid(pos, end - pos);
        // A cut before this line: after a blank line outside a fence, segment long enough.
        if (!inFence && prevBlank && pos - segStart >= minChars && startsShallow(line)) {
            out << markdown.mid(segStart, pos - segStart);
            segStart = pos;
        }
        QChar c;
        int n = 0;
        if (complete && fenceMarker(line, &c, &n)) {
            if (!inFence) {
                inFence = true;
                fenceChar = c;
                fenceLen = n;
            } else if (c == fenceChar && n >= fenceLen && line.trimmed().size() == n) {
                inFence = false;
            }
        }
        prevBlank = complete && isBlank(line);
        pos = complete ? end + 1 : end;
    }
    if (segStart < markdown.size() || out.isEmpty())
        out << markdown.mid(segStart);
    return out;
}

MarkdownBody::MarkdownBody(QWidget* parent) : QWidget(parent) {
    layout_ = new QVBoxLayout(this);
    layout_->setContentsMargins(0, 0, 0, 0);
    layout_->setSpacing(0);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    renderTimer_.setSingleShot(true);
    connect(&renderTimer_, &QTimer::timeout, this, &MarkdownBody::render);
    render();
}

void MarkdownBody::setMarkdownText(const QString& markdown) {
    markdown_ = markdown;
    renderTimer_.stop();
    render();
}

void MarkdownBody::setMarkdownTextLater(const QString& markdown) {
    markdown_ = markdown;
    if (renderTimer_.isActive())
        return; // the pending render will show this text
    // Leading edge: the first update after a quiet spell shows at once; the rest of a burst
    // is rendered at most every interval.
    const qint64 since = lastRender_.isValid() ? lastRender_.elapsed() : kRenderIntervalMs;
    if (since >= kRenderIntervalMs)
        render();
    else
        renderTimer_.start(int(kRenderIntervalMs - since));
}

void MarkdownBody::render() {
    lastRender_.start();
    const QStringList segments = splitMarkdownSegments(markdown_, kSegmentChars);
    lastRendered_ = 0;
    for (int i = 0; i < segments.size(); ++i) {
        if (i >= views_.size()) {
            auto* v = new MarkdownView(this);
            v->setObjectName(QStringLiteral("markdownSegment"));
            layout_->addWidget(v);
            views_ << v;
        } else if (views_[i]->markdownText() == segments[i]) {
            continue; // unchanged (earlier segments while streaming)
        }
        views_[i]->setMarkdownText(segments[i]);
        ++lastRendered_;
    }
    while (views_.size() > segments.size())
        delete views_.takeLast();
    updateGeometry();
}

int MarkdownBody::codeBlockCount() const {
    int n = 0;
    for (const MarkdownView* v : views_)
        n += v->codeBlockCount();
    return n;
}

MarkdownView* MarkdownBody::codeOwner(int i, int* local) const {
    if (i < 0)
        return nullptr;
    for (MarkdownView* v : views_) {
        if (i < v->codeBlockCount()) {
            *local = i;
            return v;
        }
        i -= v->codeBlockCount();
    }
    return nullptr;
}

QString MarkdownBody::codeBlockText(int i) const {
    int local = 0;
    const MarkdownView* v = codeOwner(i, &local);
    return v ? v->codeBlockText(local) : QString();
}

QToolButton* MarkdownBody::codeCopyButton(int i) const {
    int local = 0;
    const MarkdownView* v = codeOwner(i, &local);
    return v ? v->codeCopyButton(local) : nullptr;
}

} // namespace llmwb
