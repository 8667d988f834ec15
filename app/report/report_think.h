// Think harder runs in a report (issue 20): think.csv (one row per rung of every run) and
// report.html's section (accuracy against tokens spent per run, as an inline SVG chart, and a
// table of the rungs). The runs are think_types.h's JSON objects; values of the wrong type are
// shown empty, never trusted.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace llmwb {

// Header: run,name,model,task_set,rung,kind,value,tasks,correct,accuracy,tokens,
// tokens_per_task,wall_ms,ms_per_task,ties,no_answer
std::string think_csv(const nlohmann::ordered_json& runs);
// "" when there are no runs.
std::string think_html_section(const nlohmann::ordered_json& runs);

} // namespace llmwb
