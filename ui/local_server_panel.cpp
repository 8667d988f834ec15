#include "ui/local_server_panel.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QDockWidget>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "app/services/local_server.h"

namespace llmwb {

LocalServerPanel::LocalServerPanel(LocalServer& server, AppSettings& settings, QWidget* parent)
    : QWidget(parent), server_(server), settings_(settings) {
    enabled_ = new QCheckBox(this);
    enabled_->setObjectName(QStringLiteral("serverEnabled"));
    host_ = new QLineEdit(this);
    host_->setObjectName(QStringLiteral("serverHost"));
    port_ = new QSpinBox(this);
    port_->setObjectName(QStringLiteral("serverPort"));
    port_->setRange(0, 65535); // 0: any free port (the status says which)
    port_->setGroupSeparatorShown(false);
    key_ = new QLineEdit(this);
    key_->setObjectName(QStringLiteral("serverKey"));
    key_->setEchoMode(QLineEdit::Password);
    key_->setToolTip(tr("Kept in the app's settings file, which only you can read."));
    showKey_ = new QToolButton(this);
    showKey_->setCheckable(true);
    copyCurl_ = new QPushButton(this);
    copyCurl_->setObjectName(QStringLiteral("copyCurlButton"));
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("serverStatus"));
    status_->setWordWrap(true);
    url_ = new QLabel(this);
    url_->setObjectName(QStringLiteral("serverUrl"));
    url_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    warning_ = new QLabel(this);
    warning_->setObjectName(QStringLiteral("serverWarning"));
    warning_->setWordWrap(true);
    warning_->setStyleSheet(QStringLiteral("color: #b45309;"));
    logTitle_ = new QLabel(this);
    log_ = new QTableView(this);
    log_->setObjectName(QStringLiteral("serverLog"));
    log_->setModel(server_.log());
    log_->verticalHeader()->hide();
    log_->setSelectionBehavior(QAbstractItemView::SelectRows);
    log_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    log_->horizontalHeader()->setStretchLastSection(true);
    log_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    log_->setWordWrap(false);

    hostLabel_ = new QLabel(this);
    portLabel_ = new QLabel(this);
    keyLabel_ = new QLabel(this);
    auto* form = new QFormLayout;
    auto* address = new QHBoxLayout;
    address->addWidget(host_, 1);
    address->addWidget(portLabel_);
    address->addWidget(port_);
    form->addRow(hostLabel_, address);
    auto* keyRow = new QHBoxLayout;
    keyRow->addWidget(key_, 1);
    keyRow->addWidget(showKey_);
    form->addRow(keyLabel_, keyRow);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(enabled_);
    layout->addLayout(form);
    layout->addWidget(warning_);
    layout->addWidget(status_);
    auto* urlRow = new QHBoxLayout;
    urlRow->addWidget(url_, 1);
    urlRow->addWidget(copyCurl_);
    layout->addLayout(urlRow);
    layout->addWidget(logTitle_);
    layout->addWidget(log_, 1);

    const LocalServerSettings s = settings_.localServer();
    enabled_->setChecked(s.enabled);
    host_->setText(s.host);
    port_->setValue(s.port);
    key_->setText(s.apiKey);

    connect(enabled_, &QCheckBox::toggled, this, &LocalServerPanel::apply);
    connect(host_, &QLineEdit::editingFinished, this, [this] {
        if (currentSettings() != settings_.localServer())
            apply();
    });
    connect(port_, &QSpinBox::editingFinished, this, [this] {
        if (currentSettings() != settings_.localServer())
            apply();
    });
    connect(key_, &QLineEdit::editingFinished, this, [this] {
        if (currentSettings() != settings_.localServer())
            apply();
    });
    connect(showKey_, &QToolButton::toggled, this,
            [this](bool on) { key_->setEchoMode(on ? QLineEdit::Normal : QLineEdit::Password); });
    connect(copyCurl_, &QPushButton::clicked, this,
            [this] { QApplication::clipboard()->setText(curlExample()); });
    connect(&server_, &LocalServer::stateChanged, this, &LocalServerPanel::updateState);
    connect(server_.log(), &QAbstractItemModel::rowsInserted, log_,
            [this] { log_->scrollToBottom(); });
    retranslate();
}

void LocalServerPanel::restore() {
    if (settings_.localServer().enabled && !server_.isRunning())
        server_.start(settings_.localServer());
    updateState();
}

LocalServerSettings LocalServerPanel::currentSettings() const {
    LocalServerSettings s = settings_.localServer(); // what the panel does not show stays
    s.enabled = enabled_->isChecked();
    s.host =
        host_->text().trimmed().isEmpty() ? QStringLiteral("127.0.0.1") : host_->text().trimmed();
    s.port = port_->value();
    s.apiKey = key_->text();
    return s;
}

