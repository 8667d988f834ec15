// RemoteEndpointDialog: add, edit and remove the remote OpenAI-compatible endpoints — a name, the
// base URL, an API key (shown as dots) and the model, picked from the server's /v1/models
// ("Fetch models", off the GUI thread) with a clear error when the URL is wrong, the key is
// refused or the server cannot be reached. OK stores the list only when every entry is usable.
#pragma once

#include <QDialog>
#include <QList>

#include "app/services/remote_endpoint.h"

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;

namespace llmwb {

class RemoteEndpointDialog : public QDialog {
    Q_OBJECT

  public:
    explicit RemoteEndpointDialog(const QList<RemoteEndpoint>& endpoints,
                                  QWidget* parent = nullptr);
    // The list as edited (what OK accepted).
    QList<RemoteEndpoint> endpoints() const { return endpoints_; }

    QListWidget* list() const { return list_; }
    QLineEdit* nameEdit() const { return name_; }
    QLineEdit* urlEdit() const { return url_; }
    QLineEdit* keyEdit() const { return key_; }
    QComboBox* modelCombo() const { return model_; }
    QPushButton* fetchButton() const { return fetch_; }
    QLabel* statusLabel() const { return status_; }
    bool isFetching() const { return fetching_; }

  public slots:
    void addEndpoint();
    void removeEndpoint();
    // GET /v1/models of the form's URL with its key; the combo lists the ids.
    void fetchModels();
    void accept() override;

  signals:
    void modelsFetched(bool ok); // after fetchModels() (tests wait on it)

  private:
    void showCurrent();
    void storeCurrent(); // the form into endpoints_[current]
    void refreshList();
    void setStatus(const QString& text, bool error);

    QList<RemoteEndpoint> endpoints_;
    int current_ = -1;
    bool loading_ = false;
    bool fetching_ = false;
    QListWidget* list_;
    QPushButton *add_, *remove_, *fetch_;
    QLineEdit *name_, *url_, *key_;
    QComboBox* model_;
    QLabel* status_;
    QDialogButtonBox* buttons_;
};

} // namespace llmwb
