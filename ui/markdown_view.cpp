#include "ui/markdown_view.h"

#include <QFontDatabase>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>
#include <QtMath>

namespace llmwb {

MarkdownView::MarkdownView(QWidget* parent) : QTextBrowser(parent) {
    setFrameShape(QFrame::NoFrame);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setOpenExternalLinks(true);
    setTextInteractionFlags(Qt::TextBrowserInteraction | Qt::TextSelectableByKeyboard);
    // Transparent: the message frame behind it gives the colour. (No style sheet: it would
    // freeze the palette and break switching between light and dark.)
    setAutoFillBackground(false);
    viewport()->setAutoFillBackground(false);
    document()->setDocumentMargin(2);
    renderTimer_.setSingleShot(true);
    renderTimer_.setInterval(33);
    connect(&renderTimer_, &QTimer::timeout, this, &MarkdownView::render);
}

void MarkdownView::setMarkdownText(const QString& markdown) {
    markdown_ = markdown;
    renderTimer_.stop();
    render();
}

void MarkdownView::setMarkdownTextLater(const QString& markdown) {
    markdown_ = markdown;
    if (!renderTimer_.isActive())
        renderTimer_.start();
}

void MarkdownView::render() {
    document()->setMarkdown(markdown_, QTextDocument::MarkdownDialectGitHub);
    styleCodeBlocks();
    updateHeight();
}

void MarkdownView::styleCodeBlocks() {
    codeBlocks_ = 0;
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    const QColor shade = palette().color(QPalette::AlternateBase);
    QTextCursor cursor(document());
    bool inCode = false;
    for (QTextBlock b = document()->begin(); b.isValid(); b = b.next()) {
        const QTextBlockFormat bf = b.blockFormat();
        const bool code = bf.hasProperty(QTextFormat::BlockCodeFence) ||
                          bf.hasProperty(QTextFormat::BlockCodeLanguage);
        if (code && !inCode)
            ++codeBlocks_;
        inCode = code;
        if (!code)
            continue;
        cursor.setPosition(b.position());
        cursor.setPosition(b.position() + b.length() - 1, QTextCursor::KeepAnchor);
        QTextBlockFormat shaded;
        shaded.setBackground(shade);
        cursor.mergeBlockFormat(shaded);
        QTextCharFormat cf;
        cf.setFont(mono, QTextCharFormat::FontPropertiesSpecifiedOnly);
        cf.setFontFamilies(mono.families().isEmpty() ? QStringList{mono.family()}
                                                     : mono.families());
        cf.setFontFixedPitch(true);
        cursor.mergeCharFormat(cf);
    }
}

void MarkdownView::updateHeight() {
    const int w = viewport()->width() > 0 ? viewport()->width() : width();
    document()->setTextWidth(std::max(50, w));
    const int h = qCeil(document()->size().height()) + 2 * frameWidth() + 2;
    if (h != height_) {
        height_ = h;
        setFixedHeight(h);
        updateGeometry();
    }
}

QSize MarkdownView::sizeHint() const { return {QTextBrowser::sizeHint().width(), height_}; }
QSize MarkdownView::minimumSizeHint() const { return {50, height_}; }

void MarkdownView::resizeEvent(QResizeEvent* e) {
    QTextBrowser::resizeEvent(e);
    updateHeight();
}

void MarkdownView::changeEvent(QEvent* e) {
    QTextBrowser::changeEvent(e);
    if (e->type() == QEvent::PaletteChange || e->type() == QEvent::FontChange)
        render();
}

}  // namespace llmwb
