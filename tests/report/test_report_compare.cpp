// Comparisons: a run against itself differs by 0% everywhere; a known pair gives the exact
// percentages; figures a run lacks are n/a; the summary follows vLLM's result block.
#include "app/report/report_compare.h"
#include "report/report_fixture.h"
#include "support/mini_test.h"

using namespace llmwb;
using llmwb::report_test::make_report;

namespace {

const CompareRow* find_row(const std::vector<CompareRow>& rows, const std::string& key) {
    for (const CompareRow& r : rows)
        if (r.key == key)
            return &r;
    return nullptr;
}

} // namespace

MT_TEST(aRunAgainstItselfDiffersByZero) {
    const BenchReport rep = make_report();
    const BenchRun& a = rep.runs[1];
    const auto rows = compare_runs({&a, &a});
    MT_REQUIRE(rows.size() > 30);
    for (const CompareRow& r : rows) {
        MT_SCOPE("%s", r.key.c_str());
        MT_REQUIRE_COMPARE(r.values.size(), size_t{2});
        MT_REQUIRE_COMPARE(r.diff_pct.size(), size_t{2});
        MT_CHECK(r.values[0] == r.values[1]);
        if (r.values[0] && *r.values[0] != 0) {
            MT_CHECK(r.diff_pct[0] == 0.0);
            MT_CHECK(r.diff_pct[1] == 0.0);
        } else {
            MT_CHECK(!r.diff_pct[1]);
        }
    }
    // vLLM's figures are all there, with each percentile asked for.
    for (const char* key : {"output_throughput", "request_throughput", "total_token_throughput",
                            "mean_ttft_ms", "median_tpot_ms", "p99_itl_ms", "p99.9_e2el_ms",
                            "p50_ttft_ms", "duration", "completed", "failed", "peak_kv_usage",
                            "prefix_cache_hit_rate", "preemptions", "spec_decode_acceptance_rate"})
        MT_CHECK_MSG(find_row(rows, key) != nullptr, "no row %s", key);
    const std::string text = compare_text({&a, &a});
    MT_CHECK(text.find("+") == std::string::npos); // no nonzero difference anywhere
    MT_CHECK(text.find("0.0%") != std::string::npos);
}

MT_TEST(aKnownPairGivesTheExactPercentages) {
    const BenchReport rep = make_report();
    BenchRun a = rep.runs[0];
    BenchRun b = a;
    a.name = "A";
    b.name = "B";
    a.figures.output_throughput = 1000;
    b.figures.output_throughput = 1123;
    a.figures.ttft_ms.mean = 40;
    b.figures.ttft_ms.mean = 38.4;
    a.figures.preemptions = 0;
    b.figures.preemptions = 5;
    a.figures.mean_kv_usage = 0.5;
    b.figures.mean_kv_usage = 0.25;
    const auto rows = compare_runs({&a, &b});
    const CompareRow* out = find_row(rows, "output_throughput");
    MT_REQUIRE(out);
    MT_COMPARE(out->unit, std::string("tok/s"));
    MT_CHECK(out->higher_is_better);
    MT_REQUIRE(out->diff_pct[1].has_value());
    MT_COMPARE(*out->diff_pct[1], 12.3);
    const CompareRow* ttft = find_row(rows, "mean_ttft_ms");
    MT_REQUIRE(ttft && ttft->diff_pct[1]);
    MT_CHECK(!ttft->higher_is_better);
    MT_COMPARE(*ttft->diff_pct[1], -4.0);
    const CompareRow* pre = find_row(rows, "preemptions");
    MT_REQUIRE(pre);
    MT_CHECK(!pre->diff_pct[1].has_value()); // from 0: no percentage
    const CompareRow* kv = find_row(rows, "mean_kv_usage");
    MT_REQUIRE(kv && kv->values[1] && kv->diff_pct[1]);
    MT_COMPARE(*kv->values[1], 25.0); // in percent
    MT_COMPARE(*kv->diff_pct[1], -50.0);
    // No speculation in either: no spec rows.
    MT_CHECK(find_row(rows, "spec_decode_acceptance_rate") == nullptr);

    const std::string text = compare_text({&a, &b});
    MT_CHECK(text.find("+12.3%") != std::string::npos);
    MT_CHECK(text.find("-4.0%") != std::string::npos);
    MT_CHECK(text.find("-50.0%") != std::string::npos);
    // Aligned: every line of the table has the same column for its last value.
    std::vector<std::string> lines;
    for (size_t b0 = 0; b0 < text.size();) {
        const size_t e = text.find('\n', b0);
        lines.push_back(text.substr(b0, e - b0));
        b0 = e + 1;
    }
    MT_REQUIRE(lines.size() > 10);
    MT_CHECK(lines[0].rfind("figure", 0) == 0);
    const size_t width = lines[2].size();
    for (size_t i = 2; i < lines.size(); ++i)
        MT_CHECK_MSG(lines[i].size() == width, "line %zu: '%s'", i, lines[i].c_str());
}

MT_TEST(figuresARunLacksAreNotAvailable) {
    const BenchReport rep = make_report();
    BenchRun plain = rep.runs[0];
    plain.percentile_metrics = "ttft,e2el";
    const BenchRun& spec = rep.runs[1];
    const auto rows = compare_runs({&plain, &spec});
    const CompareRow* acc = find_row(rows, "spec_decode_acceptance_rate");
    MT_REQUIRE(acc);
    MT_CHECK(!acc->values[0].has_value());
    MT_REQUIRE(acc->values[1].has_value());
    MT_COMPARE(*acc->values[1], 120.0 / 900.0 * 100.0);
    MT_CHECK(!acc->diff_pct[1].has_value());
    const CompareRow* tpot = find_row(rows, "mean_tpot_ms");
    MT_REQUIRE(tpot);
    MT_CHECK(!tpot->values[0] && tpot->values[1]);
    const std::string text = compare_text({&plain, &spec});
    MT_CHECK(text.find("n/a") != std::string::npos);
}

MT_TEST(summaryFollowsVllmsResultBlock) {
    const BenchReport rep = make_report();
    const std::string s = run_summary_text(rep.runs[1]);
    MT_CHECK(s.rfind("============ Serving Benchmark Result ============\n", 0) == 0);
    MT_CHECK(s.find("Successful requests:                     12\n") != std::string::npos);
    MT_CHECK(s.find("Maximum request concurrency:             8\n") != std::string::npos);
    MT_CHECK(s.find("---------------Time to First Token----------------\n") != std::string::npos);
    MT_CHECK(s.find("-----Time per Output Token (excl. 1st token)------\n") != std::string::npos);
    MT_CHECK(s.find("P99.9 E2EL (ms):") != std::string::npos);
    MT_CHECK(s.find("Acceptance rate (%):                     13.33\n") != std::string::npos);
    MT_CHECK(s.find("Acceptance length:                       1.40\n") != std::string::npos);
    MT_CHECK(s.find("Run:                                     max_num_seqs=8 (ngram k=3)\n") !=
             std::string::npos);
    MT_CHECK(s.size() > 50 && s.substr(s.size() - 51) == std::string(50, '=') + "\n");
    const std::string c = run_summary_text(rep.runs[2]);
    MT_CHECK(c.find("Status:                                  cancelled\n") != std::string::npos);
    MT_CHECK(c.find("Request rate configured (RPS):           inf\n") != std::string::npos);
    MT_CHECK(c.find("Speculative Decoding") == std::string::npos);
}

MINI_TEST_MAIN()
