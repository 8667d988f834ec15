// ChatBackendBox: where new chat messages go — the local model or one of the remote
// OpenAI-compatible endpoints — as a combo box, with "Endpoints…" to add, edit or remove them.
// Shown at the top of the Model dock.
#pragma once

#include <QList>
#include <QWidget>

#include "app/services/remote_endpoint.h"

class QComboBox;
class QLabel;
class QPushButton;

namespace llmwb {

class ChatBackendBox : public QWidget {
    Q_OBJECT

  public:
    explicit ChatBackendBox(QWidget* parent = nullptr);
    QComboBox* combo() const { return combo_; }
    QPushButton* editButton() const { return edit_; }
    // The endpoint names in the combo's order after the local entry; current "" = local.
    // Shows the choice without emitting backendChosen().
    void setEndpoints(const QList<RemoteEndpoint>& endpoints, const QString& current);

  signals:
    void backendChosen(const QString& endpointName); // "" = the local model
    void editRequested();

  protected:
    void changeEvent(QEvent* e) override;

  private:
    void retranslate();
    QLabel* title_;
    QComboBox* combo_;
    QPushButton* edit_;
    QList<RemoteEndpoint> endpoints_;
};

} // namespace llmwb
