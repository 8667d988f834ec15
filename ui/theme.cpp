#include "ui/theme.h"

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>

namespace llmwb {

ThemeController::ThemeController(QApplication& app)
    : app_(app), systemStyle_(app.style() ? app.style()->name() : QString()),
      systemPalette_(QApplication::palette()) {}

QPalette ThemeController::lightPalette() {
    QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"));
    QPalette p = fusion ? fusion->standardPalette() : QPalette();
    delete fusion;
    p.setColor(QPalette::AlternateBase, QColor(0xee, 0xf1, 0xf5));
    p.setColor(QPalette::PlaceholderText, QColor(0x6b, 0x72, 0x80));
    return p;
}

QPalette ThemeController::darkPalette() {
    QPalette p;
    const QColor window(0x1f, 0x22, 0x28), base(0x16, 0x18, 0x1d), alt(0x2a, 0x2e, 0x36);
    const QColor text(0xe6, 0xe8, 0xeb), dim(0x8b, 0x93, 0xa1), accent(0x3d, 0x8b, 0xfd);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, alt);
    p.setColor(QPalette::ToolTipBase, alt);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, dim);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, alt);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::white);
    p.setColor(QPalette::Highlight, accent);
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, accent.lighter(120));
    p.setColor(QPalette::Light, alt.lighter(130));
    p.setColor(QPalette::Midlight, alt.lighter(115));
    p.setColor(QPalette::Mid, alt.darker(120));
    p.setColor(QPalette::Dark, base.darker(130));
    p.setColor(QPalette::Shadow, Qt::black);
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, dim.darker(130));
    p.setColor(QPalette::Disabled, QPalette::Button, window);
    return p;
}

void ThemeController::apply(ThemeChoice choice) {
    current_ = choice;
    switch (choice) {
    case ThemeChoice::System:
        if (!systemStyle_.isEmpty())
            QApplication::setStyle(QStyleFactory::create(systemStyle_));
        QApplication::setPalette(systemPalette_);
        break;
    case ThemeChoice::Light:
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(lightPalette());
        break;
    case ThemeChoice::Dark:
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(darkPalette());
        break;
    }
}

} // namespace llmwb
