// Benchmark reports on disk for the CLI: `llmwb bench --report OUT` writes one, `llmwb report
// show|compare` reads them. OUT ending in .zip is a zip archive (QuaZip; only in builds with Qt,
// LLMWB_HAVE_REPORT_ZIP); anything else is a folder holding the same files. Reading a folder reads
// the report's five names only, each bounded in size; reading a zip goes through read_report_zip
// (hostile-archive checks).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "app/report/bench_report.h"
#include "engine/util/result.h"

namespace llmwb::cli {

// No report file is read above this size, nor a report above the total.
inline constexpr int64_t kMaxReportFileBytes = 256ll << 20;
inline constexpr int64_t kMaxReportTotalBytes = 512ll << 20;

bool report_is_zip(const std::string& path); // ends in ".zip" (any case)
bool have_report_zip();                      // this build writes and reads zip archives

// Checks before a benchmark runs that `out` can take a report: a zip needs zip support and an
// existing folder to go in; a folder must not be a file. Errors name `out`.
Status check_report_target(const std::string& out);
// Writes every file of report_files(report): into the zip (a temporary name, then renamed) or
// into the folder (created; the report's names are overwritten, nothing else is touched).
Status write_report(const std::string& out, const BenchReport& report);
// Reads a report from a zip or a folder. Errors name the path and the reason.
Result<BenchReport> read_report(const std::string& path);

// Text from a report (a stranger's file) made safe to print on a terminal: C0 and C1 control
// characters (ESC, CSI, ...; newlines and tabs included) become '?', invalid UTF-8 bytes too.
std::string terminal_safe(std::string_view text);
// The report's strings (title, run names, policies, errors, ...) through terminal_safe.
void make_terminal_safe(BenchReport& report);

// A few lines about the machine and the model of environment.json (what `report show` prints
// under the runs); keys missing or of the wrong type are left out, values are terminal_safe.
std::string environment_summary(const nlohmann::ordered_json& env);

} // namespace llmwb::cli
