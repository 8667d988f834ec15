// ServingMetrics: vLLM's Prometheus metrics from a real engine run (the serving tests' model):
// counters equal what the engine's outputs say happened (prompt and generated tokens, finishes
// by reason, preemptions, prefix-cache and speculative counters), histogram counts equal the
// requests / outputs observed and their sums agree with each other (e2e = queue + prefill +
// decode; inter-token latencies add up to decode times), buckets are cumulative with +Inf =
// count, gauges follow the engine; exact exposition lines for a known small case; label
// escaping; the number format; counters that keep growing across a rebuilt engine.
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/serving/prometheus_histogram.h"
#include "engine/serving/prometheus_writer.h"
#include "engine/serving/serving_metrics.h"
#include "support/mini_test.h"
#include "test_serving_metrics_scenario.h"

using namespace llmwb;
using namespace llmwb::mini_test;

namespace {

// One sample line: name, its labels (in the order written) and the value.
struct Sample {
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels;
    double value = 0;
};

// A strict reader of what render_prometheus writes (one sample per line, label values with
// \\, \" and \n escapes). Fails the test on a line it cannot read.
std::vector<Sample> parse_samples(const std::string& text) {
    std::vector<Sample> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        Sample s;
        size_t i = 0;
        while (i < line.size() && line[i] != '{' && line[i] != ' ')
            s.name += line[i++];
        if (i < line.size() && line[i] == '{') {
            ++i;
            while (i < line.size() && line[i] != '}') {
                std::string key, value;
                while (i < line.size() && line[i] != '=')
                    key += line[i++];
                MT_REQUIRE_MSG(i + 1 < line.size() && line[i + 1] == '"', "bad line: %s",
                               line.c_str());
                i += 2;
                while (i < line.size() && line[i] != '"') {
                    if (line[i] == '\\') {
                        MT_REQUIRE_MSG(i + 1 < line.size(), "bad escape: %s", line.c_str());
                        const char c = line[++i];
                        value += c == 'n' ? '\n' : c;
                    } else {
                        value += line[i];
                    }
                    ++i;
                }
                MT_REQUIRE_MSG(i < line.size(), "unterminated label: %s", line.c_str());
                ++i; // closing quote
                s.labels.emplace_back(key, value);
                if (i < line.size() && line[i] == ',')
                    ++i;
            }
            ++i; // '}'
        }
        MT_REQUIRE_MSG(i < line.size() && line[i] == ' ', "bad line: %s", line.c_str());
        const std::string value = line.substr(i + 1);
        s.value = value == "+Inf" ? INFINITY : std::stod(value);
        out.push_back(std::move(s));
    }
    return out;
}

std::string label(const Sample& s, const std::string& key) {
    for (const auto& [k, v] : s.labels)
        if (k == key)
            return v;
    return "";
}

// The value of the one sample `name` whose labels include `extra` (key=value) if given.
double value_of(const std::vector<Sample>& samples, const std::string& name,
                const std::string& key = "", const std::string& want = "") {
    const Sample* found = nullptr;
    for (const Sample& s : samples)
        if (s.name == name && (key.empty() || label(s, key) == want)) {
            MT_REQUIRE_MSG(!found, "two samples %s", name.c_str());
            found = &s;
        }
    MT_REQUIRE_MSG(found, "no sample %s %s=%s", name.c_str(), key.c_str(), want.c_str());
    return found->value;
}

const char* const kHistograms[] = {
    "vllm:request_prompt_tokens",          "vllm:request_generation_tokens",
    "vllm:iteration_tokens_total",         "vllm:request_params_max_tokens",
    "vllm:time_to_first_token_seconds",    "vllm:inter_token_latency_seconds",
    "vllm:time_per_output_token_seconds",  "vllm:request_time_per_output_token_seconds",
    "vllm:e2e_request_latency_seconds",    "vllm:request_queue_time_seconds",
    "vllm:request_inference_time_seconds", "vllm:request_prefill_time_seconds",
    "vllm:request_decode_time_seconds"};

