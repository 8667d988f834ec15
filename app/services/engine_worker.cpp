#include "app/services/engine_worker.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QMutexLocker>
#include <cmath>

#include "engine/chat/chat_template.h"
#include "engine/model/demo_model.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_info.h"
#include "engine/runtime/generator.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/transformer.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb {

namespace {

// KV capacity of the single-request generator, in tokens (the scheduler will plan this from
// a memory budget).
constexpr int64_t kMaxContextTokens = 4096;

QString q(const std::string& s) { return QString::fromStdString(s); }

SamplingParams toParams(const SamplingSettings& s) {
    SamplingParams p;
    p.temperature = float(s.temperature);
    p.top_p = float(s.topP);
    p.top_k = s.topK;
    p.min_p = float(s.minP);
    p.repetition_penalty = float(s.repetitionPenalty);
    p.presence_penalty = float(s.presencePenalty);
    p.frequency_penalty = float(s.frequencyPenalty);
    p.max_tokens = std::max(1, s.maxTokens);
    if (s.seed >= 0)
        p.seed = uint64_t(s.seed);
    return p;
}

QStringList dtypeSummary(const LoadedModel& m) {
    QStringList lines;
    for (const TensorGroupTypes& g : tensor_group_types(m)) {
        QStringList types;
        for (const auto& [dtype, count] : g.dtype_counts)
            types << QStringLiteral("%1 ×%2").arg(q(dtype)).arg(count);
        lines << QStringLiteral("%1: %2").arg(q(g.group), types.join(QStringLiteral(", ")));
    }
    return lines;
}

}  // namespace

struct EngineWorker::Engine {
    std::unique_ptr<kernels::ThreadPool> pool;
    std::unique_ptr<LoadedModel> model;
    std::unique_ptr<Tokenizer> tokenizer;
    std::optional<ChatTemplate> chatTemplate;
    std::unique_ptr<Transformer> transformer;
    std::unique_ptr<KvCacheStorage> kv;
    ModelMetadata metadata;
};

EngineWorker::EngineWorker(int threads, QObject* parent)
    : QObject(parent), threads_(threads), engine_(std::make_unique<Engine>()) {
    registerGenerationTypes();
}

EngineWorker::~EngineWorker() = default;

void EngineWorker::stop(quint64 requestId) {
    {
        QMutexLocker lock(&mutex_);
        cancelled_.insert(requestId);
    }
    if (current_.load() == requestId)
        cancelCurrent_ = true;
}

void EngineWorker::stopAll() {
    shuttingDown_ = true;
    cancelCurrent_ = true;
}

bool EngineWorker::takeCancelled(quint64 requestId) {
    QMutexLocker lock(&mutex_);
    return cancelled_.remove(requestId);
}

void EngineWorker::loadDemoModel(const QString& dir) {
    emit modelLoading(tr("the demo model"));
    auto path = ensure_demo_model(dir.toStdString());
    if (!path) {
        emit loadFailed(q(path.message()));
        return;
    }
    loadModel(q(*path));
}

void EngineWorker::loadModel(const QString& path) {
    emit modelLoading(path);
    auto loaded = load_model(path.toStdString());
    if (!loaded) {
        emit loadFailed(q(loaded.message()));
        return;
    }
    auto tokenizer = Tokenizer::create((*loaded)->tokenizer);
    if (!tokenizer) {
        emit loadFailed(tr("%1: tokenizer: %2").arg(path, q(tokenizer.message())));
        return;
    }
    std::optional<ChatTemplate> tpl;
    if ((*loaded)->chat_template) {
        auto parsed = ChatTemplate::parse(*(*loaded)->chat_template);
        if (parsed)
            tpl = std::move(*parsed);
        // An unsupported template leaves the model usable with a plain prompt.
    }
    const ModelConfig& cfg = (*loaded)->config;
    const int64_t context = std::min<int64_t>(cfg.max_position > 0 ? cfg.max_position
                                                                    : kMaxContextTokens,
                                              kMaxContextTokens);
    const int32_t blockSize = KvCacheStorage::kDefaultBlockSize;
    auto kv = KvCacheStorage::create(cfg, int32_t((context + blockSize - 1) / blockSize),
                                     blockSize);
    if (!kv) {
        emit loadFailed(tr("%1: KV cache: %2").arg(path, q(kv.message())));
        return;
    }

    // Replace the previous model only now that the new one is complete.
    auto engine = std::make_unique<Engine>();
    engine->pool = engine_->pool ? std::move(engine_->pool)
                                 : std::make_unique<kernels::ThreadPool>(threads_);
    engine_.reset();
    engine->model = std::move(*loaded);
    engine->tokenizer = std::move(*tokenizer);
    engine->chatTemplate = std::move(tpl);
    engine->transformer = std::make_unique<Transformer>(*engine->model, *engine->pool);
    engine->kv = std::move(*kv);

    ModelMetadata& m = engine->metadata;
    const LoadedModel& lm = *engine->model;
    m.path = q(lm.path);
    m.name = lm.name.empty() ? QFileInfo(path).fileName() : q(lm.name);
    m.format = q(lm.format);
    m.architecture = q(cfg.arch_name.empty() ? architecture_name(cfg.arch) : cfg.arch_name);
    m.parameterCount = lm.parameter_count;
    m.weightBytes = lm.weight_bytes;
    m.contextLength = cfg.max_position;
    m.vocabSize = cfg.vocab_size;
    m.layers = cfg.num_layers;
    m.hiddenSize = cfg.hidden_size;
    m.heads = cfg.num_heads;
    m.kvHeads = cfg.num_kv_heads;
    m.dtypeSummary = dtypeSummary(lm);
    m.hasChatTemplate = engine->chatTemplate.has_value();
    m.randomWeights = lm.name == kDemoModelName ||
                      QFileInfo(path).fileName() == QLatin1String(kDemoModelFileName);
    engine_ = std::move(engine);
    emit modelLoaded(engine_->metadata);
}

