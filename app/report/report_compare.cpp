// Runs side by side (compare_runs / compare_text) and one run's summary in vLLM's result-block
// layout (run_summary_text).
#include "app/report/report_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

namespace llmwb {

namespace {

struct Figure {
    std::string key, unit;
    bool higher_is_better;
    std::function<std::optional<double>(const BenchRun&)> get;
};

bool has_metric(const BenchRun& r, std::string_view m) {
    std::string_view s = r.percentile_metrics;
    size_t b = 0;
    while (b <= s.size()) {
        size_t e = s.find(',', b);
        if (e == s.npos)
            e = s.size();
        if (s.substr(b, e - b) == m)
            return true;
        b = e + 1;
    }
    return false;
}

const LatencyStats& stats_of(const BenchResult& f, std::string_view m) {
    if (m == "ttft")
        return f.ttft_ms;
    if (m == "tpot")
        return f.tpot_ms;
    if (m == "itl")
        return f.itl_ms;
    return f.e2el_ms;
}

bool speculated(const BenchRun& r) {
    return r.figures.speculative.num_drafts > 0 || r.figures.speculative.num_draft_tokens > 0;
}

std::string percentile_label(double q) {
    char buf[32];
    if (q == std::floor(q))
        std::snprintf(buf, sizeof buf, "%.0f", q);
    else
        std::snprintf(buf, sizeof buf, "%g", q);
    return buf;
}

// Every figure a comparison can show, in display order. Fractions are shown in percent.
std::vector<Figure> figures_for(const std::vector<const BenchRun*>& runs) {
    using R = const BenchRun&;
    auto always = [](auto f) { return [f](R r) -> std::optional<double> { return f(r.figures); }; };
    // An engine-side figure: none (n/a) where the run could not measure it (an endpoint run).
    auto when = [](bool BenchFigureAvailability::*has, auto f) {
        return [has, f](R r) -> std::optional<double> {
            if (!(r.figures.available.*has))
                return std::nullopt;
            return f(r.figures);
        };
    };
    std::vector<Figure> out = {
        {"request_throughput", "req/s", true,
         always([](const BenchResult& f) { return f.request_throughput; })},
        {"output_throughput", "tok/s", true,
         always([](const BenchResult& f) { return f.output_throughput; })},
        {"total_token_throughput", "tok/s", true,
         always([](const BenchResult& f) { return f.total_token_throughput; })},
        {"max_output_tokens_per_s", "tok/s", true,
         always([](const BenchResult& f) { return f.max_output_tokens_per_s; })},
    };
    for (const char* m : {"ttft", "tpot", "itl", "e2el"}) {
        const std::string ms = m;
        auto stat = [ms](double LatencyStats::*field) {
            return [ms, field](R r) -> std::optional<double> {
                if (!has_metric(r, ms))
                    return std::nullopt;
                return stats_of(r.figures, ms).*field;
            };
        };
        out.push_back({"mean_" + ms + "_ms", "ms", false, stat(&LatencyStats::mean)});
        out.push_back({"median_" + ms + "_ms", "ms", false, stat(&LatencyStats::median)});
        // The percentiles of any run, in the order they first appear.
        std::vector<double> qs;
        for (const BenchRun* r : runs)
            if (has_metric(*r, ms))
                for (const auto& [q, v] : stats_of(r->figures, ms).percentiles)
                    if (std::find(qs.begin(), qs.end(), q) == qs.end())
                        qs.push_back(q);
        for (double q : qs) {
            out.push_back({"p" + percentile_label(q) + "_" + ms + "_ms", "ms", false,
                           [ms, q](R r) -> std::optional<double> {
                               if (!has_metric(r, ms))
                                   return std::nullopt;
                               for (const auto& [pq, v] : stats_of(r.figures, ms).percentiles)
                                   if (pq == q)
                                       return v;
                               return std::nullopt;
                           }});
        }
    }
    auto more = std::vector<Figure>{
        {"duration", "s", false, always([](const BenchResult& f) { return f.duration_s; })},
        {"completed", "", true, always([](const BenchResult& f) { return double(f.completed); })},
        {"failed", "", false, always([](const BenchResult& f) { return double(f.failed); })},
        {"total_input_tokens", "", true,
         always([](const BenchResult& f) { return double(f.total_input_tokens); })},
        {"total_output_tokens", "", true,
         always([](const BenchResult& f) { return double(f.total_output_tokens); })},
        {"mean_kv_usage", "%", false,
         when(&BenchFigureAvailability::kv_usage,
              [](const BenchResult& f) { return f.mean_kv_usage * 100.0; })},
        {"peak_kv_usage", "%", false,
         when(&BenchFigureAvailability::kv_usage,
              [](const BenchResult& f) { return f.peak_kv_usage * 100.0; })},
        {"kv_waste_vs_allocated", "%", false,
         when(&BenchFigureAvailability::engine,
              [](const BenchResult& f) { return f.kv_waste_vs_allocated * 100.0; })},
        {"prefix_cache_hit_rate", "%", true,
         when(&BenchFigureAvailability::prefix_cache,
              [](const BenchResult& f) { return f.prefix_cache_hit_rate * 100.0; })},
        {"preemptions", "", false,
         when(&BenchFigureAvailability::preemptions,
              [](const BenchResult& f) { return double(f.preemptions); })},
        {"mean_batch_size", "", true,
         when(&BenchFigureAvailability::engine,
              [](const BenchResult& f) { return f.mean_batch_size; })},
        {"spec_decode_acceptance_rate", "%", true,
         [](R r) -> std::optional<double> {
             if (!speculated(r))
                 return std::nullopt;
             return r.figures.speculative.acceptance_rate() * 100.0;
         }},
        {"spec_decode_acceptance_length", "tok", true,
         [](R r) -> std::optional<double> {
             if (!speculated(r))
                 return std::nullopt;
             return r.figures.speculative.mean_acceptance_length();
         }},
    };
    for (Figure& f : more)
        out.push_back(std::move(f));
    return out;
}

bool engine_side(std::string_view key) {
    for (const char* k : {"mean_kv_usage", "peak_kv_usage", "kv_waste_vs_allocated",
                          "prefix_cache_hit_rate", "preemptions", "mean_batch_size"})
        if (key == k)
            return true;
    return false;
}

// Display width of UTF-8 text: East Asian wide characters count two columns.
size_t display_width(std::string_view s) {
    size_t w = 0;
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        uint32_t cp = c;
        size_t n = 1;
        if (c >= 0xF0 && i + 3 < s.size()) {
            n = 4;
            cp = ((c & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) |
                 (s[i + 3] & 0x3Fu);
        } else if (c >= 0xE0 && i + 2 < s.size()) {
            n = 3;
            cp = ((c & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
        } else if (c >= 0xC0 && i + 1 < s.size()) {
            n = 2;
            cp = ((c & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu);
        }
        const bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
                          (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                          (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
                          (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x20000 && cp <= 0x3FFFD);
        w += wide ? 2 : 1;
        i += n;
    }
    return w;
}

std::string pad_right(const std::string& s, size_t width) {
    const size_t w = display_width(s);
    return w >= width ? s : s + std::string(width - w, ' ');
}
std::string pad_left(const std::string& s, size_t width) {
    const size_t w = display_width(s);
    return w >= width ? s : std::string(width - w, ' ') + s;
}

// Counts (no unit) as integers, everything else with two decimals.
std::string format_value(double v, bool count = true) {
    char buf[64];
    if (count && v == std::floor(v) && std::fabs(v) < 1e15)
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

std::string format_diff(const std::optional<double>& d) {
    if (!d)
        return "n/a";
    if (std::fabs(*d) < 0.05)
        return "0.0%";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%+.1f%%", *d);
    return buf;
}

std::string line(const char* label, const std::string& value) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%-40s ", label);
    return buf + value + "\n";
}
std::string fixed2(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}
std::string centered(const std::string& s, char fill) {
    constexpr size_t kWidth = 50;
    if (s.size() >= kWidth)
        return s + "\n";
    const size_t left = (kWidth - s.size()) / 2; // Python's '^': the extra fill goes right
    return std::string(left, fill) + s + std::string(kWidth - s.size() - left, fill) + "\n";
}

} // namespace

std::vector<CompareRow> compare_runs(const std::vector<const BenchRun*>& runs) {
    std::vector<CompareRow> rows;
    if (runs.empty())
        return rows;
    for (const Figure& f : figures_for(runs)) {
        CompareRow row;
        row.key = f.key;
        row.unit = f.unit;
        row.higher_is_better = f.higher_is_better;
        bool any = false;
        for (const BenchRun* r : runs) {
            std::optional<double> v = f.get(*r);
            if (v && !std::isfinite(*v))
                v.reset();
            any = any || v.has_value();
            row.values.push_back(v);
        }
        // A figure no run has is left out, except the engine-side ones: a report of endpoint
        // runs shows them as n/a (the server has them; this client could not see them).
        if (!any && !engine_side(f.key))
            continue;
        const std::optional<double> v0 = row.values[0];
        for (const auto& v : row.values) {
            if (!v0 || !v || *v0 == 0)
                row.diff_pct.push_back(std::nullopt);
            else
                row.diff_pct.push_back((*v - *v0) / *v0 * 100.0);
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

std::string compare_text(const std::vector<const BenchRun*>& runs) {
    const std::vector<CompareRow> rows = compare_runs(runs);
    // Cells: the figure, then per run its value and (after the first) its difference.
    std::vector<std::vector<std::string>> table;
    std::vector<std::string> header = {"figure"};
    for (size_t k = 0; k < runs.size(); ++k) {
        header.push_back(runs[k]->name.empty() ? "run " + std::to_string(k + 1) : runs[k]->name);
        if (k > 0)
            header.push_back("vs first");
    }
    table.push_back(header);
    for (const CompareRow& row : rows) {
        std::vector<std::string> cells = {row.unit.empty() ? row.key
                                                           : row.key + " (" + row.unit + ")"};
        for (size_t k = 0; k < runs.size(); ++k) {
            cells.push_back(row.values[k] ? format_value(*row.values[k], row.unit.empty()) : "n/a");
            if (k > 0)
                cells.push_back(format_diff(row.diff_pct[k]));
        }
        table.push_back(std::move(cells));
    }
    std::vector<size_t> width(header.size(), 0);
    for (const auto& cells : table)
        for (size_t c = 0; c < cells.size(); ++c)
            width[c] = std::max(width[c], display_width(cells[c]));
    std::string out;
    for (size_t r = 0; r < table.size(); ++r) {
        std::string text;
        for (size_t c = 0; c < table[r].size(); ++c) {
            if (c > 0)
                text += "  ";
            text += c == 0 ? pad_right(table[r][c], width[c]) : pad_left(table[r][c], width[c]);
        }
        while (!text.empty() && text.back() == ' ')
            text.pop_back();
        out += text + "\n";
        if (r == 0) {
            size_t total = 0;
            for (size_t w : width)
                total += w + 2;
            out += std::string(total - 2, '-') + "\n";
        }
    }
    return out;
}

std::string run_summary_text(const BenchRun& run) {
    const BenchResult& f = run.figures;
    std::string out = centered(" Serving Benchmark Result ", '=');
    out += line("Successful requests:", std::to_string(f.completed));
    out += line("Failed requests:", std::to_string(f.failed));
    if (f.max_concurrency > 0)
        out += line("Maximum request concurrency:", std::to_string(f.max_concurrency));
    if (std::isfinite(f.request_rate) && f.request_rate > 0)
        out += line("Request rate configured (RPS):", fixed2(f.request_rate));
    else
        out += line("Request rate configured (RPS):", "inf");
    out += line("Benchmark duration (s):", fixed2(f.duration_s));
    out += line("Total input tokens:", std::to_string(f.total_input_tokens));
    out += line("Total generated tokens:", std::to_string(f.total_output_tokens));
    out += line("Request throughput (req/s):", fixed2(f.request_throughput));
    out += line("Output token throughput (tok/s):", fixed2(f.output_throughput));
    out += line("Peak output token throughput (tok/s):", fixed2(f.max_output_tokens_per_s));
    out += line("Peak concurrent requests:", fixed2(f.max_concurrent_requests));
    out += line("Total Token throughput (tok/s):", fixed2(f.total_token_throughput));
    const struct {
        const char *m, *title, *abbr;
    } sections[] = {{"ttft", "Time to First Token", "TTFT"},
                    {"tpot", "Time per Output Token (excl. 1st token)", "TPOT"},
                    {"itl", "Inter-token Latency", "ITL"},
                    {"e2el", "End-to-end Latency", "E2EL"}};
    for (const auto& s : sections) {
        if (!has_metric(run, s.m))
            continue;
        const LatencyStats& st = stats_of(f, s.m);
        out += centered(s.title, '-');
        const std::string a = s.abbr;
        out += line(("Mean " + a + " (ms):").c_str(), fixed2(st.mean));
        out += line(("Median " + a + " (ms):").c_str(), fixed2(st.median));
        for (const auto& [q, v] : st.percentiles)
            out += line(("P" + percentile_label(q) + " " + a + " (ms):").c_str(), fixed2(v));
    }
    if (speculated(run)) {
        const SpeculativeStats& sp = f.speculative;
        out += centered("Speculative Decoding", '-');
        out += line("Acceptance rate (%):", fixed2(sp.acceptance_rate() * 100.0));
        out += line("Acceptance length:", fixed2(sp.mean_acceptance_length()));
        out += line("Drafts:", std::to_string(sp.num_drafts));
        out += line("Draft tokens:", std::to_string(sp.num_draft_tokens));
        out += line("Accepted tokens:", std::to_string(sp.num_accepted_tokens));
        if (!sp.accepted_per_pos.empty()) {
            out += "Per-position acceptance (%):\n";
            for (size_t i = 0; i < sp.accepted_per_pos.size(); ++i) {
                const double rate = sp.num_drafts > 0 ? double(sp.accepted_per_pos[i]) /
                                                            double(sp.num_drafts) * 100.0
                                                      : 0.0;
                out += line(("  Position " + std::to_string(i) + ":").c_str(), fixed2(rate));
            }
        }
    }
    out += centered("llmwb", '-');
    out += line("Run:", run.name);
    out += line("Policy:", run.policy);
    out += line("Status:", bench_run_status_name(run.status));
    if (!run.error.empty()) {
        std::string one_line = run.error;
        std::replace(one_line.begin(), one_line.end(), '\n', ' ');
        out += line("Error:", one_line);
    }
    if (!run.sweep_setting.empty())
        out += line("Swept setting:", run.sweep_setting + " = " + format_value(run.sweep_value));
    // Engine-side figures: "n/a" where the run could not measure them (an endpoint run).
    const BenchFigureAvailability& av = f.available;
    const std::string na = "n/a";
    out += line("KV blocks (block size):",
                av.engine ? std::to_string(f.num_blocks) + " (" + std::to_string(f.block_size) + ")"
                          : na);
    out += line("Mean KV usage (%):", av.kv_usage ? fixed2(f.mean_kv_usage * 100.0) : na);
    out += line("Peak KV usage (%):", av.kv_usage ? fixed2(f.peak_kv_usage * 100.0) : na);
    out += line("KV waste vs allocated (%):",
                av.engine ? fixed2(f.kv_waste_vs_allocated * 100.0) : na);
    out += line("KV waste vs contiguous (%):",
                av.engine ? fixed2(f.kv_waste_vs_contiguous * 100.0) : na);
    out += line("Contiguous preallocation waste (%):",
                av.engine ? fixed2(f.contiguous_waste * 100.0) : na);
    out += line("Prefix cache hit rate (%):",
                av.prefix_cache ? fixed2(f.prefix_cache_hit_rate * 100.0) : na);
    out += line("Prefix cache hits / queries:", av.prefix_cache
                                                    ? std::to_string(f.prefix_cache_hits) + " / " +
                                                          std::to_string(f.prefix_cache_queries)
                                                    : na);
    out += line("Preemptions:", av.preemptions ? std::to_string(f.preemptions) : na);
    out += line("Engine steps:", av.engine ? std::to_string(f.steps) : na);
    out += line("Mean batch size:", av.engine ? fixed2(f.mean_batch_size) : na);
    out.append(50, '=').push_back('\n');
    return out;
}

} // namespace llmwb