// Every histogram: le bounds ascending ending at +Inf, cumulative counts non-decreasing, +Inf
// equal to _count; returns the (count, sum) of each.
std::map<std::string, std::pair<double, double>>
check_histograms(const std::vector<Sample>& samples) {
    std::map<std::string, std::pair<double, double>> out;
    for (const char* h : kHistograms) {
        MT_SCOPE("%s", h);
        const std::string bucket = std::string(h) + "_bucket";
        double last_le = -INFINITY, last_count = 0;
        int buckets = 0;
        for (const Sample& s : samples) {
            if (s.name != bucket)
                continue;
            const std::string le = label(s, "le");
            MT_REQUIRE(!le.empty());
            MT_REQUIRE(s.labels.back().first == "le");
            const double bound = le == "+Inf" ? INFINITY : std::stod(le);
            MT_REQUIRE_MSG(bound > last_le, "le %s after %g", le.c_str(), last_le);
            MT_REQUIRE_MSG(s.value >= last_count, "bucket le=%s: %g < %g", le.c_str(), s.value,
                           last_count);
            last_le = bound;
            last_count = s.value;
            ++buckets;
        }
        MT_REQUIRE(buckets >= 2);
        MT_REQUIRE(std::isinf(last_le));
        const double count = value_of(samples, std::string(h) + "_count");
        MT_REQUIRE_COMPARE(last_count, count);
        out[h] = {count, value_of(samples, std::string(h) + "_sum")};
    }
    return out;
}

bool near(double a, double b, double tol) {
    return std::abs(a - b) <= tol;
}

} // namespace

MT_TEST(counters_and_histograms_equal_what_happened) {
    ServingMetrics metrics("demo");
    const test::MetricsScenario s = test::run_metrics_scenario(metrics);
    // The scenario did what it is for.
    MT_REQUIRE(s.preemptions > 0);
    MT_REQUIRE(s.speculative.num_accepted_tokens > 0);
    MT_REQUIRE(s.multi_token_outputs > 0);
    MT_REQUIRE_COMPARE(s.finished.at("stop"), 1);
    MT_REQUIRE_COMPARE(s.finished.at("length"), 5);
    MT_REQUIRE_COMPARE(s.finished.at("abort"), 2);
    MT_REQUIRE_COMPARE(s.num_used_blocks, 0);

    const auto samples = parse_samples(s.exposition);
    for (const Sample& x : samples) { // every sample is labelled like vLLM's
        MT_REQUIRE_COMPARE(x.labels.size() >= 2, true);
        MT_REQUIRE_COMPARE(x.labels[0].first, std::string("model_name"));
        MT_REQUIRE_COMPARE(x.labels[0].second, std::string("demo"));
        MT_REQUIRE_COMPARE(x.labels[1].first, std::string("engine"));
    }
    auto v = [&](const std::string& name) { return value_of(samples, name); };
    MT_COMPARE(v("vllm:prompt_tokens_total"), double(s.prompt_tokens_first_output));
    MT_COMPARE(v("vllm:generation_tokens_total"), double(s.generated));
    MT_COMPARE(v("vllm:num_preemptions_total"), double(s.preemptions));
    MT_COMPARE(v("vllm:prefix_cache_queries_total"), double(s.prefix_queries));
    MT_COMPARE(v("vllm:prefix_cache_hits_total"), double(s.prefix_hits));
    for (const char* reason : {"stop", "length", "abort"})
        MT_COMPARE(value_of(samples, "vllm:request_success_total", "finished_reason", reason),
                   double(s.finished.at(reason)));
    MT_COMPARE(v("vllm:spec_decode_num_drafts_total"), double(s.speculative.num_drafts));
    MT_COMPARE(v("vllm:spec_decode_num_draft_tokens_total"),
               double(s.speculative.num_draft_tokens));
    MT_COMPARE(v("vllm:spec_decode_num_accepted_tokens_total"),
               double(s.speculative.num_accepted_tokens));
    for (size_t p = 0; p < s.speculative.accepted_per_pos.size(); ++p)
        MT_COMPARE(value_of(samples, "vllm:spec_decode_num_accepted_tokens_per_pos_total",
                            "position", std::to_string(p)),
                   double(s.speculative.accepted_per_pos[p]));
    // Gauges: the engine is empty after the run.
    MT_COMPARE(v("vllm:num_requests_running"), 0.0);
    MT_COMPARE(v("vllm:num_requests_waiting"), 0.0);
    MT_COMPARE(v("vllm:kv_cache_usage_perc"), 0.0);
    MT_COMPARE(v("vllm:gpu_cache_usage_perc"), 0.0);

    const auto h = check_histograms(samples);
    auto count = [&](const char* name) { return h.at(name).first; };
    auto sum = [&](const char* name) { return h.at(name).second; };
    // One observation per request that finished (aborts included) ...
    for (const char* name :
         {"vllm:request_prompt_tokens", "vllm:request_generation_tokens",
          "vllm:request_params_max_tokens", "vllm:e2e_request_latency_seconds",
          "vllm:request_queue_time_seconds", "vllm:request_inference_time_seconds",
          "vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds",
          "vllm:request_time_per_output_token_seconds"})
        MT_COMPARE(count(name), double(s.requests));
    MT_COMPARE(sum("vllm:request_prompt_tokens"), double(s.prompt_tokens_all));
    MT_COMPARE(sum("vllm:request_generation_tokens"), double(s.generated));
    MT_COMPARE(sum("vllm:request_params_max_tokens"), double(s.max_tokens_sum));
    // ... per first output, per later output (one per step, also with accepted drafts), per step.
    MT_COMPARE(count("vllm:time_to_first_token_seconds"), double(s.first_outputs));
    MT_COMPARE(count("vllm:inter_token_latency_seconds"), double(s.later_outputs));
    MT_COMPARE(count("vllm:time_per_output_token_seconds"), double(s.later_outputs));
    MT_COMPARE(sum("vllm:time_per_output_token_seconds"), sum("vllm:inter_token_latency_seconds"));
    MT_COMPARE(count("vllm:iteration_tokens_total"), double(s.steps_run));
    MT_COMPARE(sum("vllm:iteration_tokens_total"), double(s.step_tokens));
    // The phases add up: e2e = queue + prefill + decode, inference = prefill + decode, and the
    // gaps between a request's outputs add up to its decode time.
    const double tol = 1e-6;
    MT_CHECK(sum("vllm:e2e_request_latency_seconds") > 0);
    MT_CHECK(sum("vllm:request_decode_time_seconds") > 0);
    MT_CHECK_MSG(near(sum("vllm:e2e_request_latency_seconds"),
                      sum("vllm:request_queue_time_seconds") +
                          sum("vllm:request_prefill_time_seconds") +
                          sum("vllm:request_decode_time_seconds"),
                      tol),
                 "e2e %.9f", sum("vllm:e2e_request_latency_seconds"));
    MT_CHECK(near(
        sum("vllm:request_inference_time_seconds"),
        sum("vllm:request_prefill_time_seconds") + sum("vllm:request_decode_time_seconds"), tol));
    MT_CHECK_MSG(
        near(sum("vllm:inter_token_latency_seconds"), sum("vllm:request_decode_time_seconds"), tol),
        "itl %.9f decode %.9f", sum("vllm:inter_token_latency_seconds"),
        sum("vllm:request_decode_time_seconds"));
    MT_CHECK(sum("vllm:time_to_first_token_seconds") > 0);

    // Mid-run: the gauges read the engine after that step.
    const auto mid = parse_samples(s.mid_exposition);
    MT_REQUIRE(s.mid_running > 0 && s.mid_waiting > 0);
    MT_COMPARE(value_of(mid, "vllm:num_requests_running"), double(s.mid_running));
    MT_COMPARE(value_of(mid, "vllm:num_requests_waiting"), double(s.mid_waiting));
    MT_COMPARE(value_of(mid, "vllm:kv_cache_usage_perc"), s.mid_kv_usage);
    MT_COMPARE(value_of(mid, "vllm:gpu_cache_usage_perc"), s.mid_kv_usage);
    MT_CHECK(s.mid_kv_usage > 0 && s.mid_kv_usage <= 1);
}

