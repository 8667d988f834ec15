// A report's files: results.json (one line per run), requests.csv, steps.csv,
// environment.json and report.html; and the reader of all but the last.
#include "app/report/report_files.h"

#include "app/report/report_html.h"
#include "app/report/report_text.h"
#include "app/report/report_think.h"

namespace llmwb {

namespace {

using oj = nlohmann::ordered_json;

// environment.json keys that are the report's, not the machine's.
constexpr const char* kEnvVersionKey = "llmwb_report_version";
constexpr const char* kEnvTitleKey = "report_title";

std::string environment_json(const BenchReport& report) {
    oj j = oj::object();
    j[kEnvVersionKey] = kBenchReportVersion;
    j[kEnvTitleKey] = report.title;
    if (report.environment.is_object())
        for (const auto& [k, v] : report.environment.items())
            if (k != kEnvVersionKey && k != kEnvTitleKey)
                j[k] = v;
    return j.dump(2) + "\n";
}

Status parse_environment_json(std::string_view text, BenchReport& report) {
    const std::string file = kReportEnvironment;
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        return make_error(file + ": empty file");
    auto j = report_detail::parse_json_text(text, file);
    if (!j)
        return j.error();
    if (!j->is_object())
        return make_error(file + ": not a JSON object");
    const auto v = j->find(kEnvVersionKey);
    if (v == j->end())
        return make_error(file + ": missing key '" + kEnvVersionKey + "'");
    if (!v->is_number_integer())
        return make_error(file + ": key '" + kEnvVersionKey + "' is not an integer");
    if (v->get<int64_t>() != kBenchReportVersion)
        return make_error(file + ": report format version " + std::to_string(v->get<int64_t>()) +
                          " is not supported (this build reads " +
                          std::to_string(kBenchReportVersion) + ")");
    const auto t = j->find(kEnvTitleKey);
    if (t != j->end()) {
        if (!t->is_string())
            return make_error(file + ": key '" + kEnvTitleKey + "' is not a string");
        report.title = t->get<std::string>();
    }
    report.environment = oj::object();
    for (const auto& [k, val] : j->items())
        if (k != kEnvVersionKey && k != kEnvTitleKey)
            report.environment[k] = val;
    return ok_status();
}

Status parse_results_json(std::string_view text, BenchReport& report) {
    const std::string file = kReportResults;
    if (text.size() > report_detail::kMaxReportFileBytes)
        return make_error(file + ": larger than " +
                          std::to_string(report_detail::kMaxReportFileBytes >> 20) + " MiB");
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        return make_error(file + ": empty file (no runs)");
    // One run per line (--append-result); a one-run file may also be one pretty-printed object.
    if (text.find('\n') != text.npos && text.find_first_not_of(" \t\r\n") < text.size() &&
        text[text.find_first_not_of(" \t\r\n")] == '{') {
        const size_t first_nl = text.find('\n');
        const std::string_view first_line = text.substr(0, first_nl);
        auto whole = report_detail::parse_json_text(first_line, file + ":1");
        if (!whole) {
            // Not a line of its own: read the whole file as one object.
            auto all = report_detail::parse_json_text(text, file);
            if (all) {
                auto run = parse_run_results_json(*all, file);
                if (!run)
                    return run.error();
                report.runs.push_back(std::move(*run));
                return ok_status();
            }
        }
    }
    size_t b = 0;
    int64_t line_no = 0;
    while (b < text.size()) {
        size_t e = text.find('\n', b);
        if (e == text.npos)
            e = text.size();
        ++line_no;
        std::string_view line = text.substr(b, e - b);
        b = e + 1;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos)
            continue;
        const std::string where = file + ":" + std::to_string(line_no);
        auto j = report_detail::parse_json_text(line, where);
        if (!j)
            return j.error();
        auto run = parse_run_results_json(*j, where);
        if (!run)
            return run.error();
        report.runs.push_back(std::move(*run));
    }
    return ok_status();
}

} // namespace

ReportFiles report_files(const BenchReport& report) {
    std::vector<const BenchRun*> runs;
    for (const BenchRun& r : report.runs)
        runs.push_back(&r);
    std::string results;
    for (const BenchRun& r : report.runs)
        results += run_results_json(r).dump() + "\n";
    ReportFiles files;
    files.emplace_back(kReportHtml, report_html(report));
    files.emplace_back(kReportResults, std::move(results));
    files.emplace_back(kReportRequests, requests_csv(runs));
    files.emplace_back(kReportSteps, steps_csv(runs));
    files.emplace_back(kReportEnvironment, environment_json(report));
    if (report.think.is_array() && !report.think.empty()) {
        files.emplace_back(kReportThink, report.think.dump(1) + "\n");
        files.emplace_back(kReportThinkCsv, think_csv(report.think));
    }
    return files;
}

Result<BenchReport> parse_report_files(const ReportFiles& files) {
    const std::string* results = nullptr;
    const std::string* environment = nullptr;
    const std::string* requests = nullptr;
    const std::string* steps = nullptr;
    for (const auto& [name, bytes] : files) {
        const std::string** slot = name == kReportResults       ? &results
                                   : name == kReportEnvironment ? &environment
                                   : name == kReportRequests    ? &requests
                                   : name == kReportSteps       ? &steps
                                                                : nullptr;
        if (!slot)
            continue; // report.html and anything else: not read
        if (*slot)
            return make_error(name + ": the report holds it twice");
        if (bytes.size() > report_detail::kMaxReportFileBytes)
            return make_error(name + ": larger than " +
                              std::to_string(report_detail::kMaxReportFileBytes >> 20) + " MiB");
        *slot = &bytes;
    }
    if (!results)
        return make_error(std::string(kReportResults) + ": missing from the report");
    if (!environment)
        return make_error(std::string(kReportEnvironment) + ": missing from the report");
    BenchReport report;
    if (Status st = parse_environment_json(*environment, report); !st)
        return st.error();
    if (Status st = parse_results_json(*results, report); !st)
        return st.error();
    if (requests)
        if (Status st = parse_requests_csv(*requests, report.runs); !st)
            return st.error();
    if (steps)
        if (Status st = parse_steps_csv(*steps, report.runs); !st)
            return st.error();
    return report;
}

} // namespace llmwb
