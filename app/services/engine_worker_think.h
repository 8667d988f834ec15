// The engine worker's Think harder run in progress (engine_worker_think.cpp): the tasks, their
// prompts (token ids, made once), the ladder, and the rung in progress. Sample rungs add every
// question's request group to the chat engine at once (chats share the batch meanwhile); beam
// rungs run one question at a time when the engine is otherwise idle.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <optional>
#include <vector>

#include "app/services/engine_worker.h"
#include "app/services/think_types.h"
#include "engine/serving/think_ladder.h"

namespace llmwb {

struct EngineWorker::ThinkJob {
    struct Pending {
        int question = 0;
        int choice = 0;
    };
    ThinkPlan plan;
    const void* model = nullptr; // the Model it runs on (a load ends the run)
    std::optional<TaskSetSpec> generated;
    std::vector<ReasoningTask> tasks;
    std::vector<std::vector<int32_t>> prompts;
    std::vector<ThinkRung> rungs;
    SamplingParams base;
    size_t rung = 0;
    bool submitted = false;                        // the rung's requests were added
    size_t nextQuestion = 0;                       // beam rungs: the next question to search
    ThinkRungResult current;                       // the rung in progress
    QHash<qint64, Pending> pending;                // engine id -> its question and choice
    std::vector<std::vector<ThinkSample>> samples; // per question of the rung
    std::vector<int> left;                         // choices still running, per question
    std::vector<ThinkQuestionResult> scored;       // per question, once all its choices ended
    int questionsDone = 0;
    QString failure; // a request the backend failed: the run ends with it
    QElapsedTimer clock, rungClock, sinceProgress;
    nlohmann::ordered_json run;
    nlohmann::ordered_json rungsDone = nlohmann::ordered_json::array(); // with questions
    nlohmann::ordered_json summaries = nlohmann::ordered_json::array(); // without
};

} // namespace llmwb
