#include "ui/markdown_view.h"

#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QClipboard>
#include <QEvent>
#include <QFontDatabase>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>
#include <QTimer>
#include <QToolButton>
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
}

void MarkdownView::setMarkdownText(const QString& markdown) {
    markdown_ = markdown;
    render();
}

void MarkdownView::render() {
    document()->setMarkdown(markdown_, QTextDocument::MarkdownDialectGitHub);
    styleCodeBlocks();
    updateHeight();
    placeCopyButtons();
}

int MarkdownView::copyButtonHeight() const {
    return fontMetrics().height() + 6;
}

void MarkdownView::copyCodeBlock(int i) {
    if (i < 0 || i >= codeTexts_.size())
        return;
    QApplication::clipboard()->setText(codeTexts_[i]);
    if (QToolButton* b = copyButtons_.value(i)) {
        b->setText(tr("Copied"));
        QTimer::singleShot(1500, b, [this] { retranslateButtons(); });
    }
}

void MarkdownView::retranslateButtons() {
    for (QToolButton* b : std::as_const(copyButtons_)) {
        b->setText(tr("Copy"));
        b->setToolTip(tr("Copy this code block"));
    }
}

void MarkdownView::placeCopyButtons() {
    // One button per code block, reused across renders (streaming re-renders often).
    while (copyButtons_.size() < codeTexts_.size()) {
        auto* b = new QToolButton(viewport());
        b->setObjectName(QStringLiteral("codeCopyButton"));
        b->setAutoRaise(false);
        b->setCursor(Qt::ArrowCursor);
        b->setFocusPolicy(Qt::NoFocus);
        const int index = int(copyButtons_.size());
        connect(b, &QToolButton::clicked, this, [this, index] { copyCodeBlock(index); });
        copyButtons_ << b;
        retranslateButtons();
    }
    while (copyButtons_.size() > codeTexts_.size())
        delete copyButtons_.takeLast();
    QAbstractTextDocumentLayout* layout = document()->documentLayout();
    const int h = copyButtonHeight();
    for (int i = 0; i < copyButtons_.size(); ++i) {
        QToolButton* b = copyButtons_[i];
        const QTextBlock block = document()->findBlock(codeStarts_[i]);
        const QRectF r = layout->blockBoundingRect(block);
        b->setFixedHeight(h - 2);
        b->adjustSize();
        const int x = std::max(0, viewport()->width() - b->width() - 2);
        // The block's top margin (h, outside its bounding rect) holds the button, just above
        // the shaded code, so it never covers a line of code.
        const int y = std::max(0, int(r.top()) - h + 1) - verticalScrollBar()->value();
        b->move(x, y);
        b->show();
    }
}

void MarkdownView::styleCodeBlocks() {
    codeTexts_.clear();
    codeStarts_.clear();
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    const QColor shade = palette().color(QPalette::AlternateBase);
    QTextCursor cursor(document());
    bool inCode = false;
    QString lastKind;
    for (QTextBlock b = document()->begin(); b.isValid(); b = b.next()) {
        const QTextBlockFormat bf = b.blockFormat();
        const bool code = bf.hasProperty(QTextFormat::BlockCodeFence) ||
                          bf.hasProperty(QTextFormat::BlockCodeLanguage);
        // Two code blocks with nothing between them differ at least in language or fence
        // character (the importer marks no other boundary).
        const QString kind = bf.stringProperty(QTextFormat::BlockCodeLanguage) + QChar(0) +
                             bf.stringProperty(QTextFormat::BlockCodeFence);
        const bool first = code && (!inCode || kind != lastKind);
        inCode = code;
        lastKind = kind;
        if (!code)
            continue;
        if (first) {
            codeTexts_ << b.text();
            codeStarts_ << b.position();
        } else {
            codeTexts_.last() += QLatin1Char('\n') + b.text();
        }
        cursor.setPosition(b.position());
        cursor.setPosition(b.position() + b.length() - 1, QTextCursor::KeepAnchor);
        QTextBlockFormat shaded;
        shaded.setBackground(shade);
        if (first)
            shaded.setTopMargin(std::max(bf.topMargin(), qreal(copyButtonHeight())));
        cursor.mergeBlockFormat(shaded);
        QTextCharFormat cf;
        cf.setFont(mono, QTextCharFormat::FontPropertiesSpecifiedOnly);
        cf.setFontFamilies(mono.families().isEmpty() ? QStringList{mono.family()}
                                                     : mono.families());
        cf.setFontFixedPitch(true);
        cursor.mergeCharFormat(cf);
    }
    // A line break inside one block reads as U+2028; the code had a newline there.
    for (QString& t : codeTexts_)
        t.replace(QChar::LineSeparator, QLatin1Char('\n'));
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

QSize MarkdownView::sizeHint() const {
    return {QTextBrowser::sizeHint().width(), height_};
}
QSize MarkdownView::minimumSizeHint() const {
    return {50, height_};
}

void MarkdownView::resizeEvent(QResizeEvent* e) {
    QTextBrowser::resizeEvent(e);
    updateHeight();
    placeCopyButtons();
}

void MarkdownView::scrollContentsBy(int dx, int dy) {
    QTextBrowser::scrollContentsBy(dx, dy);
    placeCopyButtons();
}

void MarkdownView::changeEvent(QEvent* e) {
    QTextBrowser::changeEvent(e);
    if (e->type() == QEvent::PaletteChange || e->type() == QEvent::FontChange)
        render();
    else if (e->type() == QEvent::LanguageChange)
        retranslateButtons();
}

} // namespace llmwb
