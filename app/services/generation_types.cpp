#include "app/services/generation_types.h"

#include "engine/backend/device_select.h"
#include "engine/serving/speculative.h"

#include <algorithm>
#include <cmath>

#include "app/services/chat_types.h"

namespace llmwb {

namespace {

double clampedDouble(const QJsonObject& o, const char* key, double fallback, double lo, double hi) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (!v.isDouble() || !std::isfinite(v.toDouble()))
        return fallback;
    return std::clamp(v.toDouble(), lo, hi);
}

qint64 clampedInt(const QJsonObject& o, const char* key, qint64 fallback, qint64 lo, qint64 hi) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (!v.isDouble() || !std::isfinite(v.toDouble()))
        return fallback;
    const double d = std::clamp(v.toDouble(), double(lo), double(hi));
    return static_cast<qint64>(d);
}

} // namespace

QJsonObject SamplingSettings::toJson() const {
    QJsonObject o;
    o[QStringLiteral("temperature")] = temperature;
    o[QStringLiteral("top_p")] = topP;
    o[QStringLiteral("top_k")] = topK;
    o[QStringLiteral("min_p")] = minP;
    o[QStringLiteral("repetition_penalty")] = repetitionPenalty;
    o[QStringLiteral("presence_penalty")] = presencePenalty;
    o[QStringLiteral("frequency_penalty")] = frequencyPenalty;
    o[QStringLiteral("max_tokens")] = maxTokens;
    o[QStringLiteral("seed")] = seed;
    if (enableThinking >= 0)
        o[QStringLiteral("enable_thinking")] = enableThinking == 1;
    if (thinkingBudget >= 0)
        o[QStringLiteral("thinking_budget")] = thinkingBudget;
    return o;
}

SamplingSettings SamplingSettings::fromJson(const QJsonObject& o) {
    SamplingSettings s;
    s.temperature = clampedDouble(o, "temperature", s.temperature, 0.0, 5.0);
    s.topP = clampedDouble(o, "top_p", s.topP, 0.01, 1.0);
    s.topK = int(clampedInt(o, "top_k", s.topK, 0, 100000));
    s.minP = clampedDouble(o, "min_p", s.minP, 0.0, 1.0);
    s.repetitionPenalty = clampedDouble(o, "repetition_penalty", s.repetitionPenalty, 0.05, 5.0);
    s.presencePenalty = clampedDouble(o, "presence_penalty", s.presencePenalty, -2.0, 2.0);
    s.frequencyPenalty = clampedDouble(o, "frequency_penalty", s.frequencyPenalty, -2.0, 2.0);
    s.maxTokens = int(clampedInt(o, "max_tokens", s.maxTokens, 1, 1 << 20));
    s.seed = clampedInt(o, "seed", s.seed, -1, (qint64(1) << 53));
    const QJsonValue thinking = o.value(QStringLiteral("enable_thinking"));
    s.enableThinking = thinking.isBool() ? int(thinking.toBool()) : -1;
    s.thinkingBudget = int(clampedInt(o, "thinking_budget", s.thinkingBudget, -1, 1 << 20));
    return s;
}

EngineTuning EngineTuning::clamped() const {
    EngineTuning t = *this;
    if (!std::isfinite(t.gpuMemoryUtilization))
        t.gpuMemoryUtilization = kDefaultUtilization;
    t.gpuMemoryUtilization = std::clamp(t.gpuMemoryUtilization, kMinUtilization, 1.0);
    t.maxNumSeqs = std::clamp(t.maxNumSeqs, 1, 1024);
    t.maxNumBatchedTokens = std::clamp(t.maxNumBatchedTokens, 16, 65536);
    if (!is_kv_block_size(t.blockSize))
        t.blockSize = kDefaultKvBlockSize;
    t.numSpeculativeTokens = std::clamp(t.numSpeculativeTokens, 0, int(kMaxSpeculativeTokens));
    if (t.speculativeMethod != SpeculativeMethod::SelfQ4)
        t.speculativeMethod = SpeculativeMethod::Ngram; // the methods the app offers
    t.deviceBytes = std::max<qint64>(0, t.deviceBytes);
    // Unknown names (a settings file is external input) fall back to auto; aliases such as
    // "fp8" take their canonical name.
    const auto kv = parse_kv_dtype(t.kvCacheDtype.trimmed().toLower().toStdString());
    t.kvCacheDtype = kv ? QString::fromLatin1(kv_dtype_name(*kv)) : QStringLiteral("auto");
    return t;
}

QStringList devicePreferences() {
    return {QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")};
}

QString normalizedDevicePreference(const QString& text) {
    const QString t = text.trimmed().toLower();
    return devicePreferences().contains(t) ? t : QStringLiteral("auto");
}

QStringList weightDtypes() {
    return {QStringLiteral("auto"), QStringLiteral("bfloat16")};
}

QString normalizedWeightDtype(const QString& text) {
    const auto w = parse_weight_dtype(text.trimmed().toLower().toStdString());
    return QString::fromLatin1(weight_dtype_name(w.value_or(WeightDtype::Auto)));
}

void registerGenerationTypes() {
    qRegisterMetaType<EngineTuning>();
    qRegisterMetaType<SamplingSettings>();
    qRegisterMetaType<GenerationRequest>();
    qRegisterMetaType<GenerationStats>();
    qRegisterMetaType<ModelMetadata>();
    qRegisterMetaType<Conversation>();
    qRegisterMetaType<ChatMessage>();
}

} // namespace llmwb
