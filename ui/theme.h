// Light / dark / system palettes. System keeps the platform style's own palette (captured at
// construction); Light and Dark use the Fusion style with a fixed palette.
#pragma once

#include <QPalette>
#include <QString>

#include "app/services/app_settings.h"

class QApplication;

namespace llmwb {

class ThemeController {
  public:
    explicit ThemeController(QApplication& app);
    void apply(ThemeChoice choice);
    ThemeChoice current() const { return current_; }

    static QPalette lightPalette();
    static QPalette darkPalette();

  private:
    QApplication& app_;
    QString systemStyle_;
    QPalette systemPalette_;
    ThemeChoice current_ = ThemeChoice::System;
};

} // namespace llmwb
