// report.html: self-contained (no scripts, no URLs), escaped, one chart per expected figure,
// balanced SVG elements, long runs downsampled.
#include "app/report/report_html.h"
#include "app/report/svg_chart.h"
#include "report/report_fixture.h"
#include "support/mini_test.h"

using namespace llmwb;
using llmwb::report_test::make_report;

namespace {

size_t count(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
        ++n;
    return n;
}

} // namespace

MT_TEST(selfContainedAndEscaped) {
    BenchReport rep = make_report();
    const std::string evil = "<img src=x onerror=alert(1)>";
    rep.runs[0].name = evil;
    rep.runs[1].error = "</table><script>alert(2)</script>";
    rep.runs[2].settings["engine"]["<b>key</b>"] = "\"quoted\" & <tagged>";
    rep.title = "Title <script>";
    rep.environment["os"] = "<iframe src=javascript:alert(3)>";
    const std::string html = report_html(rep);
    MT_CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    MT_CHECK(html.find("<script") == std::string::npos);
    MT_CHECK(html.find("<img") == std::string::npos);
    MT_CHECK(html.find("<iframe") == std::string::npos);
    MT_CHECK(html.find("<b>key") == std::string::npos);
    MT_CHECK(html.find("http://") == std::string::npos);
    MT_CHECK(html.find("https://") == std::string::npos);
    MT_CHECK(html.find("url(") == std::string::npos);
    MT_CHECK(html.find("@import") == std::string::npos);
    MT_CHECK(html.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
    MT_CHECK(html.find("&#34;quoted&#34; &amp; &lt;tagged&gt;") != std::string::npos);
    MT_CHECK(html.find("用户取消了运行") != std::string::npos); // UTF-8 passes through
}

MT_TEST(oneChartPerExpectedFigure) {
    const BenchReport rep = make_report();
    const std::string html = report_html(rep);
    // Per run: throughput, KV usage, batch size, TTFT/TPOT/E2EL histograms = 6; the sweep over
    // max_num_seqs (3 runs): throughput, TTFT, TPOT = 3.
    MT_COMPARE(count(html, "<svg"), size_t{3 * 6 + 3});
    MT_COMPARE(count(html, "</svg>"), count(html, "<svg"));
    MT_COMPARE(count(html, "<table"), count(html, "</table>"));
    MT_COMPARE(count(html, "<div"), count(html, "</div>"));
    MT_COMPARE(count(html, "<tr"), count(html, "</tr>"));
    MT_CHECK(html.find("Sweep over max_num_seqs") != std::string::npos);
    MT_CHECK(html.find("class=\"diff\"") != std::string::npos); // max_num_seqs differs
    for (const char* title : {"<title>Output throughput</title>", "<title>KV cache usage</title>",
                              "<title>Batch size per step</title>", "<title>TTFT</title>",
                              "<title>TPOT</title>", "<title>E2EL</title>"})
        MT_CHECK_MSG(count(html, title) >= 3, "%s", title);
    // Without a sweep, no sweep charts; without steps, the step charts say so.
    BenchReport one = make_report();
    one.runs.resize(1);
    one.runs[0].steps.clear();
    const std::string h1 = report_html(one);
    MT_COMPARE(count(h1, "<svg"), size_t{4});
    MT_CHECK(h1.find("KV cache usage: no data.") != std::string::npos);
    // No runs at all: still a page.
    BenchReport empty;
    const std::string h0 = report_html(empty);
    MT_CHECK(h0.find("no runs") != std::string::npos);
    MT_COMPARE(count(h0, "<svg"), size_t{0});
}

MT_TEST(longSeriesAreDownsampled) {
    std::vector<std::pair<double, double>> pts;
    for (int i = 0; i < 100000; ++i)
        pts.emplace_back(i * 0.001, (i % 1000 == 500) ? 100.0 : i % 7);
    const auto d = downsample_min_max(pts, kMaxChartPoints);
    MT_CHECK(d.size() <= kMaxChartPoints);
    MT_CHECK(d.size() >= kMaxChartPoints / 2);
    // The spikes survive.
    size_t spikes = 0;
    for (const auto& p : d)
        spikes += p.second == 100.0;
    MT_COMPARE(spikes, size_t{100});
    for (size_t i = 1; i < d.size(); ++i)
        MT_REQUIRE(d[i].first >= d[i - 1].first);
    const std::string svg = svg_line_chart({"t", "x", "y", {{"s", pts, false}}});
    MT_CHECK(count(svg, ",") <= kMaxChartPoints + 10);
    MT_CHECK(svg.size() < 100000);
}

MT_TEST(chartsHandleDegenerateData) {
    // One point, all equal values, a single histogram value: no NaN in the drawing.
    for (const std::string& svg :
         {svg_line_chart({"one", "x", "y", {{"s", {{1.0, 5.0}}, true}}}),
          svg_line_chart({"flat", "x", "y", {{"s", {{0, 0}, {1, 0}, {2, 0}}, false}}}),
          svg_line_chart({"empty", "x", "y", {}}), svg_histogram({"h", "ms", {42.0}, 20}),
          svg_histogram({"h0", "ms", {}, 20})}) {
        MT_CHECK(svg.find("nan") == std::string::npos);
        MT_CHECK(svg.find("inf") == std::string::npos);
        MT_COMPARE(count(svg, "<svg"), size_t{1});
    }
}

MT_TEST(hostileTimesStayBounded) {
    // An imported report's rows are a stranger's: times far out, many long requests. The page
    // stays small and is made quickly (no per-token or per-second work beyond the caps).
    BenchReport rep = make_report();
    rep.runs.resize(1);
    BenchRun& r = rep.runs[0];
    r.steps.clear();
    r.requests.clear();
    for (int i = 0; i < 20000; ++i) {
        BenchRequestRow q;
        q.arrival_s = 0;
        q.first_token_s = i % 2 ? 1e300 : 0.5;
        q.finish_s = i % 3 ? 9e5 : 1e300;
        q.output_tokens = 2000000000;
        r.requests.push_back(q);
    }
    r.steps.push_back(BenchStepRow{1e300, 1, 0, 1, 1, 0, 0, 0.5, 0, 0});
    r.steps.push_back(BenchStepRow{-5, 1, 0, 1, 1, 0, 0, 0.5, 0, 0});
    const std::string html = report_html(rep);
    MT_CHECK(html.size() < 2000000);
    MT_CHECK(html.find("nan") == std::string::npos);
    MT_COMPARE(count(html, "</svg>"), count(html, "<svg"));
}

MINI_TEST_MAIN()
