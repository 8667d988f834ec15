// Report files: results.json / requests.csv / steps.csv / environment.json written and read back
// to identical values (doubles bit for bit), vLLM's key layout, and the reader's refusals of
// hostile input (each naming the file, the line and the reason).
#include <random>

#include "app/report/report_compare.h"
#include "app/report/report_files.h"
#include "app/report/report_text.h"
#include "report/report_fixture.h"
#include "support/mini_test.h"
#include "support/vllm_result_keys.h"

using namespace llmwb;
using llmwb::report_test::make_report;
using llmwb::report_test::same_bits;
using oj = nlohmann::ordered_json;

namespace {

#define CHECK_BITS(a, b) MT_CHECK_MSG(same_bits((a), (b)), "%s: %.17g vs %.17g", #a, (a), (b))

void check_stats(const LatencyStats& a, const LatencyStats& b) {
    CHECK_BITS(a.mean, b.mean);
    CHECK_BITS(a.median, b.median);
    CHECK_BITS(a.std, b.std);
    CHECK_BITS(a.p99, b.p99);
    MT_REQUIRE_COMPARE(a.percentiles.size(), b.percentiles.size());
    for (size_t i = 0; i < a.percentiles.size(); ++i) {
        CHECK_BITS(a.percentiles[i].first, b.percentiles[i].first);
        CHECK_BITS(a.percentiles[i].second, b.percentiles[i].second);
    }
}

void check_same_run(const BenchRun& a, const BenchRun& b) {
    MT_COMPARE(a.name, b.name);
    MT_COMPARE(a.policy, b.policy);
    MT_COMPARE(a.status, b.status);
    MT_COMPARE(a.error, b.error);
    MT_COMPARE(a.date, b.date);
    MT_COMPARE(a.model_id, b.model_id);
    MT_COMPARE(a.backend, b.backend);
    MT_COMPARE(a.sweep_setting, b.sweep_setting);
    CHECK_BITS(a.sweep_value, b.sweep_value);
    MT_COMPARE(a.percentile_metrics, b.percentile_metrics);
    MT_CHECK(a.settings == b.settings);
    MT_COMPARE(a.settings.dump(), b.settings.dump()); // the key order too
    const BenchResult& f = a.figures;
    const BenchResult& g = b.figures;
    MT_COMPARE(f.completed, g.completed);
    MT_COMPARE(f.failed, g.failed);
    CHECK_BITS(f.request_rate, g.request_rate);
    CHECK_BITS(f.burstiness, g.burstiness);
    MT_COMPARE(f.max_concurrency, g.max_concurrency);
    CHECK_BITS(f.max_output_tokens_per_s, g.max_output_tokens_per_s);
    MT_COMPARE(f.max_concurrent_requests, g.max_concurrent_requests);
    CHECK_BITS(f.duration_s, g.duration_s);
    MT_COMPARE(f.total_input_tokens, g.total_input_tokens);
    MT_COMPARE(f.total_output_tokens, g.total_output_tokens);
    CHECK_BITS(f.request_throughput, g.request_throughput);
    CHECK_BITS(f.output_throughput, g.output_throughput);
    CHECK_BITS(f.total_token_throughput, g.total_token_throughput);
    check_stats(f.ttft_ms, g.ttft_ms);
    check_stats(f.tpot_ms, g.tpot_ms);
    check_stats(f.itl_ms, g.itl_ms);
    check_stats(f.e2el_ms, g.e2el_ms);
    MT_COMPARE(f.num_blocks, g.num_blocks);
    MT_COMPARE(f.block_size, g.block_size);
    CHECK_BITS(f.mean_kv_usage, g.mean_kv_usage);
    CHECK_BITS(f.peak_kv_usage, g.peak_kv_usage);
    CHECK_BITS(f.kv_waste_vs_contiguous, g.kv_waste_vs_contiguous);
    CHECK_BITS(f.kv_waste_vs_allocated, g.kv_waste_vs_allocated);
    CHECK_BITS(f.contiguous_waste, g.contiguous_waste);
    MT_COMPARE(f.prefix_cache_queries, g.prefix_cache_queries);
    MT_COMPARE(f.prefix_cache_hits, g.prefix_cache_hits);
    CHECK_BITS(f.prefix_cache_hit_rate, g.prefix_cache_hit_rate);
    MT_COMPARE(f.preemptions, g.preemptions);
    MT_COMPARE(f.steps, g.steps);
    CHECK_BITS(f.mean_batch_size, g.mean_batch_size);
    MT_REQUIRE_COMPARE(f.per_request_ttft_ms.size(), g.per_request_ttft_ms.size());
    for (size_t i = 0; i < f.per_request_ttft_ms.size(); ++i)
        CHECK_BITS(f.per_request_ttft_ms[i], g.per_request_ttft_ms[i]);
    MT_COMPARE(f.speculative.num_drafts, g.speculative.num_drafts);
    MT_COMPARE(f.speculative.num_draft_tokens, g.speculative.num_draft_tokens);
    MT_COMPARE(f.speculative.num_accepted_tokens, g.speculative.num_accepted_tokens);
    MT_COMPARE(f.speculative.accepted_per_pos, g.speculative.accepted_per_pos);
    MT_REQUIRE_COMPARE(a.requests.size(), b.requests.size());
    for (size_t i = 0; i < a.requests.size(); ++i) {
        MT_SCOPE("request %zu", i);
        const BenchRequestRow& x = a.requests[i];
        const BenchRequestRow& y = b.requests[i];
        MT_COMPARE(x.index, y.index);
        CHECK_BITS(x.arrival_s, y.arrival_s);
        CHECK_BITS(x.first_token_s, y.first_token_s);
        CHECK_BITS(x.finish_s, y.finish_s);
        MT_COMPARE(x.input_tokens, y.input_tokens);
        MT_COMPARE(x.output_tokens, y.output_tokens);
        MT_COMPARE(x.preemptions, y.preemptions);
        MT_COMPARE(x.prefix_hit_tokens, y.prefix_hit_tokens);
        MT_COMPARE(x.error, y.error);
    }
    MT_REQUIRE_COMPARE(a.steps.size(), b.steps.size());
    for (size_t i = 0; i < a.steps.size(); ++i) {
        MT_SCOPE("step %zu", i);
        const BenchStepRow& x = a.steps[i];
        const BenchStepRow& y = b.steps[i];
        CHECK_BITS(x.time_s, y.time_s);
        CHECK_BITS(x.step_ms, y.step_ms);
        MT_COMPARE(x.prefill_tokens, y.prefill_tokens);
        MT_COMPARE(x.decode_tokens, y.decode_tokens);
        MT_COMPARE(x.running, y.running);
        MT_COMPARE(x.waiting, y.waiting);
        MT_COMPARE(x.preempted, y.preempted);
        CHECK_BITS(x.kv_usage, y.kv_usage);
        MT_COMPARE(x.draft_tokens, y.draft_tokens);
        MT_COMPARE(x.accepted_tokens, y.accepted_tokens);
    }
}

std::string& file_of(ReportFiles& files, const std::string& name) {
    for (auto& [n, bytes] : files)
        if (n == name)
            return bytes;
    throw std::runtime_error("no file " + name);
}

std::vector<oj> result_lines(ReportFiles& files) {
    std::vector<oj> out;
    std::string& text = file_of(files, kReportResults);
    size_t b = 0;
    while (b < text.size()) {
        const size_t e = text.find('\n', b);
        out.push_back(oj::parse(text.substr(b, e - b)));
        b = e + 1;
    }
    return out;
}

void set_result_lines(ReportFiles& files, const std::vector<oj>& lines) {
    std::string text;
    for (const oj& l : lines)
        text += l.dump() + "\n";
    file_of(files, kReportResults) = text;
}

// The parse error of these files; fails the test when they parse.
std::string parse_error(const ReportFiles& files) {
    auto r = parse_report_files(files);
    if (r.ok()) {
        MT_CHECK_MSG(false, "the report parsed");
        return {};
    }
    return r.message();
}

#define CHECK_ERROR_HAS(files, text)                                                               \
    do {                                                                                           \
        const std::string err_ = parse_error(files);                                               \
        MT_CHECK_MSG(err_.find(text) != std::string::npos, "error '%s' lacks '%s'", err_.c_str(),  \
                     std::string(text).c_str());                                                   \
    } while (0)

} // namespace

