// EngineWorker: loading a model (the demo model, a file or folder) in stages, and the device
// choice that decides the backend it loads on. Split from engine_worker.cpp (the worker's
// generation, tuning and step loop).
#include "app/services/engine_worker.h"
#include "app/services/engine_worker_private.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QLocale>
#include <QMutexLocker>
#include <algorithm>
#include <cmath>

#include "engine/backend/device_select.h"
#include "engine/chat/chat_template.h"
#include "engine/model/demo_model.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_info.h"
#include "engine/runtime/model_executor.h"
#include "engine/runtime/panel_weights.h"
#include "engine/serving/draft_proposer.h"
#include "engine/serving/engine.h"
#include "engine/serving/memory_plan.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb {

namespace {

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

QList<TensorGroupInfo> tensorGroups(const LoadedModel& m) {
    QList<TensorGroupInfo> out;
    for (const TensorGroupTypes& g : tensor_group_types(m)) {
        TensorGroupInfo i;
        i.group = q(g.group);
        for (const auto& [dtype, count] : g.dtype_counts)
            i.typeCounts.insert(q(dtype), count);
        i.bytes = g.bytes;
        i.parameters = g.parameters;
        out << i;
    }
    return out;
}

} // namespace

void EngineWorker::loadDemoModel(const QString& dir) {
    loading_ = true;
    emit modelLoading(tr("the demo model"));
    emit loadProgress(0, tr("Writing the demo model"));
    auto path = ensure_demo_model(dir.toStdString());
    if (!path) {
        loading_ = false;
        loadCancel_ = false;
        emit loadFailed(q(path.message()));
        return;
    }
    loadModel(q(*path));
}

void EngineWorker::loadModel(const QString& path) {
    if (bench_) { // the benchmark ran on the model being replaced
        benchCancel_ = true;
        benchStep();
    }
    if (think_) // Think harder ran on the model being replaced
        endThink(QStringLiteral("failed"), tr("The model was replaced."));
    loading_ = true;
    updateServing(); // 503 while loading
    emit modelLoading(path);
    doLoad(path);
    loading_ = false;
    loadCancel_ = false;
    updateServing(); // the new model, or the previous one again
}

bool EngineWorker::loadStage(int percent, const QString& stage) {
    if (loadCancel_)
        return false;
    emit loadProgress(percent, stage);
    return !loadCancel_;
}

EngineConfig EngineWorker::engineConfig(int32_t blockSize) const {
    EngineConfig ec;
    ec.block_size = blockSize;
    ec.max_num_seqs = tuning_.maxNumSeqs;
    ec.max_num_batched_tokens = tuning_.maxNumBatchedTokens;
    ec.memory = memoryBudget();
    ec.record_steps = true; // the Engine dock draws the scheduled requests' block tables
    ec.speculative = speculativeConfig();
    return ec;
}

SpeculativeConfig EngineWorker::speculativeConfig() const {
    SpeculativeConfig c;
    if (tuning_.numSpeculativeTokens > 0) {
        c.method = tuning_.speculativeMethod;
        c.num_speculative_tokens = tuning_.numSpeculativeTokens;
        c.auto_k = tuning_.speculativeAuto;
    }
    return c;
}

void EngineWorker::applySpeculation() {
    applySpeculationConfig(speculativeConfig());
}

void EngineWorker::applySpeculationConfig(SpeculativeConfig c) {
    if (!model_ || !model_->serving)
        return;
    Engine& e = *model_->serving;
    speculationError_.clear();
    if (c.enabled() && c.method == SpeculativeMethod::SelfQ4 && !model_->draft) {
        const MemoryPlan& plan = e.memory_plan();
        auto d = DraftModelProposer::create_self_q4(
            *model_->model, *cpuPool_, static_cast<int64_t>(plan.num_blocks) * plan.block_size);
        if (d) {
            model_->draft = std::move(*d);
        } else {
            speculationError_ = q(d.message());
            c = SpeculativeConfig{}; // off: the target keeps serving
        }
    }
    e.set_draft_proposer(c.method == SpeculativeMethod::SelfQ4 ? model_->draft.get() : nullptr);
    (void)e.set_speculative(c); // valid: the tuning is clamped
}

MemoryBudget EngineWorker::memoryBudget() const {
    MemoryBudget b;
    b.utilization = tuning_.gpuMemoryUtilization;
    b.device_bytes = tuning_.deviceBytes; // 0: the executor's device memory
    b.fallback_when_short = true;         // keep the model usable; the plan's note says why
    return b;
}

