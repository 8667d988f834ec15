#include "ui/storage_banner.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <algorithm>

namespace llmwb {

StorageBanner::StorageBanner(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("storageBanner"));
    setFrameShape(QFrame::StyledPanel);
    // Warning colours that read in the light and the dark theme.
    setStyleSheet(
        QStringLiteral("#storageBanner { background: #fff3cd; border: 1px solid #e0a800;"
                       " border-radius: 4px; } #storageBanner QLabel { color: #533f03; }"));
    label_ = new QLabel(this);
    label_->setObjectName(QStringLiteral("storageBannerText"));
    label_->setWordWrap(true);
    label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    retry_ = new QPushButton(this);
    retry_->setObjectName(QStringLiteral("retrySavingButton"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 4);
    layout->addWidget(label_, 1);
    layout->addWidget(retry_);
    connect(retry_, &QPushButton::clicked, this, &StorageBanner::retryRequested);
    refresh();
}

void StorageBanner::setSaveStatus(int unsaved, const QString& error) {
    unsaved_ = std::max(0, unsaved);
    error_ = error;
    refresh();
}

void StorageBanner::setReadError(const QString& key, const QString& error) {
    if (error.isEmpty())
        readErrors_.remove(key);
    else
        readErrors_.insert(key, error);
    refresh();
}

void StorageBanner::setSendError(const QString& error) {
    sendError_ = error;
    refresh();
}

void StorageBanner::setReadOnlyReason(const QString& reason) {
    readOnly_ = reason;
    refresh();
}

QString StorageBanner::text() const {
    return label_->text();
}

void StorageBanner::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        refresh();
    QFrame::changeEvent(e);
}

void StorageBanner::refresh() {
    QStringList parts;
    if (unsaved_ > 0) {
        parts << tr("%n answer(s) not saved in the chat database yet; the text is kept here and "
                    "saving is retried. %1",
                    nullptr, unsaved_)
                     .arg(error_.toHtmlEscaped());
    }
    if (!sendError_.isEmpty())
        parts << tr("Your message could not be saved, so it was not sent: %1. It is kept in the "
                    "message box: send it again once there is room.")
                     .arg(sendError_.toHtmlEscaped());
    for (const QString& e : std::as_const(readErrors_))
        parts << tr("Could not read the chat database: %1. Start the app again to check it and "
                    "salvage what is readable.")
                     .arg(e.toHtmlEscaped());
    if (!readOnly_.isEmpty())
        parts << tr("Read-only: %1 Sending is disabled.").arg(readOnly_.toHtmlEscaped());
    label_->setText(parts.join(QStringLiteral("<br>")));
    retry_->setText(tr("Retry saving"));
    retry_->setVisible(unsaved_ > 0);
    setVisible(!parts.isEmpty());
}

} // namespace llmwb