MT_TEST(roundTripThreeRuns) {
    const BenchReport rep = make_report();
    const ReportFiles files = report_files(rep);
    MT_REQUIRE_COMPARE(files.size(), size_t{5});
    auto back = parse_report_files(files);
    MT_REQUIRE_MSG(back.ok(), back.ok() ? "" : back.message());
    MT_COMPARE(back->title, rep.title);
    MT_COMPARE(back->environment.dump(), rep.environment.dump());
    MT_REQUIRE_COMPARE(back->runs.size(), rep.runs.size());
    for (size_t k = 0; k < rep.runs.size(); ++k) {
        MT_SCOPE("run %zu", k);
        check_same_run(back->runs[k], rep.runs[k]);
    }
    // Written again, the files are the same bytes.
    const ReportFiles again = report_files(*back);
    for (size_t i = 1; i < files.size(); ++i)
        MT_COMPARE(again[i].second, files[i].second);
}

MT_TEST(resultsJsonHasVllmKeysInVllmOrder) {
    const BenchReport rep = make_report();
    const oj j = run_results_json(rep.runs[1]);
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items())
        keys.push_back(k);
    std::vector<std::string> head(std::begin(llmwb::test::kVllmResultHeadKeys),
                                  std::end(llmwb::test::kVllmResultHeadKeys));
    for (const char* k : {"mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p50_ttft_ms",
                          "p90_ttft_ms", "p99_ttft_ms", "p99.9_ttft_ms", "mean_tpot_ms"})
        head.push_back(k);
    MT_REQUIRE(keys.size() > head.size());
    MT_COMPARE(std::vector<std::string>(keys.begin(), keys.begin() + long(head.size())), head);
    MT_COMPARE(j["num_prompts"].get<int>(), 12);
    MT_COMPARE(j["p99_e2el_ms"].get<double>(), rep.runs[1].figures.e2el_ms.p99);
    // Speculation: vLLM's acceptance rate in percent, length 1 + accepted/drafts.
    MT_COMPARE(j["spec_decode_acceptance_rate"].get<double>(), 120.0 / 900.0 * 100.0);
    MT_COMPARE(j["spec_decode_acceptance_length"].get<double>(), 1.0 + 120.0 / 300.0);
    MT_COMPARE(j["spec_decode_per_position_acceptance_rates"].dump(),
               oj({0.2, 40.0 / 300.0, 20.0 / 300.0}).dump());
    MT_COMPARE(j["llmwb_report_version"].get<int>(), kBenchReportVersion);
    // No speculation, no spec keys; all at once is "inf" (valid JSON).
    const oj j2 = run_results_json(rep.runs[2]);
    MT_CHECK(!j2.contains("spec_decode_acceptance_rate"));
    MT_COMPARE(j2["request_rate"].get<std::string>(), std::string("inf"));
    MT_COMPARE(j2["status"].get<std::string>(), std::string("cancelled"));
    MT_CHECK(oj::accept(j2.dump()));
}

