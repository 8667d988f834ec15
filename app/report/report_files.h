// A report's files as bytes, and back. results.json holds one JSON object per line, one per run
// (vLLM's --append-result layout; a one-run report is a plain JSON file) with the keys that
// `vllm bench serve --save-result` writes plus llmwb's; requests.csv and steps.csv hold every
// run's rows with the run's line number (0-based) in their first column "run". Reading checks
// everything (the files come from strangers): sizes, versions, types, ranges, row counts.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/report/bench_report.h"

namespace llmwb {

using ReportFiles = std::vector<std::pair<std::string, std::string>>; // name -> bytes

// Every file of the report, report.html included.
ReportFiles report_files(const BenchReport& report);

// The inverse of report_files (report.html is not read back). Errors name the file, the line
// and the reason: a missing file, malformed JSON, an unknown format version, a bad value.
Result<BenchReport> parse_report_files(const ReportFiles& files);

// One run's line of results.json (vLLM's keys, then llmwb's, with llmwb_report_version).
nlohmann::ordered_json run_results_json(const BenchRun& run);
// Reads a run's figures, names and settings from one results.json line (rows stay empty).
// `where` names the line in errors ("results.json:3").
Result<BenchRun> parse_run_results_json(const nlohmann::json& line, const std::string& where);
// The same over an ordered_json (what parse_report_files reads): `settings` keeps its key order.
Result<BenchRun> parse_run_results_json(const nlohmann::ordered_json& line,
                                        const std::string& where);

// The CSV files for these runs (the "run" column: the index in `runs`).
std::string requests_csv(const std::vector<const BenchRun*>& runs);
std::string steps_csv(const std::vector<const BenchRun*>& runs);
// Fills runs[k].requests / .steps from the CSV; a row naming a run outside `runs` is an error.
Status parse_requests_csv(std::string_view csv, std::vector<BenchRun>& runs);
Status parse_steps_csv(std::string_view csv, std::vector<BenchRun>& runs);

} // namespace llmwb
