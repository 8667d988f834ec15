// Reports on disk for the CLI (app/cli/report_io): a folder report written and read back, only
// the report's names overwritten, bounded and regular-file-only reading of a folder, the checks
// of a --report target before a run, and the environment summary of `report show` over
// environment.json values of the wrong type. Qt-free.
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "app/cli/report_io.h"
#include "report/report_fixture.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::cli;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

} // namespace

MT_TEST(folder_round_trip) {
    mini_test::TempDir tmp;
    const std::string dir = tmp.path() + "/a/b/report"; // created with its parents
    const BenchReport report = report_test::make_report();
    MT_REQUIRE(check_report_target(dir).ok());
    Status st = write_report(dir, report);
    MT_REQUIRE_MSG(st.ok(), "%s", st.ok() ? "" : st.message().c_str());
    for (const char* name :
         {kReportHtml, kReportResults, kReportRequests, kReportSteps, kReportEnvironment})
        MT_REQUIRE_MSG(fs::is_regular_file(dir + "/" + name), "%s", name);
    size_t entries = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        (void)e;
        ++entries;
    }
    MT_REQUIRE_COMPARE(entries, size_t(5)); // no temporary files left
    auto back = read_report(dir);
    MT_REQUIRE_MSG(back.ok(), "%s", back.ok() ? "" : back.message().c_str());
    MT_REQUIRE_COMPARE(back->runs.size(), report.runs.size());
    for (size_t k = 0; k < report.runs.size(); ++k) {
        const BenchRun &a = report.runs[k], &b = back->runs[k];
        MT_REQUIRE_COMPARE(b.name, a.name);
        MT_REQUIRE_COMPARE(b.figures.completed, a.figures.completed);
        MT_REQUIRE(
            report_test::same_bits(b.figures.output_throughput, a.figures.output_throughput));
        MT_REQUIRE(report_test::same_bits(b.figures.ttft_ms.p99, a.figures.ttft_ms.p99));
        MT_REQUIRE_COMPARE(b.requests.size(), a.requests.size());
        MT_REQUIRE_COMPARE(b.steps.size(), a.steps.size());
    }
    MT_REQUIRE_COMPARE(back->title, report.title);
    // Written again over a folder with a file of the user's: only the report's names change.
    MT_REQUIRE(mini_test::write_file(dir + "/mine.txt", "keep"));
    MT_REQUIRE(mini_test::write_file(dir + "/" + kReportSteps, "stale"));
    MT_REQUIRE(write_report(dir, report).ok());
    MT_REQUIRE_COMPARE(mini_test::read_file(dir + "/mine.txt").value_or(""), std::string("keep"));
    MT_REQUIRE(mini_test::read_file(dir + "/" + kReportSteps).value_or("") != "stale");
}

MT_TEST(folder_reading_is_bounded) {
    mini_test::TempDir tmp;
    const std::string dir = tmp.path() + "/r";
    MT_REQUIRE(write_report(dir, report_test::make_report()).ok());
    // A file above the cap (sparse: nothing is written, nothing must be read).
    const std::string steps = dir + "/" + kReportSteps;
    fs::resize_file(steps, static_cast<uintmax_t>(kMaxReportFileBytes) + 1);
    auto big = read_report(dir);
    MT_REQUIRE(!big.ok());
    MT_CHECK_MSG(contains(big.message(), "steps.csv: larger than 256 MiB"), "%s",
                 big.message().c_str());
    // Not a regular file: a symlink to a device, a folder.
    fs::remove(steps);
    fs::create_symlink("/dev/zero", steps);
    auto dev = read_report(dir);
    MT_REQUIRE(!dev.ok());
    MT_CHECK_MSG(contains(dev.message(), "steps.csv: not a regular file"), "%s",
                 dev.message().c_str());
    fs::remove(steps);
    fs::create_directory(steps);
    MT_REQUIRE(!read_report(dir).ok());
    // A missing results.json: the parser names it, with the folder.
    fs::remove(steps);
    fs::remove(dir + "/" + kReportResults);
    auto missing = read_report(dir);
    MT_REQUIRE(!missing.ok());
    MT_CHECK_MSG(contains(missing.message(), dir) && contains(missing.message(), "results.json"),
                 "%s", missing.message().c_str());
    // Malformed results.json: an error naming the folder and the file.
    MT_REQUIRE(write_report(dir, report_test::make_report()).ok());
    MT_REQUIRE(mini_test::write_file(dir + "/" + kReportResults, "{not json"));
    auto bad = read_report(dir);
    MT_REQUIRE(!bad.ok());
    MT_CHECK_MSG(contains(bad.message(), "results.json"), "%s", bad.message().c_str());
    // Nothing there.
    auto none = read_report(tmp.path() + "/nothing");
    MT_REQUIRE(!none.ok());
    MT_CHECK(contains(none.message(), "no such file or folder"));
}

