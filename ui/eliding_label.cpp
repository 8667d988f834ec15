#include "ui/eliding_label.h"

#include <QHelpEvent>
#include <QPainter>
#include <QStyle>
#include <QToolTip>

namespace llmwb {

QSize ElidingLabel::minimumSizeHint() const {
    return {fontMetrics().horizontalAdvance(QStringLiteral("W\u2026")),
            QLabel::minimumSizeHint().height()};
}

bool ElidingLabel::isElided() const {
    return fontMetrics().horizontalAdvance(text()) > contentsRect().width();
}

QString ElidingLabel::effectiveToolTip() const {
    if (!isElided())
        return toolTip();
    return toolTip().isEmpty() || toolTip() == text() ? text()
                                                      : text() + QLatin1Char('\n') + toolTip();
}

void ElidingLabel::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QRect r = contentsRect();
    const QString shown = fontMetrics().elidedText(text(), Qt::ElideRight, r.width());
    style()->drawItemText(&p, r, int(alignment()), palette(), isEnabled(), shown, foregroundRole());
}

bool ElidingLabel::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        const QString tip = effectiveToolTip();
        auto* he = static_cast<QHelpEvent*>(e);
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(he->globalPos(), tip, this);
        e->accept();
        return true;
    }
    return QLabel::event(e);
}

} // namespace llmwb