MT_TEST(doublesRoundTripBitForBit) {
    std::mt19937_64 rng(12345);
    int checked = 0;
    for (int i = 0; i < 200000; ++i) {
        uint64_t bits = rng();
        double v;
        std::memcpy(&v, &bits, sizeof v);
        if (!std::isfinite(v))
            continue;
        ++checked;
        const std::string json = oj(v).dump();
        const double back = oj::parse(json).get<double>();
        MT_REQUIRE_MSG(same_bits(back, v), "json %s -> %.17g", json.c_str(), back);
        double csv = 0;
        MT_REQUIRE(report_detail::parse_double(report_detail::format_double(v), &csv));
        MT_REQUIRE_MSG(same_bits(csv, v), "csv %.17g", v);
    }
    MT_CHECK(checked > 190000);
}

MT_TEST(readsInfinityBothWaysAndAPrettyPrintedSingleRun) {
    BenchReport rep = make_report();
    rep.runs.resize(1);
    ReportFiles files = report_files(rep);
    auto lines = result_lines(files);
    lines[0]["request_rate"] = "Infinity";
    file_of(files, kReportResults) = lines[0].dump(4); // one object over many lines
    auto back = parse_report_files(files);
    MT_REQUIRE_MSG(back.ok(), back.ok() ? "" : back.message());
    MT_REQUIRE_COMPARE(back->runs.size(), size_t{1});
    MT_CHECK(std::isinf(back->runs[0].figures.request_rate));
    MT_COMPARE(back->runs[0].requests.size(), size_t{12});
}

