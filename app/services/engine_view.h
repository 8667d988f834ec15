// What the engine worker delivers to the Engine and Tuning docks after its steps: the latest
// EngineSnapshot (with the memory plan that sized the KV pool), the steps run since the previous
// view, rates and the backend the model runs on. Plain copyable values (registered with
// qRegisterMetaType by registerEngineViewTypes()), the only engine state ui/ reads.
#pragma once

#include <QHash>
#include <QMetaType>
#include <QSet>
#include <QString>
#include <QVector>

#include "app/services/generation_types.h"
#include "engine/runtime/device_types.h"
#include "engine/serving/engine_snapshot.h"

namespace llmwb {

// One request's share of one engine step (for the batch timeline).
struct StepSegment {
    qint64 requestId = -1; // engine request id
    int tokens = 0;        // scheduled, draft tokens included
    bool prefill = false;
    int drafts = 0;   // speculative draft tokens verified in this step
    int accepted = 0; // of them accepted
};

// One engine step, summarized.
struct StepRecord {
    qint64 step = 0;
    double ms = 0;
    int prefillTokens = 0;
    int decodeTokens = 0;
    int preempted = 0;
    QVector<StepSegment> segments;
};

// Time to first token of a request whose first token came since the previous view.
struct TtftSample {
    qint64 requestId = -1;
    double ttftMs = 0;
};

// The KV pool before a switch of its element type (the pool after it is the snapshot's plan).
struct KvDtypeSwitch {
    bool valid = false;
    KvDtype from = KvDtype::F32;
    int blocks = 0;
    int blockSize = 0;
    qint64 bytesPerBlock = 0;
};

// What the Engine dock draws: the latest snapshot and the steps run since the previous view.
struct EngineView {
    // snapshot.memory is the plan that sized the KV pool: its limit says what decided the
    // number of blocks (utilization, available memory, the context cap, a fallback with its
    // note), cap_blocks the context cap.
    EngineSnapshot snapshot;
    QVector<StepRecord> steps;
    double tokensPerSecond = 0;       // generated tokens per second since the previous view
    double promptTokensPerSecond = 0; // prompt (prefill) tokens computed per second
    QSet<qint64> loadTestRequests;    // engine ids of the load test's requests
    // Who the live requests that are not chats belong to, by engine id: the Local server's
    // ("API · curl/8.5.0 · 127.0.0.1").
    QHash<qint64, QString> requestLabels;
    qint64 timeMs = 0;         // when the view was made (ms since the worker started)
    QVector<TtftSample> ttfts; // first tokens since the previous view
    // The pool and its settings.
    EngineTuning tuning; // as applied (blockSize: the engine's current block size)
    QString replanError; // the last re-plan or rebuild failed: the previous pool stays
    // Speculative decoding: why the chosen method could not be set up ("" = none), and the
    // self-q4 draft's memory (0: none).
    QString speculationError;
    qint64 draftWeightBytes = 0, draftKvBytes = 0;
    // A utilization the engine refused (tuning keeps the one in force) and why, with the smallest
    // value that works ("" / 0: none refused since the last accepted change).
    QString utilizationRefusal;
    double refusedUtilization = 0;
    bool rebuildPending = false; // a block size change waits for the engine to be idle
    // A benchmark runs: the snapshot is its engine's; tuning applies when it ends; heldChats
    // chats wait for it.
    bool benchmarking = false;
    int heldChats = 0;
    // The backend.
    DeviceKind device = DeviceKind::Cpu;
    QString deviceName;             // the executor's device, e.g. "NVIDIA H200" or the CPU model
    KvDtype kvDtype = KvDtype::F32; // how the executor stores K and V
    // The KV-cache element type: the backend's own (tuning "auto"), the types it can store, the
    // one after a pending switch (applied before the engine's next step), and the last switch.
    KvDtype autoKvDtype = KvDtype::F32;
    QVector<KvDtype> supportedKvDtypes;
    KvDtype pendingKvDtype = KvDtype::F32;
    KvDtypeSwitch kvSwitch;
    // Why the chosen type is not in force ("" = it is; refusedKvDtype: the tuning value that was
    // refused, the tuning keeps the one in force), and how fp8 scales were found ("" = not fp8).
    QString kvDtypeError, refusedKvDtype, kvCalibration;
    QString cudaUnavailable; // why CUDA is not used ("" when it is or nobody asked)
};

void registerEngineViewTypes();

} // namespace llmwb

Q_DECLARE_METATYPE(llmwb::EngineSnapshot)
Q_DECLARE_METATYPE(llmwb::EngineView)