// A known small case, line for line: one request of 5 prompt tokens that ends at max_tokens 3
// (token-count figures only: timings vary).
MT_TEST(exact_lines_for_a_known_case) {
    EngineConfig c;
    c.block_size = 8;
    c.memory.num_blocks = 16;
    c.enable_prefix_caching = false;
    auto e = test::serving_engine(c);
    ServingMetrics metrics("demo", 100);
    const std::string before = metrics.render_prometheus();
    MT_CHECK(before.find("# HELP vllm:num_requests_running Requests in the engine's running "
                         "batch.\n# TYPE vllm:num_requests_running gauge\n"
                         "vllm:num_requests_running{model_name=\"demo\",engine=\"0\"} 0.0\n") !=
             std::string::npos);
    MT_REQUIRE(
        e->add_request(std::vector<int32_t>{3, 14, 15, 92, 6}, test::scenario_greedy(3)).ok());
    StepOutputs out;
    while (e->has_unfinished()) {
        e->step(out);
        metrics.observe_step(out, *e);
    }
    const std::string text = metrics.render_prometheus();
    const std::string l = "{model_name=\"demo\",engine=\"0\"";
    const std::string expected_prompt =
        "# HELP vllm:request_prompt_tokens Prompt tokens per finished request.\n"
        "# TYPE vllm:request_prompt_tokens histogram\n"
        "vllm:request_prompt_tokens_bucket" +
        l + ",le=\"1.0\"} 0.0\n" + "vllm:request_prompt_tokens_bucket" + l + ",le=\"2.0\"} 0.0\n" +
        "vllm:request_prompt_tokens_bucket" + l + ",le=\"5.0\"} 1.0\n" +
        "vllm:request_prompt_tokens_bucket" + l + ",le=\"10.0\"} 1.0\n" +
        "vllm:request_prompt_tokens_bucket" + l + ",le=\"20.0\"} 1.0\n" +
        "vllm:request_prompt_tokens_bucket" + l + ",le=\"50.0\"} 1.0\n" +
        "vllm:request_prompt_tokens_bucket" + l + ",le=\"100.0\"} 1.0\n" +
        "vllm:request_prompt_tokens_bucket" + l + ",le=\"+Inf\"} 1.0\n" +
        "vllm:request_prompt_tokens_count" + l + "} 1.0\n" + "vllm:request_prompt_tokens_sum" + l +
        "} 5.0\n";
    MT_CHECK_MSG(text.find(expected_prompt) != std::string::npos, "%s", text.c_str());
    for (const std::string& line : std::vector<std::string>{
             "# HELP vllm:prompt_tokens_total Prompt tokens of requests that produced their first "
             "token.\n# TYPE vllm:prompt_tokens_total counter\n",
             "vllm:prompt_tokens_total" + l + "} 5.0\n",
             "vllm:generation_tokens_total" + l + "} 3.0\n",
             "# TYPE vllm:request_success_total counter\n",
             "vllm:request_success_total" + l + ",finished_reason=\"stop\"} 0.0\n" +
                 "vllm:request_success_total" + l + ",finished_reason=\"length\"} 1.0\n" +
                 "vllm:request_success_total" + l + ",finished_reason=\"abort\"} 0.0\n",
             "vllm:request_generation_tokens_sum" + l + "} 3.0\n",
             "vllm:request_params_max_tokens_bucket" + l + ",le=\"2.0\"} 0.0\n" +
                 "vllm:request_params_max_tokens_bucket" + l + ",le=\"5.0\"} 1.0\n",
             "vllm:time_to_first_token_seconds_count" + l + "} 1.0\n",
             "vllm:inter_token_latency_seconds_count" + l + "} 2.0\n",
             "vllm:time_to_first_token_seconds_bucket" + l + ",le=\"0.001\"}",
             "vllm:e2e_request_latency_seconds_bucket" + l + ",le=\"7680.0\"} 1.0\n",
             "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter\n",
             "vllm:num_preemptions_total" + l + "} 0.0\n"})
        MT_CHECK_MSG(text.find(line) != std::string::npos, "missing:\n%s", line.c_str());
    // No speculation: the per-position family has no samples.
    MT_CHECK(text.find("vllm:spec_decode_num_accepted_tokens_per_pos_total{") == std::string::npos);
}

