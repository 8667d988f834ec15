#include "app/gui/remote_screenshot_runner.h"

#include <QApplication>
#include <QDir>
#include <QPlainTextEdit>
#include <QTimer>

#include "app/gui/translation_loader.h"
#include "app/services/chat_controller.h"
#include "app/services/remote_backend.h"
#include "ui/chat_view.h"
#include "ui/engine_panel.h"
#include "ui/main_window.h"
#include "ui/remote_endpoint_dialog.h"

namespace llmwb {

RemoteScreenshotRunner::RemoteScreenshotRunner(MainWindow& window, ChatController& controller,
                                               RemoteBackend& remote,
                                               TranslationLoader& translations,
                                               const QString& outDir, QObject* parent)
    : QObject(parent), window_(window), controller_(controller), remote_(remote),
      translations_(translations), outDir_(outDir) {
    QDir().mkpath(outDir_);
}

void RemoteScreenshotRunner::after(int ms, std::function<void()> fn) {
    QTimer::singleShot(ms, this, std::move(fn));
}

void RemoteScreenshotRunner::save(const QString& name) {
    const QString path = QDir(outDir_).filePath(name + QStringLiteral(".png"));
    if (!window_.grab().save(path))
        qWarning("could not save %s", qPrintable(path));
}

void RemoteScreenshotRunner::start() {
    if (!remote_.currentEndpoint()) {
        qWarning("--remote-screenshots: no remote endpoint is chosen in the settings");
        QApplication::exit(1);
        return;
    }
    window_.resize(1280, 800);
    auto c = controller_.newConversation(QStringLiteral("Remote chat"));
    if (!c) {
        QApplication::exit(1);
        return;
    }
    SamplingSettings s = SamplingSettings::fromJson(c->sampling);
    s.maxTokens = 96;
    s.seed = 7;
    c->sampling = s.toJson();
    controller_.updateConversation(*c);
    window_.openConversation(c->id);
    const qint64 id = c->id;
    connect(&controller_, &ChatController::generatingChanged, this,
            [this, id](qint64 conversationId, bool generating) {
                if (conversationId != id || generating)
                    return;
                // A few scrapes after the answer: the charts show its throughput and TTFT.
                after(5000, [this] {
                    views(QStringLiteral("en"), [this] {
                        translations_.apply(QStringLiteral("zh_CN"));
                        after(500, [this] {
                            views(QStringLiteral("zh_CN"), [] { QApplication::exit(0); });
                        });
                    });
                });
            });
    window_.chatView()->input()->setPlainText(
        QStringLiteral("Tell me about paged attention in a few sentences."));
    window_.chatView()->send();
}

void RemoteScreenshotRunner::views(const QString& suffix, std::function<void()> then) {
    window_.enginePanel()->showTab(EnginePanel::ChartsTab);
    after(400, [this, suffix, then] {
        save(QStringLiteral("remote-chat-charts-") + suffix);
        window_.enginePanel()->showTab(EnginePanel::BlocksTab);
        after(300, [this, suffix, then] {
            save(QStringLiteral("remote-blocks-unavailable-") + suffix);
            auto* dialog = new RemoteEndpointDialog(remote_.endpoints(), &window_);
            dialog->setAttribute(Qt::WA_DeleteOnClose);
            dialog->show();
            after(400, [this, dialog, suffix, then] {
                const QString path = QDir(outDir_).filePath(
                    QStringLiteral("remote-endpoints-dialog-") + suffix + QStringLiteral(".png"));
                dialog->grab().save(path);
                dialog->close();
                window_.enginePanel()->showTab(EnginePanel::ChartsTab);
                then();
            });
        });
    });
}

} // namespace llmwb
