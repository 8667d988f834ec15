#include "app/services/remote_endpoint.h"

#include <QCoreApplication>

#include "app/remote/endpoint_url.h"
#include "app/remote/openai_client.h"
#include "app/services/app_settings.h"

namespace llmwb {

namespace {

const QString kGroup = QStringLiteral("remote/endpoints");
const QString kBackend = QStringLiteral("remote/chatBackend");

QString tr(const char* text) {
    return QCoreApplication::translate("llmwb::RemoteEndpoint", text);
}

} // namespace

QString RemoteEndpoint::validate() const {
    if (name.trimmed().isEmpty())
        return tr("The endpoint needs a name.");
    for (const QString* f : {&name, &baseUrl, &apiKey, &model})
        if (f->size() > kMaxFieldChars)
            return tr("A field is longer than %1 characters.").arg(kMaxFieldChars);
    const auto url = remote::parse_endpoint_url(baseUrl.trimmed().toStdString());
    if (!url)
        return tr("The base URL is not usable: %1").arg(QString::fromStdString(url.message()));
    if (model.trimmed().isEmpty())
        return tr("Choose the model the endpoint serves.");
    if (apiKey.contains(QLatin1Char('\n')) || apiKey.contains(QLatin1Char('\r')))
        return tr("The API key contains a line break.");
    return {};
}

QString RemoteEndpoint::describe() const {
    return QStringLiteral("%1 (%2 @ %3)").arg(name, model, baseUrl);
}

QString RemoteEndpoint::answerLabel() const {
    return QStringLiteral("%1 · %2").arg(name, model);
}

remote::EndpointConfig RemoteEndpoint::config() const {
    remote::EndpointConfig c;
    c.base_url = baseUrl.trimmed().toStdString();
    c.api_key = apiKey.trimmed().toStdString();
    c.model = model.trimmed().toStdString();
    return c;
}

QList<RemoteEndpoint> loadRemoteEndpoints(QSettings& settings) {
    QList<RemoteEndpoint> out;
    const int n = settings.beginReadArray(kGroup);
    for (int i = 0; i < std::min(n, RemoteEndpoint::kMaxEndpoints); ++i) {
        settings.setArrayIndex(i);
        RemoteEndpoint e;
        e.name = settings.value(QStringLiteral("name")).toString();
        e.baseUrl = settings.value(QStringLiteral("baseUrl")).toString();
        e.apiKey = settings.value(QStringLiteral("apiKey")).toString();
        e.model = settings.value(QStringLiteral("model")).toString();
        const bool repeated = std::any_of(
            out.begin(), out.end(), [&](const RemoteEndpoint& o) { return o.name == e.name; });
        if (e.validate().isEmpty() && !repeated)
            out.append(e);
    }
    settings.endArray();
    return out;
}

void saveRemoteEndpoints(QSettings& settings, const QList<RemoteEndpoint>& endpoints) {
    settings.remove(kGroup);
    settings.beginWriteArray(kGroup, int(endpoints.size()));
    for (int i = 0; i < endpoints.size(); ++i) {
        settings.setArrayIndex(i);
        settings.setValue(QStringLiteral("name"), endpoints[i].name);
        settings.setValue(QStringLiteral("baseUrl"), endpoints[i].baseUrl);
        settings.setValue(QStringLiteral("apiKey"), endpoints[i].apiKey);
        settings.setValue(QStringLiteral("model"), endpoints[i].model);
    }
    settings.endArray();
    if (std::any_of(endpoints.begin(), endpoints.end(),
                    [](const RemoteEndpoint& e) { return !e.apiKey.isEmpty(); }))
        restrictSettingsToOwner(settings);
}

QString loadChatBackend(QSettings& settings) {
    return settings.value(kBackend).toString().left(RemoteEndpoint::kMaxFieldChars);
}

void saveChatBackend(QSettings& settings, const QString& endpointName) {
    settings.setValue(kBackend, endpointName);
}

QString describeRemoteError(const std::string& clientMessage) {
    const QString m = QString::fromStdString(clientMessage);
    QString lead;
    if (m.contains(QLatin1String("HTTP 401")) || m.contains(QLatin1String("HTTP 403")))
        lead =
            QCoreApplication::translate("llmwb::RemoteEndpoint", "The server refused the API key.");
    else if (m.contains(QLatin1String("HTTP 404")))
        lead = QCoreApplication::translate(
            "llmwb::RemoteEndpoint",
            "The server has no such route or model: check the base URL and the model.");
    else if (m.contains(QLatin1String("Could not establish connection")) ||
             m.contains(QLatin1String("Connection")) || m.contains(QLatin1String("timeout")) ||
             m.contains(QLatin1String("Timeout")))
        lead = QCoreApplication::translate("llmwb::RemoteEndpoint",
                                           "The server could not be reached.");
    return lead.isEmpty() ? m : lead + QLatin1Char(' ') + m;
}

ModelListResult fetchRemoteModels(const RemoteEndpoint& endpoint, double timeoutS) {
    ModelListResult r;
    remote::EndpointConfig c = endpoint.config();
    c.connect_timeout_s = timeoutS;
    c.read_timeout_s = timeoutS;
    c.total_timeout_s = timeoutS * 2;
    c.max_body_bytes = 8u << 20;
    auto client = remote::OpenAiClient::create(c);
    if (!client) {
        r.error = describeRemoteError(client.message());
        return r;
    }
    auto models = (*client)->list_models();
    if (!models) {
        r.error = describeRemoteError(models.message());
        return r;
    }
    for (const remote::ModelEntry& m : *models)
        if (r.models.size() < 1000)
            r.models.append(QString::fromStdString(m.id));
    if (r.models.isEmpty())
        r.error =
            QCoreApplication::translate("llmwb::RemoteEndpoint", "The server lists no model.");
    return r;
}

} // namespace llmwb
