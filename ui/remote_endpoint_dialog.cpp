#include "ui/remote_endpoint_dialog.h"

#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPointer>
#include <QPushButton>
#include <QVBoxLayout>
#include <thread>

#include "app/remote/endpoint_url.h"

namespace llmwb {

RemoteEndpointDialog::RemoteEndpointDialog(const QList<RemoteEndpoint>& endpoints, QWidget* parent)
    : QDialog(parent), endpoints_(endpoints) {
    setWindowTitle(tr("Remote endpoints"));
    setObjectName(QStringLiteral("remoteEndpointDialog"));
    list_ = new QListWidget(this);
    list_->setObjectName(QStringLiteral("endpointList"));
    add_ = new QPushButton(tr("Add"), this);
    remove_ = new QPushButton(tr("Remove"), this);
    auto* left = new QVBoxLayout;
    left->addWidget(list_, 1);
    auto* listButtons = new QHBoxLayout;
    listButtons->addWidget(add_);
    listButtons->addWidget(remove_);
    left->addLayout(listButtons);

    name_ = new QLineEdit(this);
    url_ = new QLineEdit(this);
    url_->setPlaceholderText(QStringLiteral("http://127.0.0.1:8000/v1"));
    key_ = new QLineEdit(this);
    key_->setEchoMode(QLineEdit::Password);
    key_->setPlaceholderText(tr("none"));
    key_->setToolTip(tr("Kept in the app's settings file, which only you can read."));
    model_ = new QComboBox(this);
    model_->setEditable(true);
    model_->setObjectName(QStringLiteral("endpointModel"));
    fetch_ = new QPushButton(tr("Fetch models"), this);
    fetch_->setObjectName(QStringLiteral("fetchModelsButton"));
    auto* modelRow = new QHBoxLayout;
    modelRow->addWidget(model_, 1);
    modelRow->addWidget(fetch_);
    auto* form = new QFormLayout;
    form->addRow(tr("Name"), name_);
    form->addRow(tr("Base URL"), url_);
    form->addRow(tr("API key"), key_);
    form->addRow(tr("Model"), modelRow);
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("endpointStatus"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* right = new QVBoxLayout;
    right->addLayout(form);
    right->addWidget(status_);
    right->addStretch(1);

    auto* body = new QHBoxLayout;
    body->addLayout(left, 2);
    body->addLayout(right, 5);
    buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    auto* outer = new QVBoxLayout(this);
    outer->addLayout(body, 1);
    outer->addWidget(buttons_);
    resize(720, 360);

    connect(add_, &QPushButton::clicked, this, &RemoteEndpointDialog::addEndpoint);
    connect(remove_, &QPushButton::clicked, this, &RemoteEndpointDialog::removeEndpoint);
    connect(fetch_, &QPushButton::clicked, this, &RemoteEndpointDialog::fetchModels);
    connect(buttons_, &QDialogButtonBox::accepted, this, &RemoteEndpointDialog::accept);
    connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(list_, &QListWidget::currentRowChanged, this, [this](int row) {
        if (loading_)
            return;
        storeCurrent();
        current_ = row;
        showCurrent();
    });
    for (QLineEdit* e : {name_, url_, key_})
        connect(e, &QLineEdit::textEdited, this, [this] {
            storeCurrent();
            refreshList();
        });
    connect(model_, &QComboBox::currentTextChanged, this, [this] { storeCurrent(); });

    refreshList();
    current_ = endpoints_.isEmpty() ? -1 : 0;
    loading_ = true; // the form is empty yet: nothing to store into the first entry
    list_->setCurrentRow(current_);
    loading_ = false;
    showCurrent();
    if (endpoints_.isEmpty())
        addEndpoint();
}

void RemoteEndpointDialog::refreshList() {
    loading_ = true;
    for (int i = 0; i < endpoints_.size(); ++i) {
        const QString text = endpoints_[i].name.isEmpty() ? tr("(unnamed)") : endpoints_[i].name;
        if (i < list_->count())
            list_->item(i)->setText(text);
        else
            list_->addItem(text);
    }
    while (list_->count() > endpoints_.size())
        delete list_->takeItem(list_->count() - 1);
    if (current_ >= 0 && current_ < list_->count())
        list_->setCurrentRow(current_);
    loading_ = false;
}

void RemoteEndpointDialog::showCurrent() {
    loading_ = true;
    const bool has = current_ >= 0 && current_ < endpoints_.size();
    for (QWidget* w : std::initializer_list<QWidget*>{name_, url_, key_, model_, fetch_, remove_})
        w->setEnabled(has);
    const RemoteEndpoint e = has ? endpoints_[current_] : RemoteEndpoint{};
    name_->setText(e.name);
    url_->setText(e.baseUrl);
    key_->setText(e.apiKey);
    model_->clear();
    model_->setEditText(e.model);
    setStatus(QString(), false);
    loading_ = false;
}

void RemoteEndpointDialog::storeCurrent() {
    if (loading_ || current_ < 0 || current_ >= endpoints_.size())
        return;
    RemoteEndpoint& e = endpoints_[current_];
    e.name = name_->text().trimmed();
    e.baseUrl = url_->text().trimmed();
    e.apiKey = key_->text().trimmed();
    e.model = model_->currentText().trimmed();
}

void RemoteEndpointDialog::addEndpoint() {
    if (endpoints_.size() >= RemoteEndpoint::kMaxEndpoints)
        return;
    storeCurrent();
    RemoteEndpoint e;
    QString name = tr("Endpoint %1").arg(endpoints_.size() + 1);
    e.name = name;
    endpoints_.append(e);
    current_ = int(endpoints_.size()) - 1;
    refreshList();
    showCurrent();
    url_->setFocus();
}

void RemoteEndpointDialog::removeEndpoint() {
    if (current_ < 0 || current_ >= endpoints_.size())
        return;
    endpoints_.removeAt(current_);
    current_ = std::min(current_, int(endpoints_.size()) - 1);
    refreshList();
    showCurrent();
}

void RemoteEndpointDialog::setStatus(const QString& text, bool error) {
    status_->setText(text);
    status_->setStyleSheet(error ? QStringLiteral("color: #c0392b;") : QString());
}

void RemoteEndpointDialog::fetchModels() {
    storeCurrent();
    if (fetching_ || current_ < 0 || current_ >= endpoints_.size())
        return;
    RemoteEndpoint e = endpoints_[current_];
    const auto url = remote::parse_endpoint_url(e.baseUrl.toStdString());
    if (!url) {
        setStatus(tr("The base URL is not usable: %1").arg(QString::fromStdString(url.message())),
                  true);
        emit modelsFetched(false);
        return;
    }
    fetching_ = true;
    fetch_->setEnabled(false);
    setStatus(tr("Asking %1 for its models…").arg(e.baseUrl), false);
    const int row = current_;
    QPointer<RemoteEndpointDialog> self(this);
    // Off the GUI thread; the answer comes back through the application object (which outlives
    // the dialog) and is dropped when the dialog is gone.
    std::thread([self, e, row] {
        ModelListResult r = fetchRemoteModels(e);
        QMetaObject::invokeMethod(
            qApp,
            [self, r, row] {
                if (!self)
                    return;
                self->fetching_ = false;
                self->fetch_->setEnabled(self->current_ >= 0);
                if (!r.error.isEmpty()) {
                    self->setStatus(r.error, true);
                    emit self->modelsFetched(false);
                    return;
                }
                if (self->current_ == row) {
                    const QString keep = self->model_->currentText();
                    self->model_->clear();
                    self->model_->addItems(r.models);
                    const int i = self->model_->findText(keep);
                    self->model_->setCurrentIndex(i >= 0 ? i : 0);
                    self->storeCurrent();
                }
                self->setStatus(tr("%n model(s) served.", nullptr, int(r.models.size())), false);
                emit self->modelsFetched(true);
            },
            Qt::QueuedConnection);
    }).detach();
}

void RemoteEndpointDialog::accept() {
    storeCurrent();
    for (int i = 0; i < endpoints_.size(); ++i) {
        QString why = endpoints_[i].validate();
        for (int j = 0; j < i && why.isEmpty(); ++j)
            if (endpoints_[j].name == endpoints_[i].name)
                why = tr("Another endpoint has this name.");
        if (!why.isEmpty()) {
            current_ = i;
            refreshList();
            showCurrent();
            setStatus(why, true);
            return;
        }
    }
    QDialog::accept();
}

} // namespace llmwb