// Stages: reading (the file is mapped and parsed), validating, tokenizer, preparing the weights,
// planning the KV cache. The new model replaces the loaded one only when it is complete, so a
// failure or a cancel leaves the previous model working.
void EngineWorker::doLoad(const QString& path) {
    if (!loadStage(5, tr("Reading the model file"))) {
        emit loadCancelled(path);
        return;
    }
    auto loaded = load_model(path.toStdString());
    if (!loaded) {
        emit loadFailed(q(loaded.message()));
        return;
    }
    if (!loadStage(40, tr("Validating the model"))) {
        emit loadCancelled(path);
        return;
    }
    const ModelConfig& cfg = (*loaded)->config;
    if (cfg.vocab_size <= 0 || cfg.num_layers <= 0 || cfg.hidden_size <= 0) {
        emit loadFailed(tr("%1: the model has no layers or no vocabulary").arg(path));
        return;
    }
    const QStringList dtypes = dtypeSummary(**loaded);
    const QList<TensorGroupInfo> groups = tensorGroups(**loaded);
    const TypeHistogram histogram = type_histogram(**loaded);
    if (!loadStage(50, tr("Loading the tokenizer"))) {
        emit loadCancelled(path);
        return;
    }
    auto tokenizer = Tokenizer::create((*loaded)->tokenizer);
    if (!tokenizer) {
        emit loadFailed(tr("%1: tokenizer: %2").arg(path, q(tokenizer.message())));
        return;
    }
    std::optional<ChatTemplate> tpl;
    if ((*loaded)->chat_template) {
        Result<ChatTemplate> parsed = make_error("not parsed");
        try {
            parsed = ChatTemplate::parse(*(*loaded)->chat_template);
        } catch (const std::exception&) { // bad_alloc: the model stays usable without it
        }
        if (parsed)
            tpl = std::move(*parsed);
        // An unsupported template leaves the model usable with a plain prompt.
    }
    if (!loadStage(65, tr("Preparing the weights"))) {
        emit loadCancelled(path);
        return;
    }
    if (!cpuPool_)
        cpuPool_ = std::make_unique<kernels::ThreadPool>(cpuThreads_);
    auto engine = std::make_unique<Model>();
    engine->model = std::move(*loaded);
    engine->tokenizer = std::move(*tokenizer);
    engine->chatTemplate = std::move(tpl);
    engine->loadPath = path;
    // The device: CUDA as the preference allows (the same choice as `llmwb --device`).
    const DevicePreference pref =
        parse_device_preference(devicePref_.toStdString()).value_or(DevicePreference::Auto);
    CudaExecutorOptions cudaOptions;
    cudaOptions.max_tokens = std::max(1, tuning_.maxNumBatchedTokens);
    cudaOptions.max_seqs = std::max(1, tuning_.maxNumSeqs);
    const WeightDtype weights =
        parse_weight_dtype(weightDtype_.toStdString()).value_or(WeightDtype::Auto);
    auto backend = open_backend(pref, *engine->model, *cpuPool_, cudaOptions, cudaPlugin_, weights);
    if (!backend) { // only when CUDA was asked for
        cudaUnavailable_ = q(backend.message());
        emit deviceAvailability(false, cudaUnavailable_);
        emit loadFailed(tr("CUDA is unavailable: %1").arg(cudaUnavailable_));
        return;
    }
    engine->backend = std::move(*backend);
    if (engine->backend.plugin)
        cudaPlugin_ = engine->backend.plugin;
    const ModelExecutor& exec = *engine->backend.executor;
    const bool onCuda = engine->backend.on_cuda();
    if (onCuda) {
        cudaUnavailable_.clear();
    } else if (pref == DevicePreference::Auto && !engine->backend.cuda_unavailable.empty()) {
        cudaUnavailable_ = q(engine->backend.cuda_unavailable);
        emit deviceAvailability(false, cudaUnavailable_);
    }
    if (!loadStage(85, tr("Planning the KV cache"))) {
        emit loadCancelled(path);
        return;
    }
    applyKvDtypeAtLoad(*engine); // the tuning's KV type (fp8: calibrated first)
    auto serving = Engine::create(*engine->backend.executor, *engine->tokenizer,
                                  engineConfig(tuning_.blockSize));
    if (!serving) {
        emit loadFailed(tr("%1: KV cache: %2").arg(path, q(serving.message())));
        return;
    }
    if (loadCancel_) {
        emit loadCancelled(path);
        return;
    }
    engine->serving = std::move(*serving);
    replanError_.clear();
    rebuildPending_ = false;

    ModelMetadata& m = engine->metadata;
    const LoadedModel& lm = *engine->model;
    m.path = q(lm.path);
    m.name = lm.name.empty() ? QFileInfo(path).fileName() : q(lm.name);
    m.format = q(lm.format);
    m.architecture = q(cfg.arch_name.empty() ? architecture_name(cfg.arch) : cfg.arch_name);
    m.parameterCount = lm.parameter_count;
    m.activeParameterCount = parameter_counts(lm).active;
    m.weightBytes = lm.weight_bytes;
    m.contextLength = cfg.max_position;
    m.vocabSize = cfg.vocab_size;
    m.layers = cfg.num_layers;
    m.hiddenSize = cfg.hidden_size;
    m.heads = cfg.num_heads;
    m.kvHeads = cfg.num_kv_heads;
    m.dtypeSummary = dtypes;
    m.tensorGroups = groups;
    m.matrixBitsPerWeight = histogram.matrix_bits_per_weight();
    m.bitsPerWeight = histogram.bits_per_weight();
    m.hasChatTemplate = engine->chatTemplate.has_value();
    m.hasThinkTokens = engine->tokenizer->encode("<think>", false).size() == 1 &&
                       engine->tokenizer->encode("</think>", false).size() == 1;
    m.randomWeights = lm.name == kDemoModelName ||
                      QFileInfo(path).fileName() == QLatin1String(kDemoModelFileName);
    m.devicePreference = devicePref_;
    m.device = exec.kind();
    m.deviceName = q(exec.device_name());
    m.cudaUnavailable = onCuda ? QString() : cudaUnavailable_;
    m.weightDtype = weightDtype_;
    m.weightsNotCast = q(engine->backend.weights_not_cast);
    if (const CpuTransformer* tf = engine->backend.transformer.get()) {
        m.castMatrices = tf->panel_weights().cast_matrices();
        m.castSourceBytes = tf->panel_weights().cast_source_bytes();
        m.castBytes = tf->panel_weights().cast_bytes();
    }
    view_.device = exec.kind();
    view_.deviceName = m.deviceName;
    view_.kvDtype = exec.kv_dtype();
    view_.cudaUnavailable = m.cudaUnavailable;
    deviceReloadPending_ = false;
    // Replace the previous model only now that the new one is complete.
    cancelEverything();
    model_ = std::move(engine);
    applySpeculation(); // self-q4: the 4-bit draft of the new model
    emit loadProgress(100, tr("Ready"));
    emit modelLoaded(model_->metadata);
    emitView();
}