MT_TEST(label_values_are_escaped) {
    ServingMetrics metrics("we\"ird\\name\nx");
    const std::string text = metrics.render_prometheus();
    MT_CHECK(text.find("vllm:num_requests_waiting{model_name=\"we\\\"ird\\\\name\\nx\","
                       "engine=\"0\"} 0.0\n") != std::string::npos);
    // No raw line feed inside a sample: every line starts a comment or a vllm: sample.
    std::istringstream in(text);
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) {
        ++lines;
        MT_REQUIRE_MSG(line.rfind("# HELP vllm:", 0) == 0 || line.rfind("# TYPE vllm:", 0) == 0 ||
                           line.rfind("vllm:", 0) == 0,
                       "line %d: %s", lines, line.c_str());
    }
    const auto samples = parse_samples(text);
    MT_REQUIRE(!samples.empty());
    for (const Sample& s : samples)
        MT_REQUIRE_COMPARE(label(s, "model_name"), std::string("we\"ird\\name\nx"));
    std::string out;
    metrics::append_help_text(out, "a\\b\nc\"d");
    MT_COMPARE(out, std::string("a\\\\b\\nc\"d"));
}

MT_TEST(numbers_and_histogram_buckets) {
    auto num = [](double x) {
        std::string s;
        metrics::append_number(s, x);
        return s;
    };
    MT_COMPARE(num(0), std::string("0.0"));
    MT_COMPARE(num(3), std::string("3.0"));
    MT_COMPARE(num(0.25), std::string("0.25"));
    MT_COMPARE(num(0.001), std::string("0.001"));
    MT_COMPARE(num(2560), std::string("2560.0"));
    MT_COMPARE(num(1e-5), std::string("1e-05"));
    MT_COMPARE(num(-2.5), std::string("-2.5"));
    MT_COMPARE(num(INFINITY), std::string("+Inf"));
    MT_COMPARE(num(-INFINITY), std::string("-Inf"));
    MT_COMPARE(num(NAN), std::string("NaN"));

    MT_COMPARE(metrics::buckets_1_2_5(100), (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
    MT_COMPARE(metrics::buckets_1_2_5(4096).back(), 2000.0);
    MT_COMPARE(metrics::buckets_1_2_5(0.5).size(), size_t(0));

    const std::vector<double> bounds{0.1, 1, 10};
    metrics::Histogram h(bounds);
    for (double x : {0.05, 0.1, 0.5, 1.0, 20.0, 10.0, double(NAN)})
        h.observe(x);
    MT_COMPARE(h.count(), uint64_t(6)); // NaN ignored
    MT_CHECK(near(h.sum(), 31.65, 1e-12));
    MT_COMPARE(h.cumulative(0), uint64_t(2)); // le 0.1: 0.05 and 0.1 (a bound is inclusive)
    MT_COMPARE(h.cumulative(1), uint64_t(4));
    MT_COMPARE(h.cumulative(2), uint64_t(5));
    MT_COMPARE(h.cumulative(3), uint64_t(6)); // +Inf
    std::string text;
    metrics::TextWriter w(text);
    const metrics::Label labels[] = {{"k", "v"}};
    w.histogram("x", "help", labels, h);
    MT_COMPARE(text, std::string("# HELP x help\n# TYPE x histogram\n"
                                 "x_bucket{k=\"v\",le=\"0.1\"} 2.0\n"
                                 "x_bucket{k=\"v\",le=\"1.0\"} 4.0\n"
                                 "x_bucket{k=\"v\",le=\"10.0\"} 5.0\n"
                                 "x_bucket{k=\"v\",le=\"+Inf\"} 6.0\n"
                                 "x_count{k=\"v\"} 6.0\n"
                                 "x_sum{k=\"v\"} 31.65\n"));
    // Bounds past the capacity are dropped (their observations land in +Inf), unsorted ones too.
    std::vector<double> many;
    for (int i = 1; i <= 40; ++i)
        many.push_back(i);
    metrics::Histogram big(many);
    MT_COMPARE(big.num_bounds(), metrics::kMaxHistogramBounds);
    big.observe(39);
    MT_COMPARE(big.cumulative(metrics::kMaxHistogramBounds - 1), uint64_t(0));
    MT_COMPARE(big.cumulative(metrics::kMaxHistogramBounds), uint64_t(1));
    const std::vector<double> unsorted{1, 5, 3, 7};
    MT_COMPARE(metrics::Histogram(unsorted).num_bounds(), 3);
}

// A rebuilt engine (a model reload) starts its totals from zero: the counters keep growing.
MT_TEST(counters_keep_growing_across_engines) {
    EngineConfig c;
    c.block_size = 8;
    c.memory.num_blocks = 32;
    ServingMetrics metrics("demo");
    const std::vector<int32_t> prompt{5,  6,  7,  8,  9,  10, 11, 12, 13,
                                      14, 15, 16, 17, 18, 19, 20, 21};
    int64_t queries = 0, hits = 0;
    for (int round = 0; round < 2; ++round) {
        auto e = test::serving_engine(c);
        for (int i = 0; i < 2; ++i) { // the second one hits the first one's cached blocks
            MT_REQUIRE(e->add_request(prompt, test::scenario_greedy(2)).ok());
            StepOutputs out;
            while (e->has_unfinished()) {
                e->step(out);
                metrics.observe_step(out, *e);
            }
        }
        queries += e->kv_manager().prefix_queries();
        hits += e->kv_manager().prefix_hits();
    }
    MT_REQUIRE(hits > 0);
    const auto samples = parse_samples(metrics.render_prometheus());
    MT_COMPARE(value_of(samples, "vllm:prefix_cache_queries_total"), double(queries));
    MT_COMPARE(value_of(samples, "vllm:prefix_cache_hits_total"), double(hits));
    MT_COMPARE(value_of(samples, "vllm:prompt_tokens_total"), double(4 * prompt.size()));
    MT_COMPARE(value_of(samples, "vllm:generation_tokens_total"), 8.0);
}

MINI_TEST_MAIN()
