// report.html: one self-contained page (inline CSS and SVG; no scripts, no external resources).
#include "app/report/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "app/report/report_compare.h"
#include "app/report/report_text.h"
#include "app/report/report_think.h"
#include "app/report/svg_chart.h"

namespace llmwb {

namespace {

using report_detail::html_escape;
using oj = nlohmann::ordered_json;

const char* const kCss = R"(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC",
  "Helvetica Neue", Arial, sans-serif; margin: 0 auto; padding: 16px 20px 40px; max-width: 1400px;
  color: #111827; background: #fff; line-height: 1.4; }
h1 { font-size: 1.5em; margin: 0.2em 0 0.4em; overflow-wrap: anywhere; }
h2 { font-size: 1.2em; margin: 1.4em 0 0.5em; border-bottom: 1px solid #e5e7eb; padding-bottom: 4px; }
h3 { font-size: 1.05em; margin: 1em 0 0.4em; overflow-wrap: anywhere; }
p.meta { color: #4b5563; margin: 0 0 0.6em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.86em; }
th, td { border: 1px solid #e5e7eb; padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: #f3f4f6; }
td.k, th.k { text-align: left; font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas,
  "DejaVu Sans Mono", monospace; white-space: nowrap; }
td.t { text-align: left; overflow-wrap: anywhere; max-width: 40em; white-space: pre-line; }
tr.diff td { background: #fef3c7; }
span.better { color: #047857; } span.worse { color: #b91c1c; }
span.bad { color: #b91c1c; font-weight: 600; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 460px), 1fr)); gap: 12px; }
svg.chart { width: 100%; height: auto; display: block; border: 1px solid #e5e7eb; border-radius: 4px;
  background: #fff; }
svg .ct { font-size: 16px; font-weight: 600; fill: #111827; }
svg .xt, svg .yt, svg .lg { font-size: 12.5px; fill: #374151; }
svg .xt { text-anchor: middle; } svg .yt { text-anchor: end; }
svg .xl, svg .yl { font-size: 13px; fill: #374151; text-anchor: middle; }
svg .grid { stroke: #eef0f3; stroke-width: 1; } svg .axis { stroke: #6b7280; stroke-width: 1; }
p.none { color: #6b7280; font-style: italic; }
@media (max-width: 900px) {
  body { padding: 12px 10px 32px; }
  table { font-size: 0.8em; }
  th, td { padding: 3px 5px; }
  td.k, th.k { white-space: normal; overflow-wrap: anywhere; min-width: 8em; }
}
@media print { .charts { grid-template-columns: 1fr 1fr; } }
)";

std::string fmt(double v, int decimals = 2) {
    if (!std::isfinite(v))
        return "inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string value_text(const oj& v) {
    if (v.is_string())
        return v.get<std::string>();
    return v.dump();
}

std::string run_label(const BenchRun& r, size_t k) {
    return r.name.empty() ? "run " + std::to_string(k + 1) : r.name;
}

std::string summary_section(const BenchReport& rep) {
    std::vector<const BenchRun*> runs;
    for (const BenchRun& r : rep.runs)
        runs.push_back(&r);
    std::string s =
        "<h2>Summary</h2>\n<div class=\"scroll\"><table>\n<tr><th class=\"k\">figure</th>";
    for (size_t k = 0; k < runs.size(); ++k)
        s += "<th>" + html_escape(run_label(*runs[k], k)) + "</th>";
    s += "</tr>\n";
    auto text_row = [&](const char* key, auto get) {
        s += "<tr><td class=\"k\">" + std::string(key) + "</td>";
        for (const BenchRun* r : runs)
            s += "<td class=\"t\">" + get(*r) + "</td>";
        s += "</tr>\n";
    };
    text_row("status", [](const BenchRun& r) {
        const std::string st = bench_run_status_name(r.status);
        return r.status == BenchRunStatus::Completed ? st : "<span class=\"bad\">" + st + "</span>";
    });
    text_row("error", [](const BenchRun& r) { return html_escape(r.error); });
    text_row("policy", [](const BenchRun& r) { return html_escape(r.policy); });
    text_row("model_id", [](const BenchRun& r) { return html_escape(r.model_id); });
    text_row("date", [](const BenchRun& r) { return html_escape(r.date); });
    text_row("request_rate", [](const BenchRun& r) {
        return std::isfinite(r.figures.request_rate) && r.figures.request_rate > 0
                   ? fmt(r.figures.request_rate)
                   : std::string("inf");
    });
    for (const CompareRow& row : compare_runs(runs)) {
        s += "<tr><td class=\"k\">" + html_escape(row.key) +
             (row.unit.empty() ? "" : " (" + html_escape(row.unit) + ")") + "</td>";
        for (size_t k = 0; k < runs.size(); ++k) {
            s += "<td>";
            if (!row.values[k]) {
                s += "n/a";
            } else {
                s += row.unit.empty() && *row.values[k] == std::floor(*row.values[k])
                         ? fmt(*row.values[k], 0)
                         : fmt(*row.values[k]);
                if (k > 0 && row.diff_pct[k] && std::fabs(*row.diff_pct[k]) >= 0.05) {
                    const bool better = (*row.diff_pct[k] > 0) == row.higher_is_better;
                    char buf[32];
                    std::snprintf(buf, sizeof buf, "%+.1f%%", *row.diff_pct[k]);
                    s += " <span class=\"" + std::string(better ? "better" : "worse") + "\">" +
                         buf + "</span>";
                }
            }
            s += "</td>";
        }
        s += "</tr>\n";
    }
    s += "</table></div>\n";
    if (runs.size() > 1)
        s += "<p class=\"meta\">Differences in % are against the first run.</p>\n";
    return s;
}

// "workload.num_prompts" -> value, in first-seen order over the runs.
std::vector<std::pair<std::string, std::vector<std::string>>>
flatten_settings(const std::vector<BenchRun>& runs) {
    std::vector<std::pair<std::string, std::vector<std::string>>> rows;
    std::map<std::string, size_t> index;
    for (size_t k = 0; k < runs.size(); ++k) {
        if (!runs[k].settings.is_object())
            continue;
        for (const auto& [group, obj] : runs[k].settings.items()) {
            auto put = [&](const std::string& key, const oj& v) {
                auto it = index.find(key);
                if (it == index.end()) {
                    it = index.emplace(key, rows.size()).first;
                    rows.emplace_back(key, std::vector<std::string>(runs.size(), "—"));
                }
                rows[it->second].second[k] = value_text(v);
            };
            if (obj.is_object())
                for (const auto& [key, v] : obj.items())
                    put(group + "." + key, v);
            else
                put(group, obj);
        }
    }
    return rows;
}

std::string settings_section(const BenchReport& rep) {
    const auto rows = flatten_settings(rep.runs);
    std::string s = "<h2>Settings</h2>\n";
    if (rows.empty())
        return s + "<p class=\"none\">No settings recorded.</p>\n";
    s += "<div class=\"scroll\"><table>\n<tr><th class=\"k\">setting</th>";
    for (size_t k = 0; k < rep.runs.size(); ++k)
        s += "<th>" + html_escape(run_label(rep.runs[k], k)) + "</th>";
    s += "</tr>\n";
    for (const auto& [key, values] : rows) {
        const bool differs =
            std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) != values.end();
        s += std::string(differs ? "<tr class=\"diff\">" : "<tr>") + "<td class=\"k\">" +
             html_escape(key) + "</td>";
        for (const std::string& v : values)
            s += "<td class=\"t\">" + html_escape(v) + "</td>";
        s += "</tr>\n";
    }
    s += "</table></div>\n";
    if (rep.runs.size() > 1)
        s += "<p class=\"meta\">Highlighted rows differ between runs.</p>\n";
    return s;
}

std::string environment_section(const BenchReport& rep) {
    std::string s = "<h2>Environment</h2>\n";
    if (!rep.environment.is_object() || rep.environment.empty())
        return s + "<p class=\"none\">No environment recorded.</p>\n";
    s += "<div class=\"scroll\"><table>\n";
    for (const auto& [key, v] : rep.environment.items()) {
        if (v.is_object()) {
            for (const auto& [k2, v2] : v.items())
                s += "<tr><td class=\"k\">" + html_escape(key + "." + k2) +
                     "</td><td class=\"t\">" + html_escape(value_text(v2)) + "</td></tr>\n";
        } else {
            s += "<tr><td class=\"k\">" + html_escape(key) + "</td><td class=\"t\">" +
                 html_escape(value_text(v)) + "</td></tr>\n";
        }
    }
    return s + "</table></div>\n";
}

std::string none(const std::string& what) {
    return "<p class=\"none\">" + html_escape(what) + ": no data.</p>\n";
}

// The bin width of the throughput chart: 1 s (vLLM's peak figure counts whole seconds) for
// runs of 20 s or more, else the largest of 0.5, 0.2, 0.1, 0.05, 0.02, 0.01 s giving at least 20
// bins (a demo-model run lasts a fraction of a second).
double throughput_bin_seconds(const BenchRun& r) {
    double duration = r.figures.duration_s;
    if (!r.steps.empty())
        duration = std::max(duration, r.steps.back().time_s);
    if (!(duration < 20.0))
        return 1.0;
    for (double w : {0.5, 0.2, 0.1, 0.05, 0.02})
        if (duration / w >= 20.0)
            return w;
    return 0.01;
}

// Output tokens/s per bin (throughput_bin_seconds): from the steps' decode tokens (accepted
// drafts included), or from the requests (each one's tokens spread evenly between its first
// token and its finish). Times past kMaxSeconds are left out (the report may come from a
// stranger); the work is one pass over the rows plus one over the bins.
std::vector<std::pair<double, double>> throughput_series(const BenchRun& r, double width) {
    constexpr double kMaxSeconds = 1e6;
    const double kMaxBins = kMaxSeconds / width;
    std::vector<double> bins;
    auto grow = [&](double t) { // t in bins
        const auto b = static_cast<size_t>(t);
        if (b >= bins.size())
            bins.resize(b + 1, 0.0);
        return b;
    };
    if (!r.steps.empty()) {
        for (const BenchStepRow& st : r.steps)
            if (st.time_s >= 0 && st.time_s < kMaxSeconds)
                bins[grow(st.time_s / width)] +=
                    double(st.decode_tokens) + double(st.accepted_tokens);
    } else {
        // A request producing n tokens over [a, b] adds n/(b-a) tokens/s over that interval:
        // its partial first and last bins directly, the bins in between through a difference
        // array of rates.
        std::vector<double> rate_diff;
        for (const BenchRequestRow& q : r.requests) {
            const double a = q.first_token_s / width, b = q.finish_s / width;
            if (q.output_tokens <= 0 || !(a >= 0) || !(a < kMaxBins))
                continue;
            if (!(b > a) || !(b < kMaxBins)) {
                bins[grow(a)] += q.output_tokens;
                continue;
            }
            const double rate = q.output_tokens / (b - a);
            const size_t ba = grow(a), bb = grow(b);
            if (ba == bb) {
                bins[ba] += q.output_tokens;
                continue;
            }
            bins[ba] += rate * (double(ba + 1) - a);
            bins[bb] += rate * (b - double(bb));
            if (rate_diff.size() < bins.size() + 1)
                rate_diff.resize(bins.size() + 1, 0.0);
            rate_diff[ba + 1] += rate;
            rate_diff[bb] -= rate;
        }
        double rate = 0;
        for (size_t i = 0; i < bins.size() && i < rate_diff.size(); ++i) {
            rate += rate_diff[i];
            bins[i] += rate;
        }
    }
    std::vector<std::pair<double, double>> pts;
    for (size_t b = 0; b < bins.size(); ++b)
        pts.emplace_back((double(b) + 0.5) * width, bins[b] / width);
    return pts;
}

// Per-step values averaged over `buckets` equal slices of time (a run has thousands of steps;
// drawn one by one, a value that alternates between steps fills the chart solid).
std::vector<std::pair<double, double>>
bucket_means(const std::vector<std::pair<double, double>>& pts, size_t buckets) {
    if (pts.size() <= buckets)
        return pts;
    const double t0 = pts.front().first, t1 = pts.back().first;
    const double width = t1 > t0 ? (t1 - t0) / double(buckets) : 1.0;
    std::vector<double> sum(buckets, 0.0), n(buckets, 0.0);
    for (const auto& [t, v] : pts) {
        const auto b = std::min(buckets - 1, static_cast<size_t>(std::max(0.0, (t - t0) / width)));
        sum[b] += v;
        n[b] += 1;
    }
    std::vector<std::pair<double, double>> out;
    for (size_t b = 0; b < buckets; ++b)
        if (n[b] > 0)
            out.emplace_back(t0 + (double(b) + 0.5) * width, sum[b] / n[b]);
    return out;
}

std::string run_charts(const BenchRun& r, size_t k) {
    std::string s = "<h3>" + html_escape(run_label(r, k)) + "</h3>\n<div class=\"charts\">\n";
    const std::string name = run_label(r, k);
    const double width = throughput_bin_seconds(r);
    if (auto tp = throughput_series(r, width); !tp.empty()) {
        char unit[48];
        std::snprintf(unit, sizeof unit, "tokens/s (%g s bins)", width);
        s += svg_line_chart(
            {"Output throughput", "time (s)", unit, {{"output tokens/s", std::move(tp), false}}});
    } else
        s += none("Output throughput");
    if (!r.steps.empty()) {
        ChartSeries kv{"KV usage", {}, false}, running{"running", {}, false},
            waiting{"waiting", {}, false};
        for (const BenchStepRow& st : r.steps) {
            kv.points.emplace_back(st.time_s, st.kv_usage * 100.0);
            running.points.emplace_back(st.time_s, st.running);
            waiting.points.emplace_back(st.time_s, st.waiting);
        }
        s += svg_line_chart({"KV cache usage", "time (s)", "blocks in use (%)", {std::move(kv)}});
        running.points = bucket_means(running.points, 200);
        waiting.points = bucket_means(waiting.points, 200);
        s += svg_line_chart({"Batch size per step",
                             "time (s)",
                             r.steps.size() > 200 ? "requests (mean of the steps)" : "requests",
                             {std::move(running), std::move(waiting)}});
    } else {
        s += none("KV cache usage") + none("Batch size per step");
    }
    Histogram ttft{"TTFT", "time to first token (ms)", {}, 20};
    Histogram tpot{"TPOT", "time per output token (ms)", {}, 20};
    Histogram e2el{"E2EL", "end-to-end latency (ms)", {}, 20};
    for (const BenchRequestRow& q : r.requests) {
        if (q.first_token_s >= 0)
            ttft.values.push_back((q.first_token_s - q.arrival_s) * 1000.0);
        if (q.finish_s >= 0) {
            e2el.values.push_back((q.finish_s - q.arrival_s) * 1000.0);
            if (q.first_token_s >= 0 && q.output_tokens > 1)
                tpot.values.push_back((q.finish_s - q.first_token_s) * 1000.0 /
                                      (q.output_tokens - 1));
        }
    }
    for (const Histogram* h : {&ttft, &tpot, &e2el})
        s += h->values.empty() ? none(h->title) : svg_histogram(*h);
    return s + "</div>\n";
}

// Sweeps: runs with a swept setting, grouped by it (a group of two or more points is charted).
std::string sweep_section(const BenchReport& rep) {
    std::vector<std::string> settings;
    for (const BenchRun& r : rep.runs)
        if (!r.sweep_setting.empty() &&
            std::find(settings.begin(), settings.end(), r.sweep_setting) == settings.end())
            settings.push_back(r.sweep_setting);
    std::string s;
    for (const std::string& setting : settings) {
        std::vector<const BenchRun*> pts;
        for (const BenchRun& r : rep.runs)
            if (r.sweep_setting == setting)
                pts.push_back(&r);
        if (pts.size() < 2)
            continue;
        std::stable_sort(pts.begin(), pts.end(), [](const BenchRun* a, const BenchRun* b) {
            return a->sweep_value < b->sweep_value;
        });
        auto series = [&](const char* name, auto get) {
            ChartSeries c{name, {}, true};
            for (const BenchRun* r : pts)
                c.points.emplace_back(r->sweep_value, get(r->figures));
            return c;
        };
        auto p99 = [](const LatencyStats& st) {
            for (const auto& [q, v] : st.percentiles)
                if (q == 99)
                    return v;
            return st.p99;
        };
        s += "<h2>Sweep over " + html_escape(setting) + "</h2>\n<div class=\"charts\">\n";
        s += svg_line_chart(
            {"Throughput",
             setting,
             "tokens/s",
             {series("output tok/s", [](const BenchResult& f) { return f.output_throughput; }),
              series("total tok/s",
                     [](const BenchResult& f) { return f.total_token_throughput; })}});
        s +=
            svg_line_chart({"TTFT",
                            setting,
                            "ms",
                            {series("mean", [](const BenchResult& f) { return f.ttft_ms.mean; }),
                             series("p99", [&](const BenchResult& f) { return p99(f.ttft_ms); })}});
        s +=
            svg_line_chart({"TPOT",
                            setting,
                            "ms",
                            {series("mean", [](const BenchResult& f) { return f.tpot_ms.mean; }),
                             series("p99", [&](const BenchResult& f) { return p99(f.tpot_ms); })}});
        s += "</div>\n";
    }
    return s;
}

} // namespace

std::string report_html(const BenchReport& report) {
    const std::string title = report.title.empty() ? "Benchmark report" : report.title;
    std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<title>" +
                    html_escape(title) + "</title>\n<style>" + kCss + "</style>\n</head>\n<body>\n";
    s += "<h1>" + html_escape(title) + "</h1>\n";
    s += "<p class=\"meta\">" + std::to_string(report.runs.size()) +
         (report.runs.size() == 1 ? " run" : " runs") + " · LLM Workbench report format " +
         std::to_string(kBenchReportVersion) + "</p>\n";
    if (report.runs.empty())
        s += "<p class=\"none\">This report has no runs.</p>\n";
    else
        s += summary_section(report);
    s += sweep_section(report);
    s += settings_section(report);
    s += environment_section(report);
    s += think_html_section(report.think);
    if (!report.runs.empty()) {
        s += "<h2>Runs</h2>\n";
        for (size_t k = 0; k < report.runs.size(); ++k)
            s += run_charts(report.runs[k], k);
    }
    s += "</body>\n</html>\n";
    return s;
}

} // namespace llmwb