void EngineWorker::probeDevices() {
    cudaUnavailable_ = q(cuda_unavailable_reason());
    emit deviceAvailability(cudaUnavailable_.isEmpty(), cudaUnavailable_);
}

void EngineWorker::setDevice(const QString& preference) {
    devicePref_ = normalizedDevicePreference(preference);
    if (!model_ || !model_->serving)
        return;
    // Keep the loaded model when it already runs where the new preference would put it.
    const bool onCuda = model_->backend.on_cuda();
    const bool stays = devicePref_ == QLatin1String("cpu") ? !onCuda
                       : devicePref_ == QLatin1String("cuda")
                           ? onCuda
                           : onCuda || !cudaUnavailable_.isEmpty();
    if (stays) {
        model_->metadata.devicePreference = devicePref_;
        deviceReloadPending_ = false;
        return;
    }
    deviceReloadPending_ = true;
    if (!model_->serving->has_unfinished() && !loading_)
        reloadOnNewDevice();
}

void EngineWorker::setWeightDtype(const QString& dtype) {
    const QString before = weightDtype_;
    weightDtype_ = normalizedWeightDtype(dtype);
    if (!model_ || !model_->serving || weightDtype_ == before)
        return;
    if (model_->backend.on_cuda()) // runs the weights as stored either way (the next load says)
        return;
    deviceReloadPending_ = true;
    if (!model_->serving->has_unfinished() && !loading_)
        reloadOnNewDevice();
}

void EngineWorker::reloadOnNewDevice() {
    deviceReloadPending_ = false;
    const QString path = model_->loadPath; // a copy: the load replaces model_
    if (!path.isEmpty())
        loadModel(path);
}

} // namespace llmwb
