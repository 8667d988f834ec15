// What the Benchmark page asks the engine worker to run, and what comes back, as copyable values
// (registered with qRegisterMetaType by registerBenchTypes()).
//
// A BenchPlan is a workload (synthetic prompts drawn as vLLM's random dataset, a JSONL file of
// prompts, or the user's own messages), the scheduling policies to compare, and optionally one
// setting swept over a list of values; every (value, policy) pair is one run, in that order.
#pragma once

#include <QCoreApplication>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVector>

#include "app/report/bench_report.h"

namespace llmwb {

struct BenchWorkload {
    static constexpr int kMaxPrompts = 10000;
    int numPrompts = 32;
    int inputLen = 128;
    int outputLen = 128;
    double rangeRatio = 0;  // [0, 1): lengths uniform in len x [1 - r, 1 + r]
    int prefixLen = 0;      // a shared prefix before every prompt (prefix caching)
    double requestRate = 0; // requests/s (Poisson when burstiness 1); 0: all at once
    double burstiness = 1.0;
    int maxConcurrency = 0; // 0: no cap
    quint64 seed = 0;
    QString dataset;     // a JSONL file of prompts ("" = synthetic, unless prompts are given)
    QStringList prompts; // the user's own messages (each generates outputLen tokens)

    // "random", the JSONL file's name, or "conversations".
    QString datasetName() const;
};

struct BenchPlan {
    Q_DECLARE_TR_FUNCTIONS(llmwb::BenchPlan)

  public:
    qint64 id = 0; // set by the BenchController; echoed in every signal of the plan
    QString name;  // the user's label ("" = named after the policy / sweep point)
    BenchWorkload workload;
    QStringList policies{QStringLiteral("continuous")}; // continuous | static | sequential
    // vLLM's name of the swept setting ("" = no sweep) and its values.
    QString sweepSetting;
    QVector<double> sweepValues;
    QString percentileMetrics = QStringLiteral("ttft,tpot,itl,e2el");
    QVector<double> metricPercentiles{50, 90, 99};

    static QStringList sweepableSettings(); // gpu_memory_utilization, max_num_seqs, ...
    // "" when the plan can run, else why not (one line, for people).
    QString validate() const;
    int runCount() const;
};

struct BenchProgress {
    qint64 planId = 0;
    int run = 0, runs = 0; // the current run (0-based) of the plan's runs
    QString runName;
    int completed = 0, total = 0; // requests of the current run
    double elapsedS = 0;          // since the plan started
    double etaS = -1;             // estimated time left (-1: unknown yet)
    QString stage;                // what happens now, for people ("Hashing the model file")
};

// One finished run (completed, cancelled or failed) with the machine it ran on.
struct BenchRunOutcome {
    qint64 planId = 0;
    int index = 0; // its place in the plan
    BenchRun run;
    nlohmann::ordered_json environment;
};

void registerBenchTypes();

} // namespace llmwb

Q_DECLARE_METATYPE(llmwb::BenchPlan)
Q_DECLARE_METATYPE(llmwb::BenchProgress)
Q_DECLARE_METATYPE(llmwb::BenchRunOutcome)