MT_TEST(csvsAreOptional) {
    ReportFiles files = report_files(make_report());
    ReportFiles only;
    for (auto& f : files)
        if (f.first == kReportResults || f.first == kReportEnvironment)
            only.push_back(f);
    auto back = parse_report_files(only);
    MT_REQUIRE_MSG(back.ok(), back.ok() ? "" : back.message());
    MT_COMPARE(back->runs.size(), size_t{3});
    MT_CHECK(back->runs[0].requests.empty() && back->runs[0].steps.empty());
}

MT_TEST(csvQuotesTheErrorText) {
    const BenchReport rep = make_report();
    const std::string csv = requests_csv({&rep.runs[2]});
    MT_CHECK(csv.find("\"cancelled, by \"\"the user\"\"\nsecond line: 用户取消了运行\"") !=
             std::string::npos);
    MT_COMPARE(csv.substr(0, csv.find('\n')),
               std::string("run,index,arrival_s,first_token_s,finish_s,input_tokens,"
                           "output_tokens,preemptions,prefix_hit_tokens,error"));
}

MT_TEST(everyMissingKeyIsNamed) {
    const ReportFiles good = report_files(make_report());
    ReportFiles files = good;
    const auto lines = result_lines(files);
    for (size_t line : {size_t{0}, size_t{1}}) {
        for (const auto& [key, value] : lines[line].items()) {
            if (key == "spec_decode_num_drafts")
                continue; // without it the spec keys are not read at all
            MT_SCOPE("line %zu key %s", line, key.c_str());
            auto mutated = lines;
            mutated[line].erase(key);
            set_result_lines(files, mutated);
            CHECK_ERROR_HAS(files, "results.json:" + std::to_string(line + 1) + ": missing key '" +
                                       key + "'");
        }
    }
}

MT_TEST(everyWrongTypeIsNamed) {
    ReportFiles files = report_files(make_report());
    const auto lines = result_lines(files);
    for (const auto& [key, value] : lines[1].items()) {
        MT_SCOPE("key %s", key.c_str());
        auto mutated = lines;
        mutated[1][key] = value.is_boolean() ? oj(1) : oj(true);
        set_result_lines(files, mutated);
        CHECK_ERROR_HAS(files, "results.json:2: key '" + key + "'");
        if (value.is_string() || value.is_object())
            continue;
        mutated[1][key] = "x";
        set_result_lines(files, mutated);
        CHECK_ERROR_HAS(files, "results.json:2: key '" + key + "'");
    }
}

struct BadValue {
    std::string name;
    std::string key;
    std::string json; // the value, as JSON text
    std::string error;
};

