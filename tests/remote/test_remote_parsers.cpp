// The parsers of remote endpoints (app/remote): endpoint URLs, server-sent events (split reads,
// CRLF/CR, comments, limits), the Prometheus text format (real-shaped vLLM and llama.cpp scrapes,
// escapes, hostile input) and the engine figures of two scrapes (rates, histogram quantiles,
// unavailable stays unavailable).
#include <cmath>
#include <string>

#include "app/remote/endpoint_url.h"
#include "app/remote/prometheus_text.h"
#include "app/remote/remote_engine_metrics.h"
#include "app/remote/sse_parser.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::remote;

MT_TEST(endpointUrlForms) {
    auto a = parse_endpoint_url("http://127.0.0.1:8000");
    MT_REQUIRE(a.ok());
    MT_COMPARE(a->host, std::string("127.0.0.1"));
    MT_COMPARE(a->port, 8000);
    MT_COMPARE(a->prefix, std::string(""));
    MT_COMPARE(a->path("/v1/models"), std::string("/v1/models"));
    auto b = parse_endpoint_url("HTTPS://gpu.example/llm/v1/");
    MT_REQUIRE(b.ok());
    MT_COMPARE(b->scheme, std::string("https"));
    MT_COMPARE(b->port, 443);
    MT_COMPARE(b->prefix, std::string("/llm"));
    MT_COMPARE(b->path("/metrics"), std::string("/llm/metrics"));
    auto c = parse_endpoint_url("http://[::1]:9000/v1");
    MT_REQUIRE(c.ok());
    MT_COMPARE(c->host, std::string("[::1]"));
    MT_COMPARE(c->port, 9000);
    for (const char* bad : {"127.0.0.1:8000", "ftp://h", "http://", "http://h:0", "http://h:99999",
                            "http://h:80x", "http://u:p@h", "http://h/v1?x=1", "http://h /v1"}) {
        MT_SCOPE("%s", bad);
        auto r = parse_endpoint_url(bad);
        MT_CHECK(!r.ok());
        if (!r.ok())
            MT_CHECK(r.message().find("endpoint") != std::string::npos ||
                     r.message().find("URL") != std::string::npos);
    }
}

MT_TEST(sseSplitReadsAndLineEnds) {
    const std::string text = ": keep-alive\r\n\r\ndata: {\"a\":1}\r\n\r\ndata: x\rdata: y\r\r"
                             "event: ping\ndata:  two spaces\n\ndata: [DONE]\n\n";
    // Every split point gives the same events.
    for (size_t cut = 0; cut <= text.size(); ++cut) {
        MT_SCOPE("cut %zu", cut);
        SseParser p;
        std::vector<SseEvent> ev;
        MT_REQUIRE(p.feed(std::string_view(text).substr(0, cut), ev).ok());
        MT_REQUIRE(p.feed(std::string_view(text).substr(cut), ev).ok());
        MT_REQUIRE_COMPARE(ev.size(), size_t(4));
        MT_COMPARE(ev[0].data, std::string("{\"a\":1}"));
        MT_COMPARE(ev[1].data, std::string("x\ny"));
        MT_COMPARE(ev[2].event, std::string("ping"));
        MT_COMPARE(ev[2].data, std::string(" two spaces"));
        MT_COMPARE(ev[3].data, std::string("[DONE]"));
        MT_COMPARE(p.comments(), size_t(1));
        MT_CHECK(!p.had_partial());
    }
    SseParser p;
    std::vector<SseEvent> ev;
    MT_REQUIRE(p.feed("data: {\"half", ev).ok());
    MT_CHECK(ev.empty());
    MT_CHECK(p.had_partial());
}

MT_TEST(sseLimits) {
    SseParser p(SseLimits{64, 100});
    std::vector<SseEvent> ev;
    auto r = p.feed("data: " + std::string(100, 'x'), ev);
    MT_REQUIRE(!r.ok());
    MT_CHECK(r.message().find("line longer than 64") != std::string::npos);
    SseParser q(SseLimits{64, 100});
    std::string many;
    for (int i = 0; i < 5; ++i)
        many += "data: " + std::string(30, 'y') + "\n";
    auto s = q.feed(many, ev);
    MT_REQUIRE(!s.ok());
    MT_CHECK(s.message().find("event larger than 100") != std::string::npos);
}

