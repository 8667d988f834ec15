// A small form for one conversation: its title, system prompt and sampling parameters.
#pragma once

#include <QDialog>

#include "app/services/generation_types.h"

class QComboBox;
class QLineEdit;
class QPlainTextEdit;
class QDoubleSpinBox;
class QSpinBox;

namespace llmwb {

class ConversationSettingsDialog : public QDialog {
    Q_OBJECT

  public:
    explicit ConversationSettingsDialog(QWidget* parent = nullptr);

    void setValues(const QString& title, const QString& systemPrompt, const SamplingSettings& s);
    QString title() const;
    QString systemPrompt() const;
    SamplingSettings sampling() const;

  private:
    QLineEdit* title_;
    QPlainTextEdit* systemPrompt_;
    QDoubleSpinBox* temperature_;
    QDoubleSpinBox* topP_;
    QSpinBox* topK_;
    QDoubleSpinBox* minP_;
    QDoubleSpinBox* repetition_;
    QDoubleSpinBox* presence_;
    QDoubleSpinBox* frequency_;
    QSpinBox* maxTokens_;
    QSpinBox* seed_;
    QComboBox* thinking_;      // template default / on / off (data: -1, 1, 0)
    QSpinBox* thinkingBudget_; // -1 = no cap
};

} // namespace llmwb
