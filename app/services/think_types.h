// What the Think harder page asks the engine worker to run (a ThinkPlan: a task set and a ladder
// of budgets), and what comes back (progress with the rungs done so far, and the finished run as
// one JSON object, the entry of think.json), as copyable values registered with
// qRegisterMetaType by registerThinkTypes().
//
// A run's JSON: {"name", "date", "model", "task_set" ("arith:2", "logic:1" or "file:NAME"),
// "count", "task_seed", "ladder", "temperature", "max_tokens", "seed", "price_per_hour",
// "status" (completed | cancelled | failed), "error", "tasks": [{question, answer}],
// "rungs": [think_rung_json with questions]}.
#pragma once

#include <QCoreApplication>
#include <QMetaType>
#include <QString>

#include <nlohmann/json.hpp>

namespace llmwb {

struct ThinkPlan {
    static constexpr int kMaxCount = 200;
    qint64 id = 0;
    QString name;
    QString taskKind = QStringLiteral("arith"); // "arith" | "logic" | "file"
    int level = 2;                              // 1..5 (generated tasks)
    int count = 8;                              // generated tasks (1..kMaxCount); a file: first N
    quint64 taskSeed = 1;
    QString taskFile; // taskKind "file": a JSONL file of {"question", "answer"}
    QString ladder = QStringLiteral("n=1,2,4,8"); // parse_think_ladder's text
    double temperature = 0.8;
    int maxTokens = 64;
    quint64 seed = 1;
    double pricePerHour = 0; // the user's machine price (cost axis); stored with the run

    // "" when it can run, else why not (for people).
    QString validate() const;
    QString taskSetName() const; // "arith:2", "file:tasks.jsonl"
};

struct ThinkProgress {
    qint64 planId = 0;
    int rung = 0, rungs = 0;              // the rung in progress (0-based) of how many
    QString rungLabel;                    // "n=4"
    int questionsDone = 0, questions = 0; // of the rung in progress
    QString stage;
    double elapsedS = 0;
    nlohmann::ordered_json done = nlohmann::ordered_json::array(); // finished rungs' summaries
};

struct ThinkRunOutcome {
    qint64 planId = 0;
    nlohmann::ordered_json run; // as above; "status" says how it ended
};

void registerThinkTypes();

} // namespace llmwb

Q_DECLARE_METATYPE(llmwb::ThinkPlan)
Q_DECLARE_METATYPE(llmwb::ThinkProgress)
Q_DECLARE_METATYPE(llmwb::ThinkRunOutcome)
