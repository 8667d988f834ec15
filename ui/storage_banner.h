// A bar above the chat's messages that stays while the chat database has a problem the user must
// know about: answers not saved yet (disk full: "Retry saving"), or a database opened read-only
// on purpose (sending disabled, and why). Hidden when there is nothing to say.
#pragma once

#include <QFrame>
#include <QMap>

class QLabel;
class QPushButton;

namespace llmwb {

class StorageBanner : public QFrame {
    Q_OBJECT

  public:
    explicit StorageBanner(QWidget* parent = nullptr);

    // unsaved > 0: "N answers are not saved yet: ERROR" with Retry saving; 0 hides that part.
    void setSaveStatus(int unsaved, const QString& error);
    // Non-empty: the database is open read-only, and why.
    void setReadOnlyReason(const QString& reason);
    // A read that failed (the conversation list, a conversation's messages: key), and why; ""
    // clears it. A damaged database is not shown as an empty chat without a word.
    void setReadError(const QString& key, const QString& error);
    // The user's message could not be stored, so it was not sent (it stays in the message
    // box); "" clears it.
    void setSendError(const QString& error);
    QString text() const;
    QPushButton* retryButton() const { return retry_; }

  signals:
    void retryRequested();

  protected:
    void changeEvent(QEvent* e) override;

  private:
    void refresh();

    QLabel* label_;
    QPushButton* retry_;
    int unsaved_ = 0;
    QString error_;
    QString readOnly_;
    QString sendError_;
    QMap<QString, QString> readErrors_;
};

} // namespace llmwb
