// llmwb report: benchmark reports written by `llmwb bench --report` or the app.
//   llmwb report show X          each run's figures (vLLM's block and llmwb's) and the machine
//   llmwb report compare A [B…]  every run of the reports side by side, differences in %
// X is a .zip or a report folder.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/report_io.h"
#include "app/report/report_compare.h"

namespace llmwb::cli {

namespace {

const char* kReportHelp =
    "llmwb report show REPORT\n"
    "llmwb report compare REPORT [REPORT ...]\n"
    "  REPORT is a .zip or a folder written by `llmwb bench --report` or the app's export.\n"
    "  show      prints every run's figures (vLLM's result block and llmwb's) and a summary of\n"
    "            the machine and the model it ran on\n"
    "  compare   prints every run of the reports side by side, with each figure's difference\n"
    "            from the first run in percent (run names are prefixed with the report's file\n"
    "            name when two runs have the same name)\n";

std::string base_name(const std::string& path) {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/')
        p.pop_back();
    const auto slash = p.find_last_of('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

int show(const std::string& path) {
    const char* cmd = "report show";
    auto report = read_report(path);
    if (!report)
        return fail(cmd, report.message());
    make_terminal_safe(*report);
    const BenchReport& r = *report;
    std::printf("Report: %s%s%s (%zu run%s)\n", terminal_safe(base_name(path)).c_str(),
                r.title.empty() ? "" : " — ", r.title.c_str(), r.runs.size(),
                r.runs.size() == 1 ? "" : "s");
    for (const BenchRun& run : r.runs) {
        std::printf("\n");
        std::fputs(run_summary_text(run).c_str(), stdout);
    }
    const std::string env = environment_summary(r.environment);
    if (!env.empty()) {
        std::printf("\n=================== Environment ===================\n");
        std::fputs(env.c_str(), stdout);
    }
    return 0;
}

int compare(const std::vector<std::string>& paths) {
    const char* cmd = "report compare";
    std::vector<BenchRun> runs;
    std::vector<size_t> source; // the index in `paths` of each run
    for (size_t k = 0; k < paths.size(); ++k) {
        auto report = read_report(paths[k]);
        if (!report)
            return fail(cmd, report.message());
        make_terminal_safe(*report);
        for (BenchRun& run : report->runs) {
            runs.push_back(std::move(run));
            source.push_back(k);
        }
    }
    if (runs.size() < 2)
        return fail(cmd, "nothing to compare: the report" +
                             std::string(paths.size() > 1 ? "s hold" : " holds") + " one run");
    // Names that occur more than once get their report's file name in front; if that is not
    // enough (the same file twice), the report's position on the command line too.
    auto duplicated = [&] {
        std::map<std::string, int> count;
        for (const BenchRun& run : runs)
            ++count[run.name];
        std::vector<bool> dup;
        for (const BenchRun& run : runs)
            dup.push_back(count[run.name] > 1);
        return dup;
    };
    std::vector<bool> dup = duplicated();
    for (size_t i = 0; i < runs.size(); ++i)
        if (dup[i])
            runs[i].name = terminal_safe(base_name(paths[source[i]])) + ":" + runs[i].name;
    dup = duplicated();
    for (size_t i = 0; i < runs.size(); ++i)
        if (dup[i])
            runs[i].name = std::to_string(source[i] + 1) + ":" + runs[i].name;
    std::vector<const BenchRun*> ptrs;
    for (const BenchRun& run : runs)
        ptrs.push_back(&run);
    std::fputs(compare_text(ptrs).c_str(), stdout);
    return 0;
}

} // namespace

int cmd_report(const Args& args) {
    for (const std::string& a : args)
        if (a == "--help" || a == "-h") {
            std::fputs(kReportHelp, stdout);
            return 0;
        }
    if (args.empty())
        return fail("report", "give a subcommand: show REPORT | compare REPORT [REPORT ...]");
    const std::string& sub = args[0];
    std::vector<std::string> rest(args.begin() + 1, args.end());
    for (const std::string& a : rest)
        if (a.rfind("--", 0) == 0)
            return fail("report " + sub, "unknown option " + a);
    if (sub == "show") {
        if (rest.size() != 1)
            return fail("report show", "give one report (a .zip or a folder)");
        return show(rest[0]);
    }
    if (sub == "compare") {
        if (rest.empty())
            return fail("report compare", "give the reports to compare (.zip files or folders)");
        return compare(rest);
    }
    return fail("report", "unknown subcommand '" + sub + "' (show, compare)");
}

} // namespace llmwb::cli
