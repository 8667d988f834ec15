// LocalServer: the app's OpenAI-compatible server (GUI thread) — an OpenAiServer (app/server)
// over the engine worker's WorkerServingBackend, so API requests join the chats' batch. Starts
// and stops it with the settings (host, port, API key, CORS origins, max waiting), says where
// it listens or why it could not start (the port in use, an address that is not this
// machine's), and keeps the live request log (LocalServerLog) that the handler threads feed.
#pragma once

#include <QObject>
#include <QString>
#include <memory>
#include <thread>

#include "app/services/app_settings.h"
#include "app/services/local_server_log.h"

namespace llmwb {

class OpenAiServer;
class WorkerServingBackend;

class LocalServer : public QObject {
    Q_OBJECT

  public:
    explicit LocalServer(std::shared_ptr<WorkerServingBackend> backend, QObject* parent = nullptr);
    ~LocalServer() override; // stop()

    // Starts serving with these settings (a running server stops first). false: error() says
    // why. Port 0 takes a free port (port() says which).
    bool start(const LocalServerSettings& settings);
    // Ends the server's requests (their streams finish with "abort") and stops listening.
    void stop();
    bool isRunning() const { return server_ != nullptr; }
    QString error() const { return error_; }
    const LocalServerSettings& settings() const { return settings_; }
    int port() const { return port_; }
    // "http://127.0.0.1:8000" while running ("" otherwise); IPv6 hosts in brackets.
    QString baseUrl() const;
    LocalServerLog* log() { return &log_; }

    // 127.0.0.0/8, ::1 and "localhost": only this machine can connect.
    static bool isLoopback(const QString& host);

  signals:
    void stateChanged(); // started, stopped or failed

  private:
    QString bindFailure(const QString& host, int port) const;

    std::shared_ptr<WorkerServingBackend> backend_;
    LocalServerSettings settings_;
    std::unique_ptr<OpenAiServer> server_;
    std::thread listener_;
    int port_ = 0;
    QString error_;
    LocalServerLog log_;
};

} // namespace llmwb
