#include "app/services/app_settings.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

namespace llmwb {

bool restrictSettingsToOwner(QSettings& settings) {
    settings.sync();
    const QString path = settings.fileName();
    if (path.isEmpty() || !QFileInfo(path).isFile())
        return false;
    return QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
}

AppSettings::AppSettings(const QString& iniPath)
    : settings_(iniPath.isEmpty() ? std::make_unique<QSettings>()
                                  : std::make_unique<QSettings>(iniPath, QSettings::IniFormat)) {
    // Profiles written before keys were kept private: tighten the file when it holds one.
    if (!settings_->value(QStringLiteral("server/api_key")).toString().isEmpty())
        restrictSettingsToOwner(*settings_);
}

ThemeChoice AppSettings::theme() const {
    const QString t = settings_->value(QStringLiteral("ui/theme")).toString();
    if (t == QLatin1String("light"))
        return ThemeChoice::Light;
    if (t == QLatin1String("dark"))
        return ThemeChoice::Dark;
    return ThemeChoice::System;
}

void AppSettings::setTheme(ThemeChoice t) {
    const char* name = t == ThemeChoice::Light  ? "light"
                       : t == ThemeChoice::Dark ? "dark"
                                                : "system";
    settings_->setValue(QStringLiteral("ui/theme"), QString::fromLatin1(name));
}

QString AppSettings::language() const {
    const QString code = settings_->value(QStringLiteral("ui/language")).toString();
    return (code == QLatin1String("en") || code == QLatin1String("zh_CN")) ? code : QString();
}

void AppSettings::setLanguage(const QString& code) {
    settings_->setValue(QStringLiteral("ui/language"), code);
}

bool AppSettings::firstRunDone() const {
    return settings_->value(QStringLiteral("firstRun/done"), false).toBool();
}

void AppSettings::setFirstRunDone(bool done) {
    settings_->setValue(QStringLiteral("firstRun/done"), done);
}

QStringList AppSettings::modelFolders() const {
    return settings_->value(QStringLiteral("models/folders")).toStringList();
}

void AppSettings::setModelFolders(const QStringList& folders) {
    settings_->setValue(QStringLiteral("models/folders"), folders);
}

QStringList AppSettings::recentModels() const {
    return settings_->value(QStringLiteral("models/recent")).toStringList();
}

void AppSettings::addRecentModel(const QString& path) {
    QStringList list = recentModels();
    list.removeAll(path);
    list.prepend(path);
    while (list.size() > kMaxRecentModels)
        list.removeLast();
    settings_->setValue(QStringLiteral("models/recent"), list);
    settings_->setValue(QStringLiteral("models/last"), path);
}

void AppSettings::removeRecentModel(const QString& path) {
    QStringList list = recentModels();
    if (list.removeAll(path) > 0)
        settings_->setValue(QStringLiteral("models/recent"), list);
}

QString AppSettings::lastModel() const {
    return settings_->value(QStringLiteral("models/last")).toString();
}

QByteArray AppSettings::windowGeometry() const {
    return settings_->value(QStringLiteral("window/geometry")).toByteArray();
}

QByteArray AppSettings::windowState() const {
    return settings_->value(QStringLiteral("window/state")).toByteArray();
}

void AppSettings::setWindowLayout(const QByteArray& geometry, const QByteArray& state) {
    settings_->setValue(QStringLiteral("window/geometry"), geometry);
    settings_->setValue(QStringLiteral("window/state"), state);
}

double AppSettings::benchPricePerHour() const {
    bool ok = false;
    const double v = settings_->value(QStringLiteral("bench/price_per_hour")).toDouble(&ok);
    return ok && v >= 0 && v <= 1e6 ? v : 0;
}

QString AppSettings::benchCurrency() const {
    const QString c = settings_->value(QStringLiteral("bench/currency")).toString().trimmed();
    return c.isEmpty() || c.size() > 8 ? QStringLiteral("$") : c;
}

void AppSettings::setBenchPrice(double perHour, const QString& currency) {
    settings_->setValue(QStringLiteral("bench/price_per_hour"), perHour);
    settings_->setValue(QStringLiteral("bench/currency"), currency.trimmed().left(8));
}

SamplingSettings AppSettings::defaultSampling() const {
    const QByteArray json = settings_->value(QStringLiteral("sampling/default")).toByteArray();
    return SamplingSettings::fromJson(QJsonDocument::fromJson(json).object());
}

void AppSettings::setDefaultSampling(const SamplingSettings& s) {
    settings_->setValue(QStringLiteral("sampling/default"),
                        QJsonDocument(s.toJson()).toJson(QJsonDocument::Compact));
}

EngineTuning AppSettings::engineTuning() const {
    EngineTuning t;
    const QSettings& s = *settings_;
    t.gpuMemoryUtilization =
        s.value(QStringLiteral("engine/gpu_memory_utilization"), t.gpuMemoryUtilization).toDouble();
    t.maxNumSeqs = s.value(QStringLiteral("engine/max_num_seqs"), t.maxNumSeqs).toInt();
    t.maxNumBatchedTokens =
        s.value(QStringLiteral("engine/max_num_batched_tokens"), t.maxNumBatchedTokens).toInt();
    t.blockSize = s.value(QStringLiteral("engine/block_size"), t.blockSize).toInt();
    t.numSpeculativeTokens =
        s.value(QStringLiteral("engine/num_speculative_tokens"), t.numSpeculativeTokens).toInt();
    t.speculativeMethod =
        s.value(QStringLiteral("engine/speculative_method")).toString() == QStringLiteral("self-q4")
            ? SpeculativeMethod::SelfQ4
            : SpeculativeMethod::Ngram;
    t.speculativeAuto = s.value(QStringLiteral("engine/speculative_auto"), false).toBool();
    t.kvCacheDtype = s.value(QStringLiteral("engine/kv_cache_dtype"), t.kvCacheDtype).toString();
    return t.clamped();
}

void AppSettings::setEngineTuning(const EngineTuning& tuning) {
    const EngineTuning t = tuning.clamped();
    settings_->setValue(QStringLiteral("engine/gpu_memory_utilization"), t.gpuMemoryUtilization);
    settings_->setValue(QStringLiteral("engine/max_num_seqs"), t.maxNumSeqs);
    settings_->setValue(QStringLiteral("engine/max_num_batched_tokens"), t.maxNumBatchedTokens);
    settings_->setValue(QStringLiteral("engine/block_size"), t.blockSize);
    settings_->setValue(QStringLiteral("engine/num_speculative_tokens"), t.numSpeculativeTokens);
    settings_->setValue(QStringLiteral("engine/speculative_method"),
                        QString::fromLatin1(speculative_method_name(t.speculativeMethod)));
    settings_->setValue(QStringLiteral("engine/speculative_auto"), t.speculativeAuto);
    settings_->setValue(QStringLiteral("engine/kv_cache_dtype"), t.kvCacheDtype);
}

void AppSettings::resetTuning() {
    settings_->remove(QStringLiteral("engine"));
    settings_->remove(QStringLiteral("sampling/default"));
}

void AppSettings::sync() {
    settings_->sync();
}

QString AppSettings::device() const {
    return normalizedDevicePreference(
        settings_->value(QStringLiteral("engine/device"), QStringLiteral("auto")).toString());
}

void AppSettings::setDevice(const QString& preference) {
    settings_->setValue(QStringLiteral("engine/device"), normalizedDevicePreference(preference));
}

QString AppSettings::weightDtype() const {
    return normalizedWeightDtype(
        settings_->value(QStringLiteral("engine/weightDtype"), QStringLiteral("auto")).toString());
}

void AppSettings::setWeightDtype(const QString& dtype) {
    settings_->setValue(QStringLiteral("engine/weightDtype"), normalizedWeightDtype(dtype));
}

LocalServerSettings AppSettings::localServer() const {
    LocalServerSettings s;
    const QSettings& st = *settings_;
    s.enabled = st.value(QStringLiteral("server/enabled"), false).toBool();
    const QString host = st.value(QStringLiteral("server/host")).toString().trimmed();
    if (!host.isEmpty())
        s.host = host;
    bool ok = false;
    const int port = st.value(QStringLiteral("server/port")).toInt(&ok);
    if (ok && port >= 0 && port <= 65535)
        s.port = port;
    s.apiKey = st.value(QStringLiteral("server/api_key")).toString();
    s.allowedOrigins = st.value(QStringLiteral("server/allowed_origins")).toStringList();
    const int waiting = st.value(QStringLiteral("server/max_waiting")).toInt(&ok);
    if (ok && waiting >= 0 && waiting <= (1 << 20))
        s.maxWaiting = waiting;
    return s;
}

void AppSettings::setLocalServer(const LocalServerSettings& s) {
    settings_->setValue(QStringLiteral("server/enabled"), s.enabled);
    settings_->setValue(QStringLiteral("server/host"), s.host);
    settings_->setValue(QStringLiteral("server/port"), s.port);
    settings_->setValue(QStringLiteral("server/api_key"), s.apiKey);
    settings_->setValue(QStringLiteral("server/allowed_origins"), s.allowedOrigins);
    settings_->setValue(QStringLiteral("server/max_waiting"), s.maxWaiting);
    if (!s.apiKey.isEmpty())
        restrictSettingsToOwner(*settings_);
}

} // namespace llmwb
