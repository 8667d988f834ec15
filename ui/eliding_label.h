// A one-line label that may get narrower than its text: it then shows the text elided ("…")
// and its tooltip shows the whole text (above any tooltip of its own). Its size hint stays
// that of the whole text, so a layout with room shows all of it; its small minimum lets the
// layout around it shrink with the window instead of being clipped on the right.
#pragma once

#include <QLabel>

namespace llmwb {

class ElidingLabel : public QLabel {
    Q_OBJECT

  public:
    using QLabel::QLabel;

    QSize minimumSizeHint() const override;
    bool isElided() const; // at its current width
    // What a hover shows: the whole text when elided, then the label's own tooltip.
    QString effectiveToolTip() const;

  protected:
    void paintEvent(QPaintEvent* e) override;
    bool event(QEvent* e) override;
};

} // namespace llmwb