std::vector<BadValue> bad_values() {
    return {
        {"negativeCompleted", "completed", "-1", "key 'completed' = -1 is out of range"},
        {"negativeTokens", "total_output_tokens", "-5", "key 'total_output_tokens' = -5"},
        {"fractionalCount", "failed", "1.5", "key 'failed' is not an integer"},
        {"hugeCount", "completed", "3000000000", "key 'completed' = 3000000000 is out of range"},
        {"overflowingDuration", "duration", "1e999",
         "results.json:2: malformed JSON: number overflow"},
        {"negativeDuration", "duration", "-0.5", "key 'duration' = -0.5 is out of range"},
        {"kvUsageAboveOne", "peak_kv_usage", "1.5", "key 'peak_kv_usage' = 1.5"},
        {"hitRate", "prefix_cache_hit_rate", "2", "key 'prefix_cache_hit_rate'"},
        {"rateWord", "request_rate", "\"fast\"", "key 'request_rate' is neither"},
        {"status", "status", "\"exploded\"", "key 'status' is 'exploded'"},
        {"metric", "percentile_metrics", "\"ttft,bogus\"", "names 'bogus', not one of"},
        {"metricTwice", "percentile_metrics", "\"ttft,ttft\"", "names 'ttft' twice"},
        {"percentileRange", "metric_percentiles", "[50, 101]", "key 'metric_percentiles' = 101"},
        {"percentileTwice", "metric_percentiles", "[99, 99]", "names 99 twice"},
        {"percentileType", "metric_percentiles", "[\"99\"]", "not a number"},
        {"acceptedAboveDrafts", "spec_decode_accepted_tokens", "901",
         "key 'spec_decode_accepted_tokens' = 901"},
        {"perPositionLength", "spec_decode_per_position_accepted_tokens", "[1, 2]",
         "differ in length"},
        {"perPositionNegative", "spec_decode_per_position_acceptance_rates", "[0.1, -1, 0.2]",
         "holds a bad value"},
        {"ttftNegative", "per_request_ttft_ms", "[1, -2]", "key 'per_request_ttft_ms' = -2"},
        {"settingsArray", "settings", "[]", "key 'settings' is not an object"},
        {"versionSeven", "llmwb_report_version", "7",
         "results.json:2: report format version 7 is not supported (this build reads 1)"},
        {"versionString", "llmwb_report_version", "\"1\"", "is not an integer"},
        {"deepSettings", "settings", std::string(65, '[') + std::string(65, ']'),
         "nested deeper than 64"},
    };
}

MT_TEST_TABLE(badValuesAreRefused, BadValue, bad_values()) {
    ReportFiles files = report_files(make_report());
    const auto lines = result_lines(files);
    std::string text;
    for (size_t i = 0; i < lines.size(); ++i) {
        oj l = lines[i];
        if (i == 1)
            l[row.key] = nullptr; // placeholder, replaced in the text (1e999 is not a double)
        std::string s = l.dump();
        if (i == 1) {
            const std::string ph = "\"" + row.key + "\":null";
            s.replace(s.find(ph), ph.size(), "\"" + row.key + "\":" + row.json);
        }
        text += s + "\n";
    }
    file_of(files, kReportResults) = text;
    CHECK_ERROR_HAS(files, row.error);
}

struct BadFile {
    std::string name;
    std::string file;
    std::string content; // replaces the file ("<drop>": removes it)
    std::string error;
};