void LocalServerPanel::apply() {
    const LocalServerSettings s = currentSettings();
    settings_.setLocalServer(s);
    if (s.enabled)
        server_.start(s); // restarts on the new address
    else
        server_.stop();
    updateState();
}

QString LocalServerPanel::curlExample() const {
    const LocalServerSettings s = currentSettings();
    QString base = server_.baseUrl();
    if (base.isEmpty())
        base = QStringLiteral("http://%1:%2").arg(s.host).arg(s.port);
    QString cmd = QStringLiteral("curl %1/v1/chat/completions \\\n"
                                 "  -H \"Content-Type: application/json\" \\\n")
                      .arg(base);
    if (!s.apiKey.isEmpty())
        cmd += QStringLiteral("  -H \"Authorization: Bearer %1\" \\\n").arg(s.apiKey);
    cmd += QStringLiteral("  -d '{\"messages\": [{\"role\": \"user\", \"content\": \"Hello!\"}], "
                          "\"stream\": true}'");
    return cmd;
}

QString LocalServerPanel::statusText() const {
    return status_->text();
}

bool LocalServerPanel::warningShown() const {
    return !warning_->isHidden();
}

void LocalServerPanel::updateState() {
    const LocalServerSettings s = currentSettings();
    if (server_.isRunning()) {
        status_->setText(tr("Listening on %1. Requests join the same batch as the chats.")
                             .arg(server_.baseUrl()));
        url_->setText(tr("Base URL: %1/v1").arg(server_.baseUrl()));
    } else if (!server_.error().isEmpty() && s.enabled) {
        status_->setText(server_.error());
        url_->setText(QString());
    } else {
        status_->setText(tr("Stopped. Turn it on to serve the OpenAI API (/v1/chat/completions, "
                            "/v1/completions, /v1/models, /metrics) from the loaded model."));
        url_->setText(QString());
    }
    const bool exposed = !LocalServer::isLoopback(s.host);
    warning_->setVisible(exposed);
    if (exposed)
        warning_->setText(
            s.apiKey.isEmpty()
                ? tr("Warning: %1 is reachable from other machines, and no API key is set: "
                     "anyone on the network can use the model.")
                      .arg(s.host)
                : tr("Warning: %1 is reachable from other machines (they need the API key).")
                      .arg(s.host));
    copyCurl_->setEnabled(true);
}

QDockWidget* addLocalServerDock(QMainWindow& window, LocalServer& server, AppSettings& settings) {
    auto* dock = new QDockWidget(&window);
    dock->setObjectName(QStringLiteral("localServerDock"));
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    auto* panel = new LocalServerPanel(server, settings, dock);
    panel->setObjectName(QStringLiteral("localServerPanel"));
    dock->setWidget(panel);
    dock->setWindowTitle(LocalServerPanel::tr("Local server"));
    window.addDockWidget(Qt::RightDockWidgetArea, dock);
    if (auto* tuning = window.findChild<QDockWidget*>(QStringLiteral("tuningDock"))) {
        window.tabifyDockWidget(tuning, dock);
        tuning->raise(); // the Tuning tab stays in front
    }
    if (auto* view = window.findChild<QMenu*>(QStringLiteral("viewMenu"))) {
        QAction* before = nullptr; // the docks' toggles come before the first separator
        for (QAction* a : view->actions())
            if (a->isSeparator()) {
                before = a;
                break;
            }
        view->insertAction(before, dock->toggleViewAction());
    }
    return dock;
}

void LocalServerPanel::retranslate() {
    if (auto* dock = qobject_cast<QDockWidget*>(parentWidget()))
        dock->setWindowTitle(tr("Local server"));
    enabled_->setText(tr("Serve the OpenAI API (Local server)"));
    hostLabel_->setText(tr("Host:"));
    portLabel_->setText(tr("Port:"));
    keyLabel_->setText(tr("API key:"));
    key_->setPlaceholderText(tr("none: no key needed"));
    port_->setSpecialValueText(tr("any free port"));
    showKey_->setText(tr("Show"));
    showKey_->setToolTip(tr("Show or hide the API key"));
    copyCurl_->setText(tr("Copy curl example"));
    copyCurl_->setToolTip(tr("Copies a curl command that streams a chat answer from this server"));
    host_->setToolTip(tr("127.0.0.1: this machine only. 0.0.0.0: every network interface."));
    logTitle_->setText(tr("Requests"));
    updateState();
}

void LocalServerPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(e);
}

} // namespace llmwb
