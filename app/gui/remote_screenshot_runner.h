// `llm-workbench --data-dir DIR --remote-screenshots OUT`: with a remote endpoint chosen as the
// chat backend (settings.ini in DIR), sends one message through it, waits for the answer and a
// few /metrics scrapes, saves the window (chat, Engine charts fed from the endpoint, the block
// map's "not available" note, the endpoints dialog) at 1280x800 in English and Simplified
// Chinese as PNG files in OUT, and quits (exit code 1 when no endpoint is chosen).
#pragma once

#include <QObject>
#include <QString>
#include <functional>

namespace llmwb {

class ChatController;
class MainWindow;
class RemoteBackend;
class TranslationLoader;

class RemoteScreenshotRunner : public QObject {
    Q_OBJECT

  public:
    RemoteScreenshotRunner(MainWindow& window, ChatController& controller, RemoteBackend& remote,
                           TranslationLoader& translations, const QString& outDir,
                           QObject* parent = nullptr);
    void start();

  private:
    void after(int ms, std::function<void()> fn);
    void save(const QString& name);
    void views(const QString& suffix, std::function<void()> then);

    MainWindow& window_;
    ChatController& controller_;
    RemoteBackend& remote_;
    TranslationLoader& translations_;
    QString outDir_;
};

} // namespace llmwb