QString EngineWorker::buildPrompt(const GenerationRequest& request, std::string* prompt,
                                  bool* addSpecialTokens) const {
    const Tokenizer& tok = *engine_->tokenizer;
    if (engine_->chatTemplate) {
        nlohmann::ordered_json messages = nlohmann::ordered_json::array();
        for (const PromptMessage& m : request.messages)
            messages.push_back({{"role", m.role.toStdString()}, {"content", m.content.toStdString()}});
        ChatRenderOptions opts;
        opts.add_generation_prompt = true;
        if (tok.valid_id(tok.bos_id()))
            opts.bos_token = tok.token_text(tok.bos_id());
        if (tok.valid_id(tok.eos_id()))
            opts.eos_token = tok.token_text(tok.eos_id());
        auto text = render_chat(*engine_->chatTemplate, messages, opts);
        if (!text)
            return tr("The chat template failed: %1").arg(q(text.message()));
        *prompt = std::move(*text);
        *addSpecialTokens = false;  // the template writes the special tokens itself
        return {};
    }
    // No template: a plain transcript.
    std::string p;
    for (const PromptMessage& m : request.messages)
        p += m.role.toStdString() + ": " + m.content.toStdString() + "\n";
    p += "assistant:";
    *prompt = std::move(p);
    *addSpecialTokens = true;
    return {};
}

void EngineWorker::generate(const GenerationRequest& request) {
    GenerationStats stats;
    stats.requestId = request.requestId;
    stats.conversationId = request.conversationId;
    if (shuttingDown_ || takeCancelled(request.requestId)) {
        stats.finishReason = QStringLiteral("cancelled");
        emit finished(stats);
        return;
    }
    if (!engine_ || !engine_->transformer) {
        emit failed(request.requestId, request.conversationId, tr("No model is loaded."));
        return;
    }
    current_ = request.requestId;
    cancelCurrent_ = false;
    if (takeCancelled(request.requestId) || shuttingDown_)  // a stop that raced with the start
        cancelCurrent_ = true;

    std::string prompt;
    bool addSpecial = true;
    if (const QString err = buildPrompt(request, &prompt, &addSpecial); !err.isEmpty()) {
        current_ = 0;
        emit failed(request.requestId, request.conversationId, err);
        return;
    }
    std::vector<int32_t> ids = engine_->tokenizer->encode(prompt, addSpecial);
    SamplingParams params = toParams(request.sampling);
    if (Status st = params.validate(); !st) {
        current_ = 0;
        emit failed(request.requestId, request.conversationId, q(st.message()));
        return;
    }
    // Leave room for at least one token in the context.
    const int64_t room = std::min<int64_t>(engine_->kv->num_slots(),
                                           engine_->model->config.max_position > 0
                                               ? engine_->model->config.max_position
                                               : engine_->kv->num_slots()) -
                         int64_t(ids.size());
    if (room < 1) {
        current_ = 0;
        emit failed(request.requestId, request.conversationId,
                    tr("The conversation (%1 tokens) no longer fits the context of the model; "
                       "start a new chat or delete messages.")
                        .arg(ids.size()));
        return;
    }
    params.max_tokens = int(std::min<int64_t>(params.max_tokens, room));

    QString pending;
    QElapsedTimer sinceSignal;
    sinceSignal.start();
    auto onToken = [&](const TokenEvent& ev) {
        pending += q(ev.text);
        if (!pending.isEmpty() && (ev.last || sinceSignal.elapsed() >= tokenIntervalMs_)) {
            emit token(request.requestId, request.conversationId, pending);
            pending.clear();
            sinceSignal.restart();
        }
        return !cancelCurrent_.load();
    };
    auto result = llmwb::generate(*engine_->transformer, *engine_->kv, *engine_->tokenizer,
                                  std::move(ids), params, onToken);
    if (!pending.isEmpty())
        emit token(request.requestId, request.conversationId, pending);
    current_ = 0;
    cancelCurrent_ = false;
    takeCancelled(request.requestId);  // a stop that arrived while it ran
    if (!result) {
        emit failed(request.requestId, request.conversationId, q(result.message()));
        return;
    }
    stats.promptTokens = result->prompt_tokens;
    stats.completionTokens = qint64(result->ids.size());
    stats.ttftMs = result->ttft_ms;
    stats.tokensPerSecond = result->decode_tokens_per_s;
    stats.totalMs = result->total_ms;
    stats.finishReason = q(result->finish_reason);
    emit finished(stats);
}

}  // namespace llmwb
