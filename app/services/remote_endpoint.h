// RemoteEndpoint: an OpenAI-compatible server (vLLM, SGLang, llama.cpp's server, Ollama's OpenAI
// API, another `llmwb serve`) that the chat can use instead of the local engine: a name, a base
// URL, an API key and the served model. The list and the chosen chat backend are stored in the
// app's settings (QSettings, "remote/..."). The API key is a secret: describe() and every error
// leave it out, and nothing here logs it.
#pragma once

#include <QList>
#include <QMetaType>
#include <QSettings>
#include <QString>
#include <QStringList>
#include <string>

#include <string>

namespace llmwb::remote {
struct EndpointConfig;
}

namespace llmwb {

struct RemoteEndpoint {
    static constexpr int kMaxEndpoints = 64;
    static constexpr int kMaxFieldChars = 2048;

    QString name;    // unique among the endpoints, what the UI shows
    QString baseUrl; // "http://host:8000" or ".../v1"
    QString apiKey;  // "" = none
    QString model;   // the served model name

    // "" when usable, else why not (no name, a bad URL, no model, a line break in the key).
    QString validate() const;
    // "name (model @ url)": for labels and the stored message's model; never the key.
    QString describe() const;
    // The label stored on answers: "name · model".
    QString answerLabel() const;
    remote::EndpointConfig config() const;
    bool operator==(const RemoteEndpoint&) const = default;
};

// The endpoints stored in settings (entries that fail validate() or repeat a name are skipped:
// the settings file is external input).
QList<RemoteEndpoint> loadRemoteEndpoints(QSettings& settings);
void saveRemoteEndpoints(QSettings& settings, const QList<RemoteEndpoint>& endpoints);
// The chat backend: "" = the local engine, else an endpoint's name.
QString loadChatBackend(QSettings& settings);
void saveChatBackend(QSettings& settings, const QString& endpointName);

// A failure of the client, with a first sentence for people: the key refused (401/403), the
// URL wrong (404), the server unreachable; then the client's own message.
QString describeRemoteError(const std::string& clientMessage);

// GET /v1/models (blocking; call it off the GUI thread). The model ids, or the error as
// describeRemoteError words it. timeoutS bounds the connect and the read.
struct ModelListResult {
    QStringList models;
    QString error;
};
ModelListResult fetchRemoteModels(const RemoteEndpoint& endpoint, double timeoutS = 10);

} // namespace llmwb

Q_DECLARE_METATYPE(llmwb::RemoteEndpoint)