// A vLLM v1 scrape (names, types and labels as vLLM's /metrics writes them).
const char* kVllmScrape =
    R"(# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 12.0
vllm:num_requests_running{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 4.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
vllm:num_requests_waiting{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.5
vllm:kv_cache_usage_perc{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.25
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1000.0
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 5000.0
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2.0
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 400.0
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 100.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 10.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.5",model_name="meta-llama/Llama-3.1-8B-Instruct"} 30.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="1.0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 40.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 40.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 40.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 10.0
# HELP python_info Python platform information
# TYPE python_info gauge
python_info{implementation="CPython",major="3",minor="12",patchlevel="3",version="3.12.3"} 1.0
)";

MT_TEST(prometheusVllmScrape) {
    auto s = parse_prometheus_text(kVllmScrape);
    MT_REQUIRE_MSG(s.ok(), "%s", s.ok() ? "" : s.message().c_str());
    MT_COMPARE(s->families["vllm:num_requests_running"].type, std::string("gauge"));
    MT_COMPARE(s->families["vllm:time_to_first_token_seconds"].type, std::string("histogram"));
    MT_COMPARE(s->families["vllm:kv_cache_usage_perc"].help,
               std::string("KV-cache usage. 1 means 100 percent usage."));
    MT_COMPARE(s->samples.size(), size_t(18));
    const PromSample& b = s->samples[11];
    MT_COMPARE(b.name, std::string("vllm:time_to_first_token_seconds_bucket"));
    MT_REQUIRE(b.label("le"));
    MT_COMPARE(*b.label("le"), std::string("0.1"));
    MT_COMPARE(*b.label("model_name"), std::string("meta-llama/Llama-3.1-8B-Instruct"));
    MT_COMPARE(b.value, 10.0);

    RemoteEngineMetrics m;
    RemoteMetricsSample a = m.update(*s, 100.0);
    MT_COMPARE(a.server_kind, std::string("vllm"));
    MT_COMPARE(a.running, std::optional<double>(16.0)); // two engines add up
    MT_COMPARE(a.waiting, std::optional<double>(3.0));
    MT_COMPARE(a.kv_usage, std::optional<double>(0.375)); // their mean
    MT_COMPARE(a.preemptions_total, std::optional<double>(2.0));
    MT_COMPARE(a.prefix_cache_hit_rate, std::optional<double>(0.25));
    MT_COMPARE(a.ttft_mean_all_s, std::optional<double>(0.25));
    MT_CHECK(!a.prompt_throughput); // a rate needs two scrapes
    MT_CHECK(!a.ttft_mean_s);

    // One second later: 500 more prompt tokens, 250 more generated, 10 more TTFTs, all in
    // (0.5, 1.0].
    std::string next = kVllmScrape;
    auto replace = [&](const std::string& from, const std::string& to) {
        const size_t at = next.find(from);
        MT_REQUIRE(at != std::string::npos);
        next.replace(at, from.size(), to);
    };
    replace("Instruct\"} 1000.0", "Instruct\"} 1500.0");
    replace("Instruct\"} 5000.0", "Instruct\"} 5250.0");
    replace("le=\"1.0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 40.0",
            "le=\"1.0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 50.0");
    replace("le=\"+Inf\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 40.0",
            "le=\"+Inf\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 50.0");
    replace("_count{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 40.0",
            "_count{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 50.0");
    replace("_sum{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 10.0",
            "_sum{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 17.0");
    auto s2 = parse_prometheus_text(next);
    MT_REQUIRE(s2.ok());
    RemoteMetricsSample c = m.update(*s2, 102.0);
    MT_COMPARE(c.prompt_throughput, std::optional<double>(250.0));
    MT_COMPARE(c.generation_throughput, std::optional<double>(125.0));
    MT_COMPARE(c.ttft_mean_s, std::optional<double>(0.7)); // 7 s over 10 requests
    MT_REQUIRE(c.ttft_p50_s);
    MT_COMPARE(*c.ttft_p50_s, 0.75); // linear inside (0.5, 1.0]
    MT_REQUIRE(c.ttft_p99_s);
    MT_COMPARE(*c.ttft_p99_s, 0.995);

    // A model filter: another model's samples do not count.
    RemoteEngineMetrics other("another-model");
    RemoteMetricsSample o = other.update(*s, 1.0);
    MT_CHECK(!o.running);
    MT_CHECK(!o.kv_usage);
}

MT_TEST(prometheusOlderVllmName) {
    auto s = parse_prometheus_text("# TYPE vllm:gpu_cache_usage_perc gauge\n"
                                   "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.8\n");
    MT_REQUIRE(s.ok());
    RemoteEngineMetrics m;
    RemoteMetricsSample a = m.update(*s, 0);
    MT_COMPARE(a.kv_usage, std::optional<double>(0.8));
    MT_CHECK(!a.running); // not exposed: unavailable, not 0
    MT_CHECK(!a.ttft_mean_all_s);
}

// llama.cpp's server with --metrics (names and types of its /metrics).
const char* kLlamaCppScrape =
    R"(# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 2048
# HELP llamacpp:prompt_seconds_total Prompt process time
# TYPE llamacpp:prompt_seconds_total counter
llamacpp:prompt_seconds_total 1.5
# HELP llamacpp:tokens_predicted_total Number of generation tokens processed.
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 300
# HELP llamacpp:n_decode_total Total number of llama_decode() calls
# TYPE llamacpp:n_decode_total counter
llamacpp:n_decode_total 310
# HELP llamacpp:kv_cache_usage_ratio KV-cache usage. 1 means 100 percent usage.
# TYPE llamacpp:kv_cache_usage_ratio gauge
llamacpp:kv_cache_usage_ratio 0.125
# HELP llamacpp:requests_processing Number of requests processing.
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 2
# HELP llamacpp:requests_deferred Number of requests deferred.
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 1
)";

MT_TEST(prometheusLlamaCppScrape) {
    auto s = parse_prometheus_text(kLlamaCppScrape);
    MT_REQUIRE_MSG(s.ok(), "%s", s.ok() ? "" : s.message().c_str());
    MT_COMPARE(s->samples.size(), size_t(7));
    RemoteEngineMetrics m;
    RemoteMetricsSample a = m.update(*s, 10.0);
    MT_COMPARE(a.server_kind, std::string("llama.cpp"));
    MT_COMPARE(a.running, std::optional<double>(2.0));
    MT_COMPARE(a.waiting, std::optional<double>(1.0));
    MT_COMPARE(a.kv_usage, std::optional<double>(0.125));
    MT_COMPARE(a.prompt_tokens_total, std::optional<double>(2048.0));
    MT_COMPARE(a.generation_tokens_total, std::optional<double>(300.0));
    MT_CHECK(!a.ttft_mean_all_s); // llama.cpp has no TTFT histogram
    MT_CHECK(!a.preemptions_total);
    std::string next = kLlamaCppScrape;
    next.replace(next.find("tokens_predicted_total 300"), 26, "tokens_predicted_total 420");
    auto s2 = parse_prometheus_text(next);
    MT_REQUIRE(s2.ok());
    RemoteMetricsSample b = m.update(*s2, 14.0);
    MT_COMPARE(b.generation_throughput, std::optional<double>(30.0));
    MT_COMPARE(b.prompt_throughput, std::optional<double>(0.0));
    // A restarted server (counters went down): no rate for that interval, not a negative one.
    auto s3 = parse_prometheus_text("llamacpp:tokens_predicted_total 5\n");
    MT_REQUIRE(s3.ok());
    MT_CHECK(!m.update(*s3, 15.0).generation_throughput);
}

MT_TEST(prometheusEscapesAndValues) {
    auto s = parse_prometheus_text(
        "# HELP m_total A \\\\ backslash\\nand a new line\n"
        "# a plain comment\n"
        "m_total{path=\"C:\\\\dir\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\",} 1e3 1700000000000\n"
        "  \n"
        "g NaN\n"
        "h +Inf\n"
        "i -Inf\n"
        "j -0.5\r\n");
    MT_REQUIRE_MSG(s.ok(), "%s", s.ok() ? "" : s.message().c_str());
    MT_COMPARE(s->families["m_total"].help, std::string("A \\ backslash\nand a new line"));
    MT_REQUIRE_COMPARE(s->samples.size(), size_t(5));
    const PromSample& m = s->samples[0];
    MT_COMPARE(*m.label("path"), std::string("C:\\dir"));
    MT_COMPARE(*m.label("quote"), std::string("say \"hi\""));
    MT_COMPARE(*m.label("nl"), std::string("a\nb"));
    MT_COMPARE(m.value, 1000.0);
    MT_COMPARE(m.timestamp_ms, std::optional<int64_t>(1700000000000));
    MT_CHECK(std::isnan(s->samples[1].value));
    MT_CHECK(std::isinf(s->samples[2].value) && s->samples[2].value > 0);
    MT_CHECK(std::isinf(s->samples[3].value) && s->samples[3].value < 0);
    MT_COMPARE(s->samples[4].value, -0.5);

    // Non-finite gauges are unavailable in the figures.
    auto n =
        parse_prometheus_text("vllm:kv_cache_usage_perc NaN\nvllm:num_requests_running +Inf\n");
    MT_REQUIRE(n.ok());
    RemoteEngineMetrics rm;
    RemoteMetricsSample a = rm.update(*n, 0);
    MT_CHECK(!a.kv_usage);
    MT_CHECK(!a.running);
}

MT_TEST(prometheusHostile) {
    struct Bad {
        std::string text, why;
    };
    const std::vector<Bad> bad = {
        {"m 12abc\n", "line 1: m: the value '12abc' is not a number"},
        {"m\n", "is not a number"},
        {"m{a=\"x} 1\n", "unterminated"},
        {"m{a=x} 1\n", "not quoted"},
        {"m{a=\"\\q\"} 1\n", "bad escape"},
        {"m{a=\"1\",a=\"2\"} 1\n", "label a twice"},
        {"m{1a=\"1\"} 1\n", "bad label name"},
        {"m{a=\"1\" 1\n", "not closed"},
        {"9m 1\n", "valid metric name"},
        {"m 1 12.5\n", "timestamp"},
        {"m 1 2 3\n", "junk"},
        {"# TYPE m weird\n", "unknown metric type"},
        {"# TYPE m gauge\n# TYPE m gauge\n", "second # TYPE"},
        {"ok 1\n" + std::string(70000, 'x') + " 1\n", "line 2: longer than"},
    };
    for (const Bad& b : bad) {
        MT_SCOPE("%s", b.why.c_str());
        auto r = parse_prometheus_text(b.text);
        MT_REQUIRE(!r.ok());
        MT_CHECK_MSG(r.message().find(b.why) != std::string::npos, "%s", r.message().c_str());
    }
    std::string many;
    for (int i = 0; i < 101; ++i)
        many += "m{i=\"" + std::to_string(i) + "\"} 1\n";
    PromLimits lim;
    lim.max_samples = 100;
    auto r = parse_prometheus_text(many, lim);
    MT_REQUIRE(!r.ok());
    MT_CHECK(r.message().find("more than 100 samples") != std::string::npos);
    std::string labels = "m{";
    for (int i = 0; i < 65; ++i)
        labels += "l" + std::to_string(i) + "=\"v\",";
    labels += "} 1\n";
    auto l = parse_prometheus_text(labels);
    MT_REQUIRE(!l.ok());
    MT_CHECK(l.message().find("more than 64 labels") != std::string::npos);
    lim = PromLimits{};
    lim.max_bytes = 10;
    MT_CHECK(!parse_prometheus_text("m 1\nm 2\nm 3\n", lim).ok());
}

MT_TEST(histogramQuantile) {
    const HistogramBuckets b = {{0.1, 10}, {0.5, 30}, {1.0, 40}, {INFINITY, 40}};
    for (auto [q, want] : {std::pair{0.25, 0.1}, std::pair{0.5, 0.3}, std::pair{1.0, 1.0}}) {
        MT_SCOPE("q %g", q);
        auto v = histogram_quantile(q, b);
        MT_REQUIRE(v.has_value());
        MT_COMPARE(*v, want);
    }
    const HistogramBuckets over = {{0.1, 0}, {INFINITY, 5}};
    MT_COMPARE(histogram_quantile(0.5, over), std::optional<double>(0.1)); // past the last bound
    MT_CHECK(!histogram_quantile(0.5, {{0.1, 0}, {INFINITY, 0}}));         // no observations
    MT_CHECK(!histogram_quantile(0.5, {{0.1, 3}}));                        // no +Inf bucket
}

MINI_TEST_MAIN()
