// The engine worker's private parts, shared by its source files (engine_worker.cpp: loading,
// chats, tuning; engine_worker_bench.cpp: benchmarks).
#pragma once

#include <QElapsedTimer>
#include <optional>

#include "app/services/engine_worker.h"
#include "app/services/engine_worker_server.h"
#include "engine/backend/device_select.h"
#include "engine/chat/chat_template.h"
#include "engine/model/loaded_model.h"
#include "engine/serving/bench_session.h"
#include "engine/serving/draft_proposer.h"
#include "engine/serving/engine.h"
#include "engine/tokenizer/tokenizer.h"

namespace llmwb {

inline QString q(const std::string& s) {
    return QString::fromStdString(s);
}

struct EngineWorker::Model {
    std::unique_ptr<LoadedModel> model;
    std::shared_ptr<Tokenizer> tokenizer; // shared with the server's ServedGeneration
    std::optional<ChatTemplate> chatTemplate;
    Backend backend; // the executor (on the CPU over a CpuTransformer of `model`)
    // self-q4 speculation: the model's matrices at 4 bits (CPU), made when first chosen.
    std::unique_ptr<DraftModelProposer> draft;
    KvDtype autoKv = KvDtype::F32;   // the backend's own KV type (the tuning's "auto")
    std::unique_ptr<Engine> serving; // last: it refers to the executor, tokenizer and draft
    QString loadPath;                // what loadModel() was given (for a reload)
    ModelMetadata metadata;
    StepOutputs out;
};

struct EngineWorker::Active {
    quint64 requestId = 0; // the app's id (0: a load test request)
    qint64 conversationId = 0;
    bool loadTest = false;
    QString pending;
    QElapsedTimer sinceSignal;
    SnapshotRequest metrics;
    // The answer's max tokens as the user asked; the engine's may be lower (clamped to the room
    // left in the context or the pool), and an end there is not the user's limit.
    int64_t askedMaxTokens = 0;
    int64_t contextTokens = 0; // the model's context (0: unknown)
    // A server request (Local server): its outputs go to this stream as choice streamIndex;
    // label: who asked ("API · curl/8.5.0 · 127.0.0.1") for the Engine dock's views.
    std::shared_ptr<RequestStream> stream;
    int32_t streamIndex = 0;
    QString label;
};

// A benchmark plan in progress: its runs in order, the workload (token ids, made once), the
// machine it runs on, and the run in progress (its engine is model_->serving meanwhile).
struct EngineWorker::BenchJob {
    struct RunSpec {
        QString name;
        QString policy;
        QString sweepSetting;
        double sweepValue = 0;
    };
    BenchPlan plan;
    std::vector<RunSpec> specs;
    size_t current = 0;
    std::vector<BenchRequest> workload;
    nlohmann::ordered_json environment;
    std::unique_ptr<BenchSession> session; // the run in progress
    EngineConfig runConfig;                // its engine's settings
    BenchRunOptions runOptions;            // its load (rate, static batches)
    std::string runDate;                   // its start, "YYYYmmdd-HHMMSS"
    QElapsedTimer clock;                   // since the plan started
    QElapsedTimer sinceProgress;
    QString failure; // the first run that failed (the plan's message)
    bool waitingForChats = false;
    int64_t lastStep = -1; // the last engine step shown (the run's engine counts from 0)
};

} // namespace llmwb