std::vector<BadFile> bad_files() {
    const std::string req_header = "run,index,arrival_s,first_token_s,finish_s,input_tokens,"
                                   "output_tokens,preemptions,prefix_hit_tokens,error\n";
    const std::string step_header = "run,time_s,step_ms,prefill_tokens,decode_tokens,running,"
                                    "waiting,preempted,kv_usage,draft_tokens,accepted_tokens\n";
    std::string step_rows;
    for (int i = 0; i < 15; ++i)
        step_rows += "0,0.5,7,0,1,1,0,0,0.25,0,0\n";
    return {
        {"emptyResults", kReportResults, "", "results.json: empty file"},
        {"blankResults", kReportResults, "\n \n", "results.json: empty file"},
        {"missingResults", kReportResults, "<drop>", "results.json: missing"},
        {"missingEnvironment", kReportEnvironment, "<drop>", "environment.json: missing"},
        {"emptyEnvironment", kReportEnvironment, "", "environment.json: empty file"},
        {"environmentArray", kReportEnvironment, "[1]", "environment.json: not a JSON object"},
        {"environmentNoVersion", kReportEnvironment, "{\"os\": \"x\"}",
         "environment.json: missing key 'llmwb_report_version'"},
        {"environmentVersion", kReportEnvironment, "{\"llmwb_report_version\": 2}",
         "environment.json: report format version 2 is not supported (this build reads 1)"},
        {"environmentDeep", kReportEnvironment, std::string(100000, '['),
         "environment.json: JSON nested deeper than 64 levels"},
        {"resultsDeep", kReportResults, std::string(100000, '['),
         "results.json:1: JSON nested deeper than 64 levels"},
        {"resultsDeepObjects", kReportResults,
         [] {
             std::string s;
             for (int i = 0; i < 100000; ++i)
                 s += "{\"a\":";
             return s;
         }(),
         "nested deeper than 64"},
        {"resultsNotJson", kReportResults, "{\"date\": \n", "results.json:1: malformed JSON"},
        {"resultsGarbage", kReportResults, "hello\n", "results.json:1: malformed JSON"},
        {"resultsArray", kReportResults, "[1, 2]\n", "results.json:1: not a JSON object"},
        {"resultsNoVersion", kReportResults, "{\"date\": \"x\"}\n",
         "results.json:1: missing key 'llmwb_report_version' (not an llmwb report)"},
        {"resultsNaN", kReportResults, "{\"llmwb_report_version\": 1, \"duration\": NaN}\n",
         "results.json:1: malformed JSON"},
        {"emptyRequestsCsv", kReportRequests, "", "requests.csv: empty file (no header line)"},
        {"requestsHeader", kReportRequests, "run,index,arrival\n0,1,2\n",
         "requests.csv:1: the header is not 'run,index,arrival_s,"},
        {"requestsRunNine", kReportRequests,
         req_header + "0,0,0,0.1,1,5,5,0,0,\n9,1,0,0.1,1,5,5,0,0,\n",
         "requests.csv:3: run 9 is not in the report (3 runs)"},
        {"requestsRunNegative", kReportRequests, req_header + "-1,0,0,0.1,1,5,5,0,0,\n",
         "requests.csv:2: run -1 is not in the report"},
        {"requestsFields", kReportRequests, req_header + "0,0,0,0.1,1,5,5,0,0\n",
         "requests.csv:2: 9 fields, expected 10"},
        {"requestsNegativeTokens", kReportRequests, req_header + "0,0,0,0.1,1,-5,5,0,0,\n",
         "requests.csv:2: column input_tokens: -5 is out of range"},
        {"requestsNanTime", kReportRequests, req_header + "0,0,nan,0.1,1,5,5,0,0,\n",
         "requests.csv:2: column arrival_s: 'nan' is not a number"},
        {"requestsUnclosedQuote", kReportRequests, req_header + "0,0,0,0.1,1,5,5,0,0,\"oops\n",
         "requests.csv:2: a quoted field is not closed"},
        {"requestsStrayQuote", kReportRequests, req_header + "0,0,0,0.1,1,5,5,0,0,a\"b\n",
         "requests.csv:2: a quote inside an unquoted field"},
        {"requestsLineAfterQuotedNewline", kReportRequests,
         req_header + "0,0,0,0.1,1,5,5,0,0,\"a\nb\"\n0,1,x,0.1,1,5,5,0,0,\n",
         "requests.csv:4: column arrival_s: 'x' is not a number"},
        {"stepsHeader", kReportSteps, "run,time,step\n", "steps.csv:1: the header is not"},
        {"stepsBadCell", kReportSteps, step_header + step_rows + "0,0.5,7,0,1,1,0,0,abc,0,0\n",
         "steps.csv:17: column kv_usage: 'abc' is not a number"},
        {"stepsKvAboveOne", kReportSteps, step_header + "0,0.5,7,0,1,1,0,0,1.5,0,0\n",
         "steps.csv:2: column kv_usage: 1.5 is out of range [0, 1]"},
        {"stepsHugeInt", kReportSteps, step_header + "0,0.5,7,99999999999,1,1,0,0,0.5,0,0\n",
         "steps.csv:2: column prefill_tokens: 99999999999 is out of range"},
        {"stepsTooManyFields", kReportSteps, step_header + std::string(100000, ','),
         "steps.csv:2: 100001 fields, expected 11"},
        {"stepsLoneCarriageReturn", kReportSteps, step_header + "0,0.5,7,0,1,1,0,0,0.5,0,0\r0\n",
         "steps.csv:2: a carriage return outside quotes"},
    };
}

MT_TEST_TABLE(badFilesAreRefused, BadFile, bad_files()) {
    ReportFiles files = report_files(make_report());
    if (row.content == "<drop>") {
        std::erase_if(files, [&](const auto& f) { return f.first == row.file; });
    } else {
        file_of(files, row.file) = row.content;
    }
    CHECK_ERROR_HAS(files, row.error);
}

