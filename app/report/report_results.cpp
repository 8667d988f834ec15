// results.json: one run's line (vLLM's keys in vLLM's order, then llmwb's) and its reader.
#include <cmath>
#include <limits>
#include <set>

#include "app/report/report_files.h"
#include "app/report/report_text.h"

namespace llmwb {

namespace {

using report_detail::format_double;
using oj = nlohmann::ordered_json;

constexpr const char* kMetricNames[] = {"ttft", "tpot", "itl", "e2el"};
constexpr size_t kMaxPercentiles = 100;
constexpr size_t kMaxSpecPositions = 1024;

const LatencyStats* metric_stats(const BenchResult& r, std::string_view m) {
    if (m == "ttft")
        return &r.ttft_ms;
    if (m == "tpot")
        return &r.tpot_ms;
    if (m == "itl")
        return &r.itl_ms;
    if (m == "e2el")
        return &r.e2el_ms;
    return nullptr;
}
LatencyStats* metric_stats(BenchResult& r, std::string_view m) {
    return const_cast<LatencyStats*>(metric_stats(static_cast<const BenchResult&>(r), m));
}

std::vector<std::string> split_metrics(std::string_view s) {
    std::vector<std::string> out;
    size_t b = 0;
    while (b <= s.size()) {
        size_t e = s.find(',', b);
        if (e == s.npos)
            e = s.size();
        if (e > b)
            out.emplace_back(s.substr(b, e - b));
        b = e + 1;
    }
    return out;
}

// vLLM's p_word: "99" for 99.0, "99.9" as written otherwise.
std::string percentile_word(double q) {
    if (q == std::floor(q) && std::fabs(q) < 1e15)
        return std::to_string(static_cast<long long>(q));
    return format_double(q);
}

int64_t num_prompts_of(const BenchRun& run) {
    if (run.settings.is_object()) {
        const auto w = run.settings.find("workload");
        if (w != run.settings.end() && w->is_object()) {
            const auto n = w->find("num_prompts");
            if (n != w->end() && n->is_number_integer())
                return n->get<int64_t>();
        }
    }
    if (!run.requests.empty())
        return static_cast<int64_t>(run.requests.size());
    return int64_t{run.figures.completed} + run.figures.failed;
}

// A finite double as JSON (report values are finite; a NaN that slipped through becomes 0
// rather than nlohmann's null, which the reader would refuse).
double finite_or_zero(double v) {
    return std::isfinite(v) ? v : 0.0;
}

// Reads keys of one line with the checks a stranger's file needs.
template <class J> class LineReader {
  public:
    LineReader(const J& j, const std::string& where) : j_(j), where_(where) {}

    bool has(const char* key) const { return j_.find(key) != j_.end(); }
    const std::string& error() const { return err_; }
    bool failed() const { return !err_.empty(); }

    const J* get(const std::string& key) {
        if (failed())
            return nullptr;
        const auto it = j_.find(key);
        if (it == j_.end()) {
            fail("missing key '" + key + "'");
            return nullptr;
        }
        return &*it;
    }
    double number(const std::string& key, double lo, double hi) {
        const J* v = get(key);
        if (!v)
            return 0;
        if (!v->is_number()) {
            fail("key '" + key + "' is not a number");
            return 0;
        }
        return checked(key, v->template get<double>(), lo, hi);
    }
    double checked(const std::string& key, double d, double lo, double hi) {
        if (!std::isfinite(d)) {
            fail("key '" + key + "' is not a finite number");
            return 0;
        }
        if (d < lo || d > hi) {
            fail("key '" + key + "' = " + format_double(d) + " is out of range [" +
                 format_double(lo) + ", " + format_double(hi) + "]");
            return 0;
        }
        return d;
    }
    int64_t integer(const std::string& key, int64_t lo, int64_t hi) {
        const J* v = get(key);
        if (!v)
            return 0;
        return integer_value(key, *v, lo, hi);
    }
    int64_t integer_value(const std::string& key, const J& v, int64_t lo, int64_t hi) {
        int64_t x = 0;
        if (v.is_number_unsigned()) {
            const auto u = v.template get<uint64_t>();
            if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
                fail("key '" + key + "' is out of range");
                return 0;
            }
            x = static_cast<int64_t>(u);
        } else if (v.is_number_integer()) {
            x = v.template get<int64_t>();
        } else {
            fail("key '" + key + "' is not an integer");
            return 0;
        }
        if (x < lo || x > hi) {
            fail("key '" + key + "' = " + std::to_string(x) + " is out of range [" +
                 std::to_string(lo) + ", " + std::to_string(hi) + "]");
            return 0;
        }
        return x;
    }
    int32_t int32(const std::string& key, int64_t lo = 0) {
        return static_cast<int32_t>(integer(key, lo, std::numeric_limits<int32_t>::max()));
    }
    int64_t count(const std::string& key) {
        return integer(key, 0, std::numeric_limits<int64_t>::max());
    }
    std::string string(const std::string& key) {
        const J* v = get(key);
        if (!v)
            return {};
        if (!v->is_string()) {
            fail("key '" + key + "' is not a string");
            return {};
        }
        return v->template get<std::string>();
    }
    const J* array(const std::string& key, size_t max_size) {
        const J* v = get(key);
        if (!v)
            return nullptr;
        if (!v->is_array()) {
            fail("key '" + key + "' is not an array");
            return nullptr;
        }
        if (v->size() > max_size) {
            fail("key '" + key + "' has " + std::to_string(v->size()) + " entries (at most " +
                 std::to_string(max_size) + ")");
            return nullptr;
        }
        return v;
    }
    void fail(const std::string& why) {
        if (err_.empty())
            err_ = where_ + ": " + why;
    }

