#include "ui/conversation_settings_dialog.h"

#include <algorithm>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace llmwb {

namespace {

QDoubleSpinBox* doubleBox(QWidget* parent, double lo, double hi, double step, int decimals) {
    auto* b = new QDoubleSpinBox(parent);
    b->setRange(lo, hi);
    b->setSingleStep(step);
    b->setDecimals(decimals);
    return b;
}

} // namespace

ConversationSettingsDialog::ConversationSettingsDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Conversation settings"));
    title_ = new QLineEdit(this);
    systemPrompt_ = new QPlainTextEdit(this);
    systemPrompt_->setPlaceholderText(
        tr("Optional instructions given to the model before the chat"));
    systemPrompt_->setMinimumHeight(90);
    temperature_ = doubleBox(this, 0.0, 5.0, 0.05, 2);
    temperature_->setToolTip(tr("0 picks the most likely token every time (greedy)"));
    topP_ = doubleBox(this, 0.01, 1.0, 0.05, 2);
    topK_ = new QSpinBox(this);
    topK_->setRange(0, 100000);
    topK_->setSpecialValueText(tr("off"));
    minP_ = doubleBox(this, 0.0, 1.0, 0.01, 2);
    repetition_ = doubleBox(this, 0.05, 5.0, 0.05, 2);
    presence_ = doubleBox(this, -2.0, 2.0, 0.1, 2);
    frequency_ = doubleBox(this, -2.0, 2.0, 0.1, 2);
    maxTokens_ = new QSpinBox(this);
    maxTokens_->setRange(1, 1 << 20);
    seed_ = new QSpinBox(this);
    seed_->setRange(-1, std::numeric_limits<int>::max());
    seed_->setSpecialValueText(tr("random"));
    thinking_ = new QComboBox(this);
    thinking_->setObjectName(QStringLiteral("thinking"));
    thinking_->addItem(tr("Template default"), -1);
    thinking_->addItem(tr("On"), 1);
    thinking_->addItem(tr("Off"), 0);
    thinking_->setToolTip(tr("enable_thinking for models whose chat template has it (Qwen3)"));
    thinkingBudget_ = new QSpinBox(this);
    thinkingBudget_->setObjectName(QStringLiteral("thinkingBudget"));
    thinkingBudget_->setRange(-1, 1 << 20);
    thinkingBudget_->setSpecialValueText(tr("no cap"));
    thinkingBudget_->setToolTip(
        tr("Thinking tokens after which </think> is forced (models with <think> tokens only)"));

    auto* form = new QFormLayout;
    form->addRow(tr("Title"), title_);
    form->addRow(tr("System prompt"), systemPrompt_);
    form->addRow(tr("Temperature"), temperature_);
    form->addRow(tr("Top-p"), topP_);
    form->addRow(tr("Top-k"), topK_);
    form->addRow(tr("Min-p"), minP_);
    form->addRow(tr("Repetition penalty"), repetition_);
    form->addRow(tr("Presence penalty"), presence_);
    form->addRow(tr("Frequency penalty"), frequency_);
    form->addRow(tr("Max new tokens"), maxTokens_);
    form->addRow(tr("Seed"), seed_);
    form->addRow(tr("Thinking"), thinking_);
    form->addRow(tr("Thinking budget (tokens)"), thinkingBudget_);
    auto* buttons = new QDialogButtonBox(
        QDialogButtonBox::Ok | QDialogButtonBox::Cancel | QDialogButtonBox::RestoreDefaults, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
            [this] { setValues(title(), systemPrompt(), SamplingSettings{}); });
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
    setValues({}, {}, SamplingSettings{});
}

void ConversationSettingsDialog::setValues(const QString& title, const QString& systemPrompt,
                                           const SamplingSettings& s) {
    title_->setText(title);
    systemPrompt_->setPlainText(systemPrompt);
    temperature_->setValue(s.temperature);
    topP_->setValue(s.topP);
    topK_->setValue(s.topK);
    minP_->setValue(s.minP);
    repetition_->setValue(s.repetitionPenalty);
    presence_->setValue(s.presencePenalty);
    frequency_->setValue(s.frequencyPenalty);
    maxTokens_->setValue(s.maxTokens);
    seed_->setValue(int(std::min<qint64>(s.seed, std::numeric_limits<int>::max())));
    thinking_->setCurrentIndex(std::max(0, thinking_->findData(s.enableThinking)));
    thinkingBudget_->setValue(s.thinkingBudget);
}

QString ConversationSettingsDialog::title() const {
    return title_->text().trimmed();
}
QString ConversationSettingsDialog::systemPrompt() const {
    return systemPrompt_->toPlainText();
}

SamplingSettings ConversationSettingsDialog::sampling() const {
    SamplingSettings s;
    s.temperature = temperature_->value();
    s.topP = topP_->value();
    s.topK = topK_->value();
    s.minP = minP_->value();
    s.repetitionPenalty = repetition_->value();
    s.presencePenalty = presence_->value();
    s.frequencyPenalty = frequency_->value();
    s.maxTokens = maxTokens_->value();
    s.seed = seed_->value();
    s.enableThinking = thinking_->currentData().toInt();
    s.thinkingBudget = thinkingBudget_->value();
    return s;
}

} // namespace llmwb