MT_TEST(nonFiniteValuesInAJsonValueAreRefused) {
    // Text cannot carry NaN or infinity (the parser refuses them); a json value built in code can.
    const oj good = run_results_json(make_report().runs[0]);
    for (const char* key : {"duration", "mean_ttft_ms", "sweep_value", "mean_kv_usage"}) {
        for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
            MT_SCOPE("%s = %g", key, bad);
            oj j = good;
            j[key] = bad;
            auto r = parse_run_results_json(j, "results.json:1");
            MT_REQUIRE(!r.ok());
            MT_COMPARE(r.message(),
                       "results.json:1: key '" + std::string(key) + "' is not a finite number");
        }
    }
    auto ok = parse_run_results_json(nlohmann::json(good), "x");
    MT_CHECK(ok.ok());
}

MT_TEST(errorsQuoteCellsShortenedOnACharacterBoundary) {
    ReportFiles files = report_files(make_report());
    std::string cell = "x" + std::string(13, '\0') + "用户取消了运行用户取消了运行";
    for (char& c : cell)
        if (c == '\0')
            c = '\x01';
    file_of(files, kReportSteps) = "run,time_s,step_ms,prefill_tokens,decode_tokens,running,"
                                   "waiting,preempted,kv_usage,draft_tokens,accepted_tokens\n"
                                   "0,0.5,7,0,1,1,0,0," +
                                   cell + ",0,0\n";
    const std::string err = parse_error(files);
    // 1 + 13 control bytes + 8 CJK characters of 3 bytes = 38 bytes; the 9th would pass 40.
    MT_COMPARE(
        err, "steps.csv:2: column kv_usage: 'x" + [] {
            std::string s;
            for (int i = 0; i < 13; ++i)
                s += "\\x01";
            return s;
        }() + "用户取消了运行用...' is not a number");
}

MT_TEST(aFileTwiceIsRefused) {
    ReportFiles files = report_files(make_report());
    files.push_back(files[1]);
    CHECK_ERROR_HAS(files, "results.json: the report holds it twice");
}

MT_TEST(crlfCsvIsRead) {
    ReportFiles files = report_files(make_report());
    std::string& csv = file_of(files, kReportSteps);
    std::string crlf;
    for (char c : csv)
        crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    csv = crlf;
    auto back = parse_report_files(files);
    MT_REQUIRE_MSG(back.ok(), back.ok() ? "" : back.message());
    MT_COMPARE(back->runs[0].steps.size(), size_t{40});
}

MINI_TEST_MAIN()

