// MainWindow's remote endpoints: the chat backend box (Model dock), Model > Remote endpoints…,
// the Engine dock following the chosen endpoint's /metrics and the status bar naming it.
#include "ui/main_window.h"

#include <QAction>
#include <QMenu>

#include "app/services/chat_controller.h"
#include "ui/eliding_label.h"

#ifdef LLMWB_HAVE_REMOTE
#include "app/services/remote_backend.h"
#include "ui/chat_backend_box.h"
#include "ui/engine_panel.h"
#include "ui/model_panel.h"
#include "ui/remote_endpoint_dialog.h"
#endif

namespace llmwb {

#ifdef LLMWB_HAVE_REMOTE

void MainWindow::attachRemote(RemoteBackend& remote) {
    remote_ = &remote;
    backendBox_ = new ChatBackendBox;
    backendBox_->setObjectName(QStringLiteral("chatBackendBox"));
    model_->setTopWidget(backendBox_);
    backendBox_->setEndpoints(remote.endpoints(), remote.backend());
    connect(backendBox_, &ChatBackendBox::backendChosen, this,
            [this](const QString& name) { remote_->selectBackend(name); });
    connect(backendBox_, &ChatBackendBox::editRequested, this, &MainWindow::showRemoteEndpoints);
    connect(&remote, &RemoteBackend::endpointsChanged, this,
            [this] { backendBox_->setEndpoints(remote_->endpoints(), remote_->backend()); });
    connect(&remote, &RemoteBackend::backendChanged, this, &MainWindow::onBackendChanged);
    connect(&remote, &RemoteBackend::metrics, engine_, &EnginePanel::setRemoteMetrics);
    if (modelMenu_) {
        remoteEndpoints_ = new QAction(this);
        remoteEndpoints_->setObjectName(QStringLiteral("remoteEndpointsAction"));
        modelMenu_->addSeparator();
        modelMenu_->addAction(remoteEndpoints_);
        connect(remoteEndpoints_, &QAction::triggered, this, &MainWindow::showRemoteEndpoints);
        remoteEndpoints_->setText(tr("Remote endpoints…"));
    }
    onBackendChanged(remote.backend());
}

void MainWindow::showRemoteEndpoints() {
    if (!remote_)
        return;
    RemoteEndpointDialog dialog(remote_->endpoints(), this);
    if (dialog.exec() == QDialog::Accepted)
        remote_->setEndpoints(dialog.endpoints());
}

void MainWindow::onBackendChanged(const QString& endpointName) {
    backendBox_->setEndpoints(remote_->endpoints(), endpointName);
    engine_->setRemoteSource(endpointName);
    updateStatus();
}

bool MainWindow::applyRemoteStatus() {
    if (remoteEndpoints_)
        remoteEndpoints_->setText(tr("Remote endpoints…"));
    const auto e = remote_ ? remote_->currentEndpoint() : std::nullopt;
    if (!e)
        return false;
    statusModel_->setText(tr("Chat: %1 (remote endpoint)").arg(e->answerLabel()));
    statusModel_->setToolTip(e->describe());
    return true;
}

#else

void MainWindow::attachRemote(RemoteBackend&) {}
void MainWindow::showRemoteEndpoints() {}
void MainWindow::onBackendChanged(const QString&) {}
bool MainWindow::applyRemoteStatus() {
    return false;
}

#endif

} // namespace llmwb
