#include "ui/chat_backend_box.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>

namespace llmwb {

ChatBackendBox::ChatBackendBox(QWidget* parent) : QWidget(parent) {
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    title_ = new QLabel(this);
    combo_ = new QComboBox(this);
    combo_->setObjectName(QStringLiteral("chatBackendCombo"));
    combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    combo_->setMinimumContentsLength(12);
    edit_ = new QPushButton(this);
    edit_->setObjectName(QStringLiteral("editEndpointsButton"));
    row->addWidget(title_);
    row->addWidget(combo_, 1);
    row->addWidget(edit_);
    connect(combo_, &QComboBox::activated, this,
            [this](int index) { emit backendChosen(combo_->itemData(index).toString()); });
    connect(edit_, &QPushButton::clicked, this, &ChatBackendBox::editRequested);
    retranslate();
}

void ChatBackendBox::setEndpoints(const QList<RemoteEndpoint>& endpoints, const QString& current) {
    endpoints_ = endpoints;
    const QSignalBlocker block(combo_);
    combo_->clear();
    combo_->addItem(tr("Local model"), QString());
    for (const RemoteEndpoint& e : endpoints) {
        combo_->addItem(e.answerLabel(), e.name);
        combo_->setItemData(combo_->count() - 1, e.describe(), Qt::ToolTipRole);
    }
    const int i = combo_->findData(current);
    combo_->setCurrentIndex(i < 0 ? 0 : i);
}

void ChatBackendBox::retranslate() {
    title_->setText(tr("Chat backend:"));
    edit_->setText(tr("Endpoints…"));
    edit_->setToolTip(tr("Add, edit or remove OpenAI-compatible endpoints (vLLM, SGLang, "
                         "llama.cpp's server, Ollama, llmwb serve)"));
    if (combo_->count() > 0)
        combo_->setItemText(0, tr("Local model"));
}

void ChatBackendBox::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(e);
}

} // namespace llmwb