  private:
    const J& j_;
    const std::string& where_;
    std::string err_;
};

constexpr double kBig = std::numeric_limits<double>::max();

template <class J> Result<BenchRun> parse_line(const J& j, const std::string& where) {
    if (!j.is_object())
        return make_error(where + ": not a JSON object");
    LineReader<J> r(j, where);
    // The version first: a newer format may have changed anything else.
    if (!r.has("llmwb_report_version"))
        return make_error(where + ": missing key 'llmwb_report_version' (not an llmwb report)");
    {
        const J& v = *j.find("llmwb_report_version");
        if (!v.is_number_integer())
            return make_error(where + ": key 'llmwb_report_version' is not an integer");
        if (v.template get<int64_t>() != kBenchReportVersion)
            return make_error(
                where + ": report format version " + std::to_string(v.template get<int64_t>()) +
                " is not supported (this build reads " + std::to_string(kBenchReportVersion) + ")");
    }
    BenchRun run;
    BenchResult& f = run.figures;
    run.date = r.string("date");
    run.backend = r.string("backend");
    run.model_id = r.string("model_id");
    r.count("num_prompts");
    {
        // vLLM writes "inf" for all at once; a number otherwise.
        const J* v = r.get("request_rate");
        if (v && v->is_string()) {
            const auto s = v->template get<std::string>();
            if (s == "inf" || s == "Infinity")
                f.request_rate = std::numeric_limits<double>::infinity();
            else
                r.fail("key 'request_rate' is neither a number nor \"inf\"");
        } else if (v) {
            f.request_rate = r.number("request_rate", 0, kBig);
        }
    }
    f.burstiness = r.number("burstiness", 0, kBig);
    f.max_concurrency = r.int32("max_concurrency");
    f.duration_s = r.number("duration", 0, kBig);
    f.completed = r.int32("completed");
    f.failed = r.int32("failed");
    f.total_input_tokens = r.count("total_input_tokens");
    f.total_output_tokens = r.count("total_output_tokens");
    f.request_throughput = r.number("request_throughput", 0, kBig);
    f.output_throughput = r.number("output_throughput", 0, kBig);
    f.total_token_throughput = r.number("total_token_throughput", 0, kBig);
    f.max_output_tokens_per_s = r.number("max_output_tokens_per_s", 0, kBig);
    f.max_concurrent_requests = r.int32("max_concurrent_requests");

    // llmwb's description of the percentiles written (vLLM's two arguments).
    run.percentile_metrics = r.string("percentile_metrics");
    const std::vector<std::string> metrics = split_metrics(run.percentile_metrics);
    std::vector<double> qs;
    if (const J* a = r.array("metric_percentiles", kMaxPercentiles)) {
        for (const auto& q : *a) {
            if (!q.is_number()) {
                r.fail("key 'metric_percentiles' holds a value that is not a number");
                break;
            }
            const double d = r.checked("metric_percentiles", q.template get<double>(), 0, 100);
            for (double seen : qs)
                if (seen == d)
                    r.fail("key 'metric_percentiles' names " + format_double(d) + " twice");
            qs.push_back(d);
        }
    }
    std::set<std::string> seen_metrics;
    for (const std::string& m : metrics) {
        if (r.failed())
            break;
        LatencyStats* s = metric_stats(f, m);
        if (!s || !seen_metrics.insert(m).second) {
            r.fail("key 'percentile_metrics' names '" + report_detail::printable(m) +
                   (s ? "' twice" : "', not one of ttft, tpot, itl, e2el"));
            break;
        }
        s->mean = r.number("mean_" + m + "_ms", 0, kBig);
        s->median = r.number("median_" + m + "_ms", 0, kBig);
        s->std = r.number("std_" + m + "_ms", 0, kBig);
        for (double q : qs) {
            const double v = r.number("p" + percentile_word(q) + "_" + m + "_ms", 0, kBig);
            s->percentiles.emplace_back(q, v);
            if (q == 99)
                s->p99 = v;
        }
    }

    if (r.has("spec_decode_num_drafts")) {
        SpeculativeStats& sp = f.speculative;
        r.number("spec_decode_acceptance_rate", 0, 100);
        r.number("spec_decode_acceptance_length", 0, kBig);
        sp.num_drafts = r.count("spec_decode_num_drafts");
        sp.num_draft_tokens = r.count("spec_decode_draft_tokens");
        sp.num_accepted_tokens = r.integer("spec_decode_accepted_tokens", 0, sp.num_draft_tokens);
        const J* rates = r.array("spec_decode_per_position_acceptance_rates", kMaxSpecPositions);
        const J* counts = r.array("spec_decode_per_position_accepted_tokens", kMaxSpecPositions);
        if (rates && counts) {
            if (rates->size() != counts->size())
                r.fail("keys 'spec_decode_per_position_acceptance_rates' and "
                       "'spec_decode_per_position_accepted_tokens' differ in length");
            for (const auto& x : *rates)
                if (!x.is_number() || !std::isfinite(x.template get<double>()) ||
                    x.template get<double>() < 0)
                    r.fail("key 'spec_decode_per_position_acceptance_rates' holds a bad value");
            for (const auto& x : *counts) {
                if (r.failed())
                    break;
                sp.accepted_per_pos.push_back(r.integer_value(
                    "spec_decode_per_position_accepted_tokens", x, 0, sp.num_accepted_tokens));
            }
        }
    }

    run.name = r.string("name");
    run.policy = r.string("policy");
    {
        const std::string st = r.string("status");
        if (!r.failed() && !parse_bench_run_status(st, &run.status))
            r.fail("key 'status' is '" + report_detail::printable(st) +
                   "', not one of completed, cancelled, failed");
    }
    run.error = r.string("error");
    run.sweep_setting = r.string("sweep_setting");
    run.sweep_value = r.number("sweep_value", -kBig, kBig);
    // Engine-side figures: null where the run could not measure them (an endpoint run).
    BenchFigureAvailability& av = f.available;
    auto is_null = [&](const char* key) {
        const auto it = j.find(key);
        return it != j.end() && it->is_null();
    };
    for (const char* k : {"num_blocks", "block_size", "kv_waste_vs_contiguous",
                          "kv_waste_vs_allocated", "contiguous_waste", "steps", "mean_batch_size"})
        if (is_null(k))
            av.engine = false;
    av.kv_usage = !is_null("mean_kv_usage") && !is_null("peak_kv_usage");
    av.preemptions = !is_null("preemptions");
    av.prefix_cache = !is_null("prefix_cache_queries") && !is_null("prefix_cache_hits") &&
                      !is_null("prefix_cache_hit_rate");
    if (av.engine) {
        f.num_blocks = r.int32("num_blocks");
        f.block_size = r.int32("block_size");
        f.kv_waste_vs_contiguous = r.number("kv_waste_vs_contiguous", 0, kBig);
        f.kv_waste_vs_allocated = r.number("kv_waste_vs_allocated", 0, 1);
        f.contiguous_waste = r.number("contiguous_waste", 0, 1);
        f.steps = r.count("steps");
        f.mean_batch_size = r.number("mean_batch_size", 0, kBig);
    }
    if (av.kv_usage) {
        f.mean_kv_usage = r.number("mean_kv_usage", 0, 1);
        f.peak_kv_usage = r.number("peak_kv_usage", 0, 1);
    }
    if (av.prefix_cache) {
        f.prefix_cache_queries = r.count("prefix_cache_queries");
        f.prefix_cache_hits = r.count("prefix_cache_hits");
        f.prefix_cache_hit_rate = r.number("prefix_cache_hit_rate", 0, 1);
    }
    if (av.preemptions)
        f.preemptions = r.count("preemptions");
    if (const J* a = r.array("per_request_ttft_ms", std::numeric_limits<size_t>::max())) {
        f.per_request_ttft_ms.reserve(a->size()); // the parsed array exists: no claimed count
        for (const auto& x : *a) {
            if (!x.is_number()) {
                r.fail("key 'per_request_ttft_ms' holds a value that is not a number");
                break;
            }
            f.per_request_ttft_ms.push_back(
                r.checked("per_request_ttft_ms", x.template get<double>(), 0, kBig));
        }
    }
    if (const J* s = r.get("settings")) {
        if (!s->is_object())
            r.fail("key 'settings' is not an object");
        else
            run.settings = oj(*s);
    }
    if (r.failed())
        return make_error(r.error());
    return run;
}

} // namespace

