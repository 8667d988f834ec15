#include "app/services/local_server.h"

#include <QDateTime>
#include <QThread>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app/server/openai_server.h"
#include "app/services/engine_worker_server.h"

namespace llmwb {

namespace {

// HTTP handler threads of the app's server: enough for many streaming clients of one machine's
// engine, without the CLI's 512 threads idling in the desktop app.
constexpr int kHttpThreads = 128;

LocalServerLogRow toRow(const RequestLogEntry& e) {
    LocalServerLogRow r;
    r.id = e.id;
    r.running = e.running;
    r.time = QDateTime::fromMSecsSinceEpoch(
        std::chrono::duration_cast<std::chrono::milliseconds>(e.time.time_since_epoch()).count());
    r.clientAddress = QString::fromStdString(e.client_address);
    r.clientPort = e.client_port;
    r.userAgent = QString::fromStdString(e.user_agent).simplified().left(200);
    r.method = QString::fromStdString(e.method).left(16);
    r.path = QString::fromStdString(e.path).left(200);
    r.status = e.status;
    r.promptTokens = e.prompt_tokens;
    r.completionTokens = e.completion_tokens;
    r.durationMs = e.duration_ms;
    r.finishReason = QString::fromStdString(e.finish_reason);
    return r;
}

} // namespace

LocalServer::LocalServer(std::shared_ptr<WorkerServingBackend> backend, QObject* parent)
    : QObject(parent), backend_(std::move(backend)) {}

LocalServer::~LocalServer() {
    stop();
}

bool LocalServer::isLoopback(const QString& host) {
    QString h = host.trimmed();
    if (h.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    if (h.startsWith(QLatin1Char('[')) && h.endsWith(QLatin1Char(']')))
        h = h.mid(1, h.size() - 2);
    const QByteArray a = h.toLatin1();
    in_addr v4{};
    if (inet_pton(AF_INET, a.constData(), &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6{};
    if (inet_pton(AF_INET6, a.constData(), &v6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&v6);
    return false;
}

QString LocalServer::baseUrl() const {
    if (!server_)
        return {};
    const QString h = settings_.host.trimmed();
    const QString host = h.contains(QLatin1Char(':')) && !h.startsWith(QLatin1Char('['))
                             ? QLatin1Char('[') + h + QLatin1Char(']')
                             : h;
    return QStringLiteral("http://%1:%2").arg(host).arg(port_);
}

// Why host:port cannot be bound, in words (the server library only says that it failed).
QString LocalServer::bindFailure(const QString& host, int port) const {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* res = nullptr;
    const QByteArray h = host.toUtf8();
    const QByteArray p = QByteArray::number(port);
    if (getaddrinfo(h.constData(), p.constData(), &hints, &res) != 0 || !res)
        return tr("Cannot start the Local server: \"%1\" is not a host name or address this "
                  "machine can resolve.")
            .arg(host);
    int err = 0;
    const int fd = ::socket(res->ai_family, res->ai_socktype, res->ai_protocol);
    if (fd >= 0) {
        if (::bind(fd, res->ai_addr, res->ai_addrlen) != 0)
            err = errno;
        ::close(fd);
    } else {
        err = errno;
    }
    freeaddrinfo(res);
    if (err == EADDRINUSE)
        return tr("Cannot start the Local server: port %1 on %2 is in use by another program. "
                  "Choose another port.")
            .arg(port)
            .arg(host);
    if (err == EADDRNOTAVAIL)
        return tr("Cannot start the Local server: %1 is not an address of this machine.").arg(host);
    if (err == EACCES)
        return tr("Cannot start the Local server: port %1 needs administrator rights; choose "
                  "one above 1023.")
            .arg(port);
    return tr("Cannot start the Local server on %1:%2: %3")
        .arg(host)
        .arg(port)
        .arg(err ? QString::fromLocal8Bit(std::strerror(err)) : tr("the bind failed"));
}

bool LocalServer::start(const LocalServerSettings& settings) {
    stop();
    settings_ = settings;
    error_.clear();
    ServerOptions o;
    o.host = settings.host.trimmed().toStdString();
    o.port = settings.port;
    o.api_key = settings.apiKey.toStdString();
    for (const QString& origin : settings.allowedOrigins)
        if (!origin.trimmed().isEmpty())
            o.allowed_origins.push_back(origin.trimmed().toStdString());
    o.threads = kHttpThreads;
    LocalServerLog* log = &log_;
    // Handler threads: rows reach the log on the GUI thread (stop() joins the handlers before
    // the log goes away; calls queued to a deleted object are dropped).
    o.request_log = [log](const RequestLogEntry& e) {
        LocalServerLogRow row = toRow(e);
        QMetaObject::invokeMethod(
            log, [log, row] { log->append(row); }, Qt::QueuedConnection);
    };
    backend_->setMaxWaiting(settings.maxWaiting);
    auto server = std::make_unique<OpenAiServer>(std::move(o), backend_->metrics());
    auto bound = server->bind();
    if (!bound) {
        error_ = bindFailure(settings.host.trimmed(), settings.port);
        emit stateChanged();
        return false;
    }
    port_ = *bound;
    OpenAiServer* raw = server.get();
    backend_->setMetricsListener([raw](ServingMetrics* m) { raw->set_metrics(m); });
    raw->set_metrics(backend_->metrics()); // a model loaded meanwhile
    raw->set_backend(backend_.get());
    listener_ = std::thread([raw] { raw->listen(); });
    // stop() reaches listen() only once it runs.
    for (int i = 0; i < 400 && !raw->is_listening(); ++i)
        QThread::msleep(5);
    server_ = std::move(server);
    emit stateChanged();
    return true;
}

void LocalServer::stop() {
    if (!server_)
        return;
    server_->set_backend(nullptr); // requests from now on: 503
    backend_->setMetricsListener(nullptr);
    backend_->abortAll("the Local server stopped");
    server_->stop(); // waits for the handler threads
    if (listener_.joinable())
        listener_.join();
    server_.reset();
    port_ = 0;
    emit stateChanged();
}

} // namespace llmwb
