// Values that cross the thread boundary between the GUI and the engine worker: the sampling
// settings of a conversation, a generation request, its figures, and the metadata of the
// loaded model. Registered with qRegisterMetaType by registerGenerationTypes().
#pragma once

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include "engine/runtime/device_types.h"
#include "engine/runtime/kv_block_size.h"
#include "engine/serving/request.h"
#include "engine/serving/speculative.h"

namespace llmwb {

// Sampling parameters as the user sets them (per conversation, stored as JSON).
struct SamplingSettings {
    double temperature = 0.7;
    double topP = 0.9;
    int topK = 40;
    double minP = 0.0;
    double repetitionPenalty = 1.0;
    double presencePenalty = 0.0;
    double frequencyPenalty = 0.0;
    int maxTokens = 512;
    qint64 seed = -1; // -1 = random
    // Thinking models (Qwen3's <think> ... </think>): enableThinking -1 = the chat template's
    // default, 0 = off, 1 = on (the template's enable_thinking); thinkingBudget -1 = no cap, else
    // the thinking tokens after which </think> is forced (refused on models without them).
    int enableThinking = -1;
    int thinkingBudget = -1;

    QJsonObject toJson() const;
    // Unknown keys are ignored, missing ones keep their defaults, values out of range are
    // clamped into range (the JSON comes from the database file: external input).
    static SamplingSettings fromJson(const QJsonObject& o);
    bool operator==(const SamplingSettings&) const = default;
};

struct PromptMessage {
    QString role; // "system", "user", "assistant"
    QString content;
};

struct GenerationRequest {
    quint64 requestId = 0;
    qint64 conversationId = 0;
    QList<PromptMessage> messages;
    SamplingSettings sampling;
};

struct GenerationStats {
    quint64 requestId = 0;
    qint64 conversationId = 0;
    qint64 promptTokens = 0;
    qint64 completionTokens = 0;
    // A remote endpoint that sent no usage: completionTokens counts the streamed text chunks
    // (promptTokens is unknown, 0).
    bool completionTokensCounted = false;
    double ttftMs = 0;
    double tokensPerSecond = 0; // decode rate
    double totalMs = 0;
    // Stop (a stop token or string), Length (the request's max tokens), Context (the model's
    // context is full), KvPool (the whole KV pool, smaller than the context, is full) or Aborted
    // (the user stopped it). A request the backend failed ends with EngineWorker::failed().
    FinishReason finishReason = FinishReason::None;
    bool cancelled() const { return finishReason == FinishReason::Aborted; }
};

// One tensor group of the loaded model (engine/model/model_info.h: tensor_group_types).
struct TensorGroupInfo {
    QString group; // "embedding", "attention", "ffn", "norm", "output", "rope_freqs"
    QMap<QString, int> typeCounts; // dtype name ("Q4_K") -> tensors
    qint64 bytes = 0;              // as stored
    qint64 parameters = 0;
    double bitsPerWeight() const { return parameters > 0 ? bytes * 8.0 / parameters : 0.0; }
};

// What the Model panel shows about the loaded model.
struct ModelMetadata {
    QString path;
    QString name;
    QString format;       // "gguf", "safetensors"
    QString architecture; // "llama", "qwen2", "qwen3"
    qint64 parameterCount = 0;
    qint64 activeParameterCount = 0; // used per token: < parameterCount for a mixture of experts
    qint64 weightBytes = 0;
    int contextLength = 0;
    int vocabSize = 0;
    int layers = 0;
    int hiddenSize = 0;
    int heads = 0;
    int kvHeads = 0;
    QStringList dtypeSummary; // "attention: q4_0 ×8", one line per tensor group
    QList<TensorGroupInfo> tensorGroups;
    double matrixBitsPerWeight = 0; // average over the weight matrices (2-D tensors)
    double bitsPerWeight = 0;       // average over all tensors
    bool hasChatTemplate = false;
    bool hasThinkTokens = false; // <think> and </think> are single tokens (thinking budgets)
    bool randomWeights = false;  // the built-in demo model (not trained: a bigram table)
    // The backend the model runs on.
    QString devicePreference = QStringLiteral("auto"); // as asked: "auto", "cpu", "cuda"
    DeviceKind device = DeviceKind::Cpu;               // used
    QString deviceName = QStringLiteral("CPU");        // e.g. "NVIDIA H200" on CUDA
    QString cudaUnavailable; // why CUDA is not used ("" when it is, or the CPU was asked for)
    // --dtype: "auto" (as stored) or "bfloat16" (F32/F16 matrices cast at load on the CPU), and
    // what the cast did: matrices cast, their bytes before and after.
    QString weightDtype = QStringLiteral("auto");
    QString weightsNotCast; // a cast asked for that did not apply: why
    int castMatrices = 0;
    qint64 castSourceBytes = 0, castBytes = 0;
};

// The device preferences as AppSettings and EngineWorker::setDevice spell them.
QStringList devicePreferences(); // "auto", "cpu", "cuda"
// A known preference as is; anything else (external input) reads as "auto".
QString normalizedDevicePreference(const QString& text);
// The weight types as AppSettings and EngineWorker::setWeightDtype spell them (vLLM's --dtype).
QStringList weightDtypes(); // "auto", "bfloat16"
// A known type as is ("bf16": "bfloat16"); anything else reads as "auto".
QString normalizedWeightDtype(const QString& text);

// Engine settings from the Tuning dock. Utilization, max_num_seqs and max_num_batched_tokens
// apply while requests run; the block size applies when the engine is idle (it rebuilds the
// engine). numSpeculativeTokens (0..16, 0: off) turns on speculative decoding with prompt-lookup
// (ngram) drafts; it applies from the next step. The KV-cache element type is kvCacheDtype
// ("auto": the backend's own, fp16 on the CPU and on CUDA; EngineView::autoKvDtype).
struct EngineTuning {
    // gpu_memory_utilization (engine/serving/memory_plan.h). On CUDA the fraction of the GPU's
    // memory for weights, workspace and KV cache, as in vLLM. On the CPU a share of the memory
    // available to the engine (free RAM plus what it holds), and the pool holds at most
    // kCpuContextSeqs (4) full contexts, committed by the OS only as blocks are written: a
    // 0.5B model with a 32k context gets 8,192 blocks whose RAM is what the chats wrote.
    // 0.5, not vLLM's 0.9: on the CPU the RAM is shared with the system and the GUI. A value
    // too small for what runs is refused by the worker (EngineView::utilizationRefusal).
    static constexpr double kDefaultUtilization = 0.5;
    static constexpr double kMinUtilization = 0.0005;
    double gpuMemoryUtilization = kDefaultUtilization;
    int maxNumSeqs = 16;
    int maxNumBatchedTokens = 512;
    int blockSize = kDefaultKvBlockSize; // one of kKvBlockSizes
    int numSpeculativeTokens = 0;        // drafts per step, 0..kMaxSpeculativeTokens (0: off)
    // Where drafts come from: Ngram (prompt lookup) or SelfQ4 (the model's own weights at 4 bits,
    // made when first chosen; its memory is on the Memory panel).
    SpeculativeMethod speculativeMethod = SpeculativeMethod::Ngram;
    // k chosen per request and step (numSpeculativeTokens is then the most).
    bool speculativeAuto = false;
    // The KV cache's element type by vLLM's kv_cache_dtype name: "auto" (the backend's: f16 on
    // the CPU and on CUDA), "f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2" or "int8". Switching it
    // re-plans the pool live (running requests are recomputed in the new type); applied at load.
    QString kvCacheDtype = QStringLiteral("auto");
    // 0: the executor's device memory (RAM on the CPU); tests set a fixed size.
    qint64 deviceBytes = 0;

    // Values out of range are clamped (settings files are external input).
    EngineTuning clamped() const;
    bool operator==(const EngineTuning&) const = default;
};

void registerGenerationTypes();

} // namespace llmwb

Q_DECLARE_METATYPE(llmwb::SamplingSettings)
Q_DECLARE_METATYPE(llmwb::GenerationRequest)
Q_DECLARE_METATYPE(llmwb::GenerationStats)
Q_DECLARE_METATYPE(llmwb::ModelMetadata)
Q_DECLARE_METATYPE(llmwb::EngineTuning)