// An endpoint run: engine-side figures it could not see are null in results.json, empty cells
// in requests.csv, "n/a" in the summary and the comparison, and read back as unavailable.
MT_TEST(endpointRunWritesUnavailableFiguresAsNull) {
    BenchReport rep = make_report();
    BenchResult& f = rep.runs[1].figures;
    f.available.engine = false;
    f.available.kv_usage = false;
    f.available.prefix_cache = false; // preemptions: the server's /metrics had them
    // What an endpoint run has in them (remote::put_server_figures): zeros that are never shown.
    f.num_blocks = f.block_size = 0;
    f.steps = 0;
    f.mean_kv_usage = f.peak_kv_usage = 0;
    f.kv_waste_vs_contiguous = f.kv_waste_vs_allocated = f.contiguous_waste = 0;
    f.prefix_cache_queries = f.prefix_cache_hits = 0;
    f.prefix_cache_hit_rate = 0;
    f.mean_batch_size = 0;
    rep.runs[1].steps.clear();
    for (BenchRequestRow& q : rep.runs[1].requests)
        q.preemptions = q.prefix_hit_tokens = 0; // what a reader gets back from empty cells
    const ReportFiles files = report_files(rep);
    ReportFiles copy = files;
    const auto lines = result_lines(copy);
    for (const char* k :
         {"num_blocks", "block_size", "mean_kv_usage", "peak_kv_usage", "kv_waste_vs_contiguous",
          "kv_waste_vs_allocated", "contiguous_waste", "prefix_cache_queries", "prefix_cache_hits",
          "prefix_cache_hit_rate", "steps", "mean_batch_size"}) {
        MT_CHECK_MSG(lines[1][k].is_null(), "run 1 %s = %s", k, lines[1][k].dump().c_str());
        MT_CHECK_MSG(!lines[0][k].is_null(), "run 0 %s is null", k);
    }
    MT_COMPARE(lines[1]["preemptions"].get<int64_t>(), f.preemptions);

    const std::string& csv = file_of(copy, kReportRequests);
    MT_CHECK(csv.find("\n1,0,") != std::string::npos);
    for (size_t at = csv.find("\n1,"); at != std::string::npos; at = csv.find("\n1,", at + 1)) {
        const std::string row = csv.substr(at + 1, csv.find('\n', at + 1) - at - 1);
        // index..output_tokens, then two empty engine cells, then the (empty) error.
        MT_CHECK_MSG(row.size() > 3 && row.substr(row.size() - 3) == ",,,", "%s", row.c_str());
    }

    auto back = parse_report_files(files);
    MT_REQUIRE_MSG(back.ok(), back.ok() ? "" : back.message());
    MT_CHECK(back->runs[1].figures.available == f.available);
    MT_CHECK(back->runs[0].figures.available == BenchFigureAvailability{});
    check_same_run(back->runs[1], rep.runs[1]);
    const ReportFiles again = report_files(*back);
    for (size_t i = 1; i < files.size(); ++i)
        MT_COMPARE(again[i].second, files[i].second);

    const std::string text = run_summary_text(back->runs[1]);
    for (const char* label : {"KV blocks (block size):", "Mean KV usage (%):", "Engine steps:",
                              "Mean batch size:", "Prefix cache hit rate (%):"}) {
        char want[96];
        std::snprintf(want, sizeof want, "%-40s n/a\n", label);
        MT_CHECK_MSG(text.find(want) != std::string::npos, "%s", label);
    }
    char pre[96];
    std::snprintf(pre, sizeof pre, "%-40s %lld\n",
                  "Preemptions:", static_cast<long long>(f.preemptions));
    MT_CHECK(text.find(pre) != std::string::npos);

    // A comparison local vs endpoint: the value, n/a, and no difference.
    const std::vector<const BenchRun*> runs = {&back->runs[0], &back->runs[1]};
    bool seen = false;
    for (const CompareRow& row : compare_runs(runs)) {
        if (row.key != "mean_batch_size" && row.key != "mean_kv_usage")
            continue;
        seen = true;
        MT_CHECK(row.values[0].has_value());
        MT_CHECK(!row.values[1].has_value());
        MT_CHECK(!row.diff_pct[1].has_value());
    }
    MT_CHECK(seen);
    // Only endpoint runs: the engine-side rows are still there, all n/a.
    const std::vector<const BenchRun*> only = {&back->runs[1]};
    bool batch_row = false;
    for (const CompareRow& row : compare_runs(only))
        if (row.key == "mean_batch_size")
            batch_row = !row.values[0].has_value();
    MT_CHECK(batch_row);
}

MT_TEST(engineCellsOfAnEndpointRunMustBeEmpty) {
    BenchReport rep = make_report();
    rep.runs[0].figures.available.engine = false;
    rep.runs[0].steps.clear();
    ReportFiles files = report_files(rep);
    std::string& csv = file_of(files, kReportRequests);
    const size_t at = csv.find("\n0,0,");
    MT_REQUIRE(at != std::string::npos);
    const size_t end = csv.find('\n', at + 1);
    csv.replace(end - 1, 1, "0,"); // "...,64,,," -> "...,64,,0,": a fake 0 for its prefix hits
    CHECK_ERROR_HAS(files, "column prefix_hit_tokens: '0' where the run has no engine figures");
    // And an engine run's empty cell is not a number.
    ReportFiles good = report_files(make_report());
    std::string& csv2 = file_of(good, kReportRequests);
    const size_t at2 = csv2.find("\n0,0,");
    const size_t end2 = csv2.find('\n', at2 + 1);
    csv2.replace(end2 - 4, 4, ",0,"); // "...,64,1,0," -> "...,64,,0,"
    CHECK_ERROR_HAS(good, "column preemptions: '' is not an integer");
}