MT_TEST(report_targets) {
    mini_test::TempDir tmp;
    MT_CHECK(report_is_zip("a.zip") && report_is_zip("/x/B.ZIP") && report_is_zip(".zip"));
    MT_CHECK(!report_is_zip("zip") && !report_is_zip("a.zip/") && !report_is_zip("a.zipx"));
    const std::string file = tmp.path() + "/plain.txt";
    MT_REQUIRE(mini_test::write_file(file, "x"));
    auto f = check_report_target(file);
    MT_REQUIRE(!f.ok());
    MT_CHECK(contains(f.message(), "exists and is not a folder"));
    MT_REQUIRE(!write_report(file, report_test::make_report()).ok());
    MT_REQUIRE_COMPARE(mini_test::read_file(file).value_or(""), std::string("x"));
    const std::string zip = tmp.path() + "/no/such/folder/r.zip";
    auto z = check_report_target(zip);
    MT_REQUIRE(!z.ok());
    if (have_report_zip()) {
        MT_CHECK_MSG(contains(z.message(), "no folder"), "%s", z.message().c_str());
        MT_CHECK(check_report_target(tmp.path() + "/r.zip").ok());
        auto dirzip = check_report_target(tmp.path());
        MT_CHECK(dirzip.ok()); // a folder target
        fs::create_directory(tmp.path() + "/d.zip");
        MT_CHECK(!check_report_target(tmp.path() + "/d.zip").ok());
    } else {
        MT_CHECK_MSG(contains(z.message(), "this llmwb was built without zip support (no "
                                           "Qt/QuaZip); give a folder"),
                     "%s", z.message().c_str());
        auto r = read_report(file);
        MT_REQUIRE(!r.ok());
        MT_CHECK(contains(r.message(), "without zip support"));
    }
}

MT_TEST(environment_summary_tolerates_strangers_values) {
    nlohmann::ordered_json env = {{"cpu_model", "Test CPU"},
                                  {"simd_level", "avx2"},
                                  {"logical_cores", 8},
                                  {"ram_bytes", int64_t(16) << 30},
                                  {"os", "Debian GNU/Linux 12 (bookworm)"},
                                  {"device", "CPU"},
                                  {"weight_dtype", "Q8_0"},
                                  {"kv_dtype", "f32"},
                                  {"model_file", "m.gguf"},
                                  {"model_size_bytes", 3 << 20},
                                  {"model_sha256", "abc"},
                                  {"app_version", "0.1.0"},
                                  {"app_commit", "0123456789ab"}};
    const std::string s = environment_summary(env);
    MT_CHECK_MSG(contains(s, "Test CPU (avx2), 8 logical cores, 16.0 GiB RAM"), "%s", s.c_str());
    MT_CHECK(contains(s, "m.gguf, 3.0 MiB, sha256 abc"));
    MT_CHECK(contains(s, "0.1.0 (commit 0123456789ab)"));
    MT_CHECK(!contains(s, "GPU:"));
    env["gpu_name"] = "NVIDIA H200";
    env["gpu_memory_bytes"] = int64_t(140) << 30;
    MT_CHECK(contains(environment_summary(env), "NVIDIA H200, 140.0 GiB"));
    // Wrong types from a stranger's file: left out, no exception.
    nlohmann::ordered_json odd = {
        {"cpu_model", 5}, {"os", {1, 2}}, {"model_file", "m.gguf"}, {"model_size_bytes", "big"}};
    const std::string o = environment_summary(odd);
    MT_CHECK(!contains(o, "Machine:") && !contains(o, "OS:"));
    MT_CHECK(contains(o, "m.gguf, 0.0 MiB"));
    MT_CHECK(environment_summary(nlohmann::ordered_json::array()).empty());
}

MT_TEST(terminal_safe_text) {
    MT_COMPARE(terminal_safe("plain text, 中文 ok"), std::string("plain text, 中文 ok"));
    MT_COMPARE(terminal_safe("red\x1b[31mX\x1b[0m"), std::string("red?[31mX?[0m"));
    MT_COMPARE(terminal_safe("a\nb\tc\rd\x7f"), std::string("a?b?c?d?"));
    MT_COMPARE(terminal_safe("csi \xc2\x9b"
                             "2J"),
               std::string("csi ?2J"));                                            // U+009B
    MT_COMPARE(terminal_safe("bad \xff\xc0\xaf end"), std::string("bad ??? end")); // invalid
    MT_COMPARE(terminal_safe("cut \xe4\xb8"), std::string("cut ??"));              // truncated
    MT_COMPARE(terminal_safe("sur \xed\xa0\x80"), std::string("sur ???"));         // surrogate
    MT_COMPARE(terminal_safe("emoji \xf0\x9f\x98\x80"), std::string("emoji \xf0\x9f\x98\x80"));
    BenchReport r = report_test::make_report();
    r.title = "t\x1b]0;owned\x07";
    r.runs[0].name = "run\x1b[2J";
    make_terminal_safe(r);
    MT_COMPARE(r.title, std::string("t?]0;owned?"));
    MT_COMPARE(r.runs[0].name, std::string("run?[2J"));
    MT_CHECK(r.runs[2].error.find('\n') == std::string::npos);
    nlohmann::ordered_json env = {{"cpu_model", "evil\x1b[31m"}, {"logical_cores", 1}};
    MT_CHECK(contains(environment_summary(env), "evil?[31m"));
}

MINI_TEST_MAIN()