oj run_results_json(const BenchRun& run) {
    const BenchResult& f = run.figures;
    oj j = oj::object();
    j["date"] = run.date;
    j["backend"] = run.backend;
    j["model_id"] = run.model_id;
    j["num_prompts"] = num_prompts_of(run);
    if (std::isfinite(f.request_rate))
        j["request_rate"] = f.request_rate;
    else
        j["request_rate"] = "inf"; // vLLM's word for all at once, as valid JSON
    j["burstiness"] = finite_or_zero(f.burstiness);
    j["max_concurrency"] = f.max_concurrency;
    j["duration"] = finite_or_zero(f.duration_s);
    j["completed"] = f.completed;
    j["failed"] = f.failed;
    j["total_input_tokens"] = f.total_input_tokens;
    j["total_output_tokens"] = f.total_output_tokens;
    j["request_throughput"] = finite_or_zero(f.request_throughput);
    j["output_throughput"] = finite_or_zero(f.output_throughput);
    j["total_token_throughput"] = finite_or_zero(f.total_token_throughput);
    j["max_output_tokens_per_s"] = finite_or_zero(f.max_output_tokens_per_s);
    j["max_concurrent_requests"] = f.max_concurrent_requests;

    // The percentiles asked for: those of the first metric (every metric gets the same).
    std::vector<double> qs;
    const std::vector<std::string> metrics = split_metrics(run.percentile_metrics);
    for (const std::string& m : metrics) {
        const LatencyStats* s = metric_stats(f, m);
        if (!s)
            continue;
        if (qs.empty())
            for (const auto& [q, v] : s->percentiles)
                qs.push_back(q);
    }
    if (qs.empty())
        qs.push_back(99);
    for (const std::string& m : metrics) {
        const LatencyStats* s = metric_stats(f, m);
        if (!s)
            continue;
        j["mean_" + m + "_ms"] = finite_or_zero(s->mean);
        j["median_" + m + "_ms"] = finite_or_zero(s->median);
        j["std_" + m + "_ms"] = finite_or_zero(s->std);
        for (double q : qs) {
            double v = q == 99 ? s->p99 : 0;
            for (const auto& [pq, pv] : s->percentiles)
                if (pq == q)
                    v = pv;
            j["p" + percentile_word(q) + "_" + m + "_ms"] = finite_or_zero(v);
        }
    }
    const SpeculativeStats& sp = f.speculative;
    if (sp.num_drafts > 0 || sp.num_draft_tokens > 0) {
        j["spec_decode_acceptance_rate"] = sp.acceptance_rate() * 100.0;
        j["spec_decode_acceptance_length"] = sp.mean_acceptance_length();
        j["spec_decode_num_drafts"] = sp.num_drafts;
        j["spec_decode_draft_tokens"] = sp.num_draft_tokens;
        j["spec_decode_accepted_tokens"] = sp.num_accepted_tokens;
        oj rates = oj::array();
        for (int64_t a : sp.accepted_per_pos)
            rates.push_back(sp.num_drafts > 0 ? double(a) / double(sp.num_drafts) : 0.0);
        j["spec_decode_per_position_acceptance_rates"] = std::move(rates);
    }

    // llmwb's.
    j["llmwb_report_version"] = kBenchReportVersion;
    j["name"] = run.name;
    j["policy"] = run.policy;
    j["status"] = bench_run_status_name(run.status);
    j["error"] = run.error;
    j["sweep_setting"] = run.sweep_setting;
    j["sweep_value"] = finite_or_zero(run.sweep_value);
    j["percentile_metrics"] = run.percentile_metrics;
    oj jq = oj::array();
    for (double q : qs)
        jq.push_back(q);
    j["metric_percentiles"] = std::move(jq);
    if (sp.num_drafts > 0 || sp.num_draft_tokens > 0)
        j["spec_decode_per_position_accepted_tokens"] = sp.accepted_per_pos;
    // Engine-side figures: null where the run could not measure them (never a fake 0).
    const BenchFigureAvailability& av = f.available;
    auto put = [&j](const char* key, bool available, auto value) {
        if (available)
            j[key] = value;
        else
            j[key] = nullptr;
    };
    put("num_blocks", av.engine, f.num_blocks);
    put("block_size", av.engine, f.block_size);
    put("mean_kv_usage", av.kv_usage, finite_or_zero(f.mean_kv_usage));
    put("peak_kv_usage", av.kv_usage, finite_or_zero(f.peak_kv_usage));
    put("kv_waste_vs_contiguous", av.engine, finite_or_zero(f.kv_waste_vs_contiguous));
    put("kv_waste_vs_allocated", av.engine, finite_or_zero(f.kv_waste_vs_allocated));
    put("contiguous_waste", av.engine, finite_or_zero(f.contiguous_waste));
    put("prefix_cache_queries", av.prefix_cache, f.prefix_cache_queries);
    put("prefix_cache_hits", av.prefix_cache, f.prefix_cache_hits);
    put("prefix_cache_hit_rate", av.prefix_cache, finite_or_zero(f.prefix_cache_hit_rate));
    put("preemptions", av.preemptions, f.preemptions);
    put("steps", av.engine, f.steps);
    put("mean_batch_size", av.engine, finite_or_zero(f.mean_batch_size));
    oj ttfts = oj::array();
    for (double v : f.per_request_ttft_ms)
        ttfts.push_back(finite_or_zero(v));
    j["per_request_ttft_ms"] = std::move(ttfts);
    j["settings"] = run.settings.is_object() ? run.settings : oj::object();
    return j;
}

Result<BenchRun> parse_run_results_json(const nlohmann::json& line, const std::string& where) {
    return parse_line(line, where);
}

Result<BenchRun> parse_run_results_json(const oj& line, const std::string& where) {
    return parse_line(line, where);
}

} // namespace llmwb
